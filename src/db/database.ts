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

/**
 * Runs one statement as RunStatement does and answers its rows, each its values in column order. The
 * statement's columns must all be `text` (cast them: `x::text`), so both databases answer the same
 * strings (or null); see Database.query.
 */
export type QueryStatement = (text: string, params: (string | null)[], opts?: QueryOptions) => Promise<(string | null)[][]>;

export interface QueryOptions {
  /**
   * The statement finds its rows by an index (a primary key), in tables that grow. PGlite never
   * analyzes its tables (no autovacuum): a prepared statement's generic plan made while a table was
   * small scans all of it, or an index holding an entry for every row ever changed there (nor does it
   * vacuum), for good. On PGlite the statement's one plan is therefore made, and kept, with sequential
   * scans off (and its generic plan forced: each call sets both for its own implicit transaction
   * only). A lookup by key equality alone needs none of this (its plan is the key's index however
   * small the table). On PostgreSQL every statement of `run` and `query` is planned so, whatever this
   * option says: their sessions have both settings (HOT_SESSION).
   */
  byIndex?: boolean;
}

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
  /**
   * `run` with the statement's rows: for the hot statements that read or write on every delegated
   * placement (its sealed credentials, its status write), which drizzle made several times dearer in
   * process CPU (a query built and mapped per call; on PGlite parsed and planned on every call). On
   * PostgreSQL on `run`'s connections.
   */
  query: QueryStatement;
  ping(): Promise<boolean>;
  /** LISTEN on `channel` (its own connection on PostgreSQL); resolves with the function that stops listening. */
  listen?(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * PostgreSQL: takes the session-level advisory lock named `name` on a connection reserved for this
   * process's life (released when the database closes, or when the process dies and its session ends);
   * false when another session holds it. Absent on PGlite (one process: its data-directory lock).
   */
  lockForLife?(name: string): Promise<boolean>;
  /**
   * PostgreSQL: whether the locks lockForLife took are still this process's. The reserved session can
   * end under it (the server restarted, the connection was cut, an administrator ended it) and its
   * locks go with it: `held` (the same session answered), `retaken` (a new session took every one of
   * them again), `lost` (another session holds one now: a second process under the same name),
   * `unreachable` (no answer: asked again at the next check).
   */
  checkLifeLocks?(): Promise<"held" | "retaken" | "lost" | "unreachable">;
  close(): Promise<void>;
}

export type OpenOptions =
  /**
   * `idleInTransactionMs`: PostgreSQL ends a session idle inside a transaction for that long (a paused
   * or cut-off process cannot hold a lease row's lock past its lease; see src/db/agent-leases.ts).
   */
  | {
      kind: "postgres";
      url: string;
      max?: number;
      idleInTransactionMs?: number;
      /** The sessions' `application_name` (pg_stat_activity names the instance each session is of). */
      applicationName?: string;
    }
  | { kind: "pglite"; dataDir: string }
  /** PGlite in a directory that is used as is (tests copy a migrated template there). */
  | { kind: "pglite-dir"; dir: string };

export async function openDatabase(opts: OpenOptions, migrate = true): Promise<Database> {
  const database =
    opts.kind === "postgres"
      ? await openPostgres(opts.url, opts.max ?? 10, opts.idleInTransactionMs, opts.applicationName)
      : await openPglite(opts.kind === "pglite" ? join(opts.dataDir, "pg") : opts.dir);
  if (migrate) await runMigrations(database.db);
  return database;
}

