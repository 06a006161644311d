/**
 * Opens the database: embedded PGlite under DATA_DIR/pg by default, or
 * PostgreSQL through postgres-js when a URL is given. Both are driven through
 * the same drizzle API, and migrations run on open. On PostgreSQL the one hot
 * statement (`run`) uses Bun's built-in SQL client instead.
 */
import { SQL } from "bun";
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import * as schema from "./schema.ts";
import { acquireDataDirLock } from "./data-dir-lock.ts";
import { runMigrations } from "./migrate.ts";

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/** Runs one statement with positional text parameters ($1, $2, …); see Database.run. */
export type RunStatement = (text: string, params: (string | null)[]) => Promise<void>;

export interface Database {
  readonly kind: "pglite" | "postgres";
  readonly db: Db;
  /**
   * Runs one statement outside drizzle, for hot statements whose text never
   * changes. On PostgreSQL it runs on Bun's SQL client as a named prepared
   * statement: parsed and planned once per connection, then one round trip per
   * call (drizzle's own queries are unnamed: a describe round trip and a fresh
   * parse and plan on every call).
   */
  run: RunStatement;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export type OpenOptions =
  | { kind: "postgres"; url: string; max?: number }
  | { kind: "pglite"; dataDir: string }
  /** PGlite in a directory that is used as is (tests copy a migrated template there). */
  | { kind: "pglite-dir"; dir: string };

export async function openDatabase(opts: OpenOptions, migrate = true): Promise<Database> {
  const database = opts.kind === "postgres" ? await openPostgres(opts.url, opts.max ?? 10) : await openPglite(opts.kind === "pglite" ? join(opts.dataDir, "pg") : opts.dir);
  if (migrate) await runMigrations(database.db);
  return database;
}

async function openPostgres(url: string, max: number): Promise<Database> {
  const { default: postgres } = await import("postgres");
  const { drizzle } = await import("drizzle-orm/postgres-js");
  const client = postgres(url, { max, onnotice: () => {}, prepare: true, connect_timeout: 10 });
  const db = drizzle({ client, schema }) as unknown as Db;
  // The hot statement (the group-commit insert) goes through Bun's built-in client on a small
  // pool of its own: measured on an 11-order batch, it spends about half the service CPU per
  // statement that postgres-js does on Bun (150 against 300 µs; postgres-js's node:net writes
  // cost most of it). Everything else stays on drizzle and postgres-js.
  // The database is named explicitly: Bun lets PGDATABASE override the one in a URL, postgres-js does not.
  const database = decodeURIComponent(new URL(url).pathname.slice(1));
  const hot = new SQL(url, { max: HOT_POOL_SIZE, prepare: true, connectionTimeout: 10, ...(database ? { database } : {}) });
  return {
    kind: "postgres",
    db,
    run: async (text, params) => {
      await hot.unsafe(text, params);
    },
    ping: () => ping(db),
    close: async () => {
      await Promise.allSettled([client.end({ timeout: 5 }), hot.close({ timeout: 5 })]);
    },
  };
}

/**
 * Connections of the hot-statement pool: the approved-order batches that commit at once (see
 * OrderRepository's maxInFlight). A batch of rejections, rarer, waits for a free one.
 */
const HOT_POOL_SIZE = 2;

async function openPglite(dir: string): Promise<Database> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { drizzle } = await import("drizzle-orm/pglite");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // One process at a time on the directory (see data-dir-lock.ts); released when closed.
  const lock = acquireDataDirLock(dir);
  const { pgliteAssets } = await import("./pglite-assets.ts");
  let client: Awaited<ReturnType<typeof PGlite.create>>;
  try {
    client = await PGlite.create(dir, await pgliteAssets());
  } catch (error) {
    lock.release();
    throw error;
  }
  const db = drizzle({ client, schema }) as unknown as Db;
  return {
    kind: "pglite",
    db,
    run: pgliteRunner(client),
    ping: () => ping(db),
    close: async () => {
      try {
        if (!client.closed) await client.close();
      } finally {
        lock.release();
      }
    },
  };
}

/**
 * PGlite re-parses and re-plans every parameterized query, and each call has a
 * fixed cost of its own, so a hot statement is PREPAREd once in its single
 * session and then run with EXECUTE, its text parameters as escaped E'' literals
 * (backslashes and quotes doubled, so the text arrives exactly as given).
 */
function pgliteRunner(client: { exec(sql: string): Promise<unknown> }): RunStatement {
  const prepared = new Map<string, Promise<string>>();
  const prepare = (text: string): Promise<string> => {
    let name = prepared.get(text);
    if (!name) {
      const n = `brokerage_stmt_${prepared.size + 1}`;
      name = client.exec(`prepare ${n} as ${text}`).then(() => n);
      name.catch(() => prepared.delete(text));
      prepared.set(text, name);
    }
    return name;
  };
  // A NUL goes as the escape \x00, which the server refuses with the SQLSTATE it gives for a NUL
  // in a parameter (22021), instead of ending the statement's text early.
  const literal = (v: string | null) =>
    v === null ? "NULL" : `E'${v.replaceAll("\\", "\\\\").replaceAll("'", "''").replaceAll("\u0000", "\\x00")}'`;
  return async (text, params) => {
    const args = params.map(literal).join(", ");
    try {
      await client.exec(`execute ${await prepare(text)}(${args})`);
    } catch (error) {
      // The session lost its prepared statements (it never does unless someone DEALLOCATEs): prepare again, once.
      if ((error as { code?: string }).code !== "26000") throw error;
      prepared.delete(text);
      await client.exec(`execute ${await prepare(text)}(${args})`);
    }
  };
}

async function ping(db: Db): Promise<boolean> {
  try {
    await db.execute(sql`select 1`);
    return true;
  } catch {
    return false;
  }
}
