/**
 * Opens the database: embedded PGlite under DATA_DIR/pg by default, or
 * PostgreSQL through postgres-js when a URL is given. Both are driven through
 * the same drizzle API, and migrations run on open.
 */
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import * as schema from "./schema.ts";
import { runMigrations } from "./migrate.ts";

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/** Runs one statement with positional text parameters ($1, $2, …); see Database.run. */
export type RunStatement = (text: string, params: string[]) => Promise<void>;

export interface Database {
  readonly kind: "pglite" | "postgres";
  readonly db: Db;
  /**
   * Runs one statement outside drizzle, for hot statements whose text never
   * changes. On PostgreSQL it is a named prepared statement: parsed and planned
   * once per connection, then one round trip per call (drizzle's own queries
   * are unnamed: a describe round trip and a fresh parse and plan on every call).
   */
  run?: RunStatement;
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
  return {
    kind: "postgres",
    db,
    run: async (text, params) => {
      await client.unsafe(text, params, { prepare: true });
    },
    ping: () => ping(db),
    close: () => client.end({ timeout: 5 }),
  };
}

async function openPglite(dir: string): Promise<Database> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { drizzle } = await import("drizzle-orm/pglite");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { pgliteAssets } = await import("./pglite-assets.ts");
  const client = await PGlite.create(dir, await pgliteAssets());
  const db = drizzle({ client, schema }) as unknown as Db;
  return {
    kind: "pglite",
    db,
    run: async (text, params) => {
      await client.query(text, params);
    },
    ping: () => ping(db),
    close: async () => {
      if (!client.closed) await client.close();
    },
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