async function openPostgres(url: string, max: number, idleInTransactionMs?: number, applicationName?: string): Promise<Database> {
  const { default: postgres } = await import("postgres");
  const { drizzle } = await import("drizzle-orm/postgres-js");
  const appName: Record<string, string> = applicationName ? { application_name: applicationName.slice(0, 63) } : {};
  const client = postgres(url, {
    max,
    onnotice: () => {},
    prepare: true,
    connect_timeout: 10,
    connection: { ...appName, ...(idleInTransactionMs ? { idle_in_transaction_session_timeout: idleInTransactionMs } : {}) },
  });
  const db = drizzle({ client, schema }) as unknown as Db;
  // The hot statement (the group-commit insert) goes through Bun's built-in client on a small
  // pool of its own: measured on an 11-order batch, it spends about half the service CPU per
  // statement that postgres-js does on Bun (150 against 300 µs; postgres-js's node:net writes
  // cost most of it). Everything else stays on drizzle and postgres-js.
  // The database is named explicitly: Bun lets PGDATABASE override the one in a URL, postgres-js does not.
  const database = decodeURIComponent(new URL(url).pathname.slice(1));
  const hot = new SQL(url, { max: HOT_POOL_SIZE, prepare: true, connectionTimeout: 10, ...(database ? { database } : {}), connection: { ...appName, ...HOT_SESSION } });
  /**
   * The session holding this process's session-level locks (lockForLife): a client of its own with one
   * connection, never retired for its age (postgres-js's max_lifetime would end the session, and the
   * locks with it). A connection that ended is opened again by the next query (checkLifeLocks). Not a
   * connection reserved from `client`: postgres-js throws out of its event loop when a reserved
   * connection whose session was ended is used again.
   */
  let lifeSession: ReturnType<typeof postgres> | null = null;
  const openLifeSession = () => postgres(url, { max: 1, max_lifetime: null, idle_timeout: 0, onnotice: () => {}, connect_timeout: 10, connection: { ...appName } });
  /** The names locked for life, and the backend (pg_backend_pid) of the session that holds them. */
  const lifeLocks = new Set<string>();
  let lifeBackend: number | null = null;
  const tryLock = async (session: NonNullable<typeof lifeSession>, name: string) => {
    // A 64-bit key of the name (hashtextextended), in the single-key space: apart from the agents'
    // two-key advisory locks (agent_lease_fence), and no collision between names to speak of.
    const [row] = await session`select pg_try_advisory_lock(hashtextextended(${name}, 0)) as got, pg_backend_pid() as pid`;
    return { got: row?.got === true, pid: Number(row?.pid) };
  };
  return {
    kind: "postgres",
    db,
    run: async (text, params) => {
      await hot.unsafe(text, params);
    },
    query: async (text, params) => (await hot.unsafe(text, params).values()) as (string | null)[][],
    ping: () => ping(db),
    listen: async (channel, onPayload) => {
      const { unlisten } = await client.listen(channel, onPayload);
      return unlisten;
    },
    lockForLife: async (name) => {
      lifeSession ??= openLifeSession();
      if (lifeLocks.has(name)) return true;
      const { got, pid } = await tryLock(lifeSession, name);
      if (got) {
        lifeLocks.add(name);
        lifeBackend = pid;
      }
      return got;
    },
    checkLifeLocks: async () => {
      if (!lifeSession || !lifeLocks.size) return "held";
      let pid: number;
      try {
        // A connection that ended is opened again for this query: a new backend pid means the old
        // session, and its locks, are gone.
        const [row] = await lifeSession`select pg_backend_pid() as pid`;
        pid = Number(row?.pid);
      } catch {
        return "unreachable";
      }
      if (pid === lifeBackend) return "held";
      try {
        // Taking a lock this session already holds again only counts it twice (they all go with the session).
        for (const name of lifeLocks) if (!(await tryLock(lifeSession, name)).got) return "lost";
      } catch {
        return "unreachable";
      }
      lifeBackend = pid;
      return "retaken";
    },
    close: async () => {
      await Promise.allSettled([client.end({ timeout: 5 }), hot.close({ timeout: 5 }), lifeSession?.end({ timeout: 5 })]);
    },
  };
}

/**
 * Connections of the hot-statement pool (`run` and `query`): the approved-order batches and the
 * delegated placements' status batches that commit at once (one each, see OrderRepository's
 * maxInFlight), and beside them the placements' credential reads. A batch of rejections, rarer, takes
 * a free one.
 */
const HOT_POOL_SIZE = 4;

/**
 * The settings of the hot pool's sessions. Its statements find their rows by a key's index (or insert
 * them), and each is one prepared statement per connection: its plan is made once, generic, without
 * sequential scans. A prepared statement's first five runs are otherwise planned for their values
 * each (custom plans), and after them too whenever a custom plan looks cheaper than the generic one,
 * as `agent_lease_fence`'s own statements do for a batch of one or a few agents (its planning was
 * most of its CPU); and a generic plan made while a table was small scans all of it for as long as
 * the connection lives, unless an ANALYZE of the table (autovacuum's, when it runs) plans it again.
 * The same as PGlite's QueryOptions.byIndex. See docs/benchmarks.md, "PostgreSQL's CPU per delegated intent".
 */
const HOT_SESSION = { plan_cache_mode: "force_generic_plan", enable_seqscan: "off" };

async function openPglite(dir: string): Promise<Database> {
  const { PGlite, protocol } = await import("@electric-sql/pglite");
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
  // A new WAL segment is created without first writing 16 MB of zeroes into it. The zeroes reserve
  // the disk space before a sync can need it; PGlite never syncs (docs/decisions.md, "What 'durable'
  // means on the embedded database"), and writing them doubled the bytes each intent wrote
  // (docs/benchmarks.md). The setting lasts for PGlite's one session.
  await client.exec("set wal_init_zero = off");
  const db = drizzle({ client, schema }) as unknown as Db;
  return {
    kind: "pglite",
    db,
    ...pgliteRunners(client, protocol.serialize),
    ping: () => ping(db),
    listen: async (channel, onPayload) => {
      const stop = await client.listen(channel, onPayload);
      return async () => {
        if (!client.closed) await stop();
      };
    },
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
 * The hot statement on PGlite, parameterised through PGlite's own wire-protocol serializer: the
 * statement is parsed and planned once as a named prepared statement in PGlite's single session
 * (PGlite's `query` parses, describes and plans the text again on every call, in six protocol
 * round trips), then each call is one Bind (its parameters as text values), Execute and Sync. It
 * runs under PGlite's transaction and query locks, like `query` and `exec`. A NUL in a value is
 * refused by the server with 22021, as on PostgreSQL.
 */
function pgliteRunners(client: PGliteClient, serialize: PgliteSerialize): { run: RunStatement; query: QueryStatement } {
  const prepared = new Map<string, string>();
  let made = 0;
  const concat = (parts: Uint8Array[]) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.byteLength;
    }
    return out;
  };
  // QueryOptions.byIndex: both settings for this call's implicit transaction only (set_config's
  // is_local: they end with it, at Sync, whether it commits or fails).
  const BY_INDEX = concat([
    serialize.parse({ text: "select set_config('enable_seqscan', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true)" }),
    serialize.bind({}),
    serialize.execute({}),
  ]);
  const once = async (text: string, params: (string | null)[], byIndex?: boolean) => {
    let name = prepared.get(text);
    const fresh = name === undefined;
    if (name === undefined) name = `brokerage_stmt_${++made}`;
    const bindExecute = [serialize.bind({ statement: name, values: params }), serialize.execute({})];
    // A first call that fails may have failed in its Parse: its name stays unused, the next call takes a new one.
    const statement = fresh ? [serialize.parse({ name, text }), ...bindExecute] : bindExecute;
    // The messages up to Sync are one implicit transaction: byIndex's settings last for it.
    const result = await client.execProtocol(concat(byIndex ? [BY_INDEX, ...statement, serialize.sync()] : [...statement, serialize.sync()]));
    if (fresh) prepared.set(text, name);
    return result;
  };
  // The same two locks as PGlite's own `query` and `exec`: the transaction lock first (a transaction
  // holds it from BEGIN to COMMIT, so the statement never runs inside another caller's open
  // transaction and never shares its rollback), then the query lock.
  const exclusive = (text: string, params: (string | null)[], byIndex?: boolean) =>
    client._runExclusiveTransaction(() =>
      client.runExclusive(async () => {
        try {
          return await once(text, params, byIndex);
        } catch (error) {
          // The session lost its prepared statements (it never does unless someone DEALLOCATEs): prepare again, once.
          if ((error as { code?: string }).code !== "26000") throw error;
          prepared.delete(text);
          return once(text, params, byIndex);
        }
      }),
    );
  return {
    run: async (text, params) => {
      await exclusive(text, params);
    },
    // The rows are the DataRow messages' fields: text, as the statement's columns are.
    query: async (text, params, opts) => {
      const rows: (string | null)[][] = [];
      // With byIndex the settings' own row comes first, up to its CommandComplete.
      let settings = opts?.byIndex === true;
      for (const m of (await exclusive(text, params, opts?.byIndex)).messages) {
        if (settings) settings = m.name !== "commandComplete";
        else if (m.name === "dataRow") rows.push((m as unknown as { fields: (string | null)[] }).fields);
      }
      return rows;
    },
  };
}

type PGliteClient = {
  execProtocol(message: Uint8Array): Promise<{ messages: { name: string }[] }>;
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
  _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T>;
};
type PgliteSerialize = typeof import("@electric-sql/pglite").protocol.serialize;

async function ping(db: Db): Promise<boolean> {
  try {
    await db.execute(sql`select 1`);
    return true;
  } catch {
    return false;
  }
}
