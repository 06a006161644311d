/**
 * Helpers shared by the benchmark scripts (bench/intent.ts, bench/kill.ts, bench/inproc.ts): their
 * common options, child processes on 127.0.0.1 and their clean-up, temporary directories, the service
 * in a process of its own, HTTP calls, the PostgreSQL bench database, the fixture order, the agents'
 * limits and medians.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import embeddedMarkets from "../fixtures/markets.json" with { type: "json" };

export const ROOT = resolve(import.meta.dir, "..");
export const ADMIN_TOKEN = "bench-admin-token-0123456789abcdef";

// ------------------------------------------------------------------ options

export const DEFAULT_PG = "postgres://postgres@127.0.0.1:5432";

/** The options every service benchmark takes: --rounds N, --only TARGET (repeatable), --pg URL. */
export interface CommonOptions {
  rounds: number;
  only: string[];
  pg: string;
}

/**
 * Parses `argv` into `opts` (its defaults): the common options, and the benchmark's `own`, each
 * option name to a handler given a function that takes the option's value (a flag does not call it).
 * An unknown option, or one without its value, throws.
 */
export function parseOptions<O extends CommonOptions>(argv: string[], opts: O, own: Record<string, (value: () => string) => void> = {}): O {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--rounds") opts.rounds = Number(value());
    else if (a === "--only") opts.only.push(value());
    else if (a === "--pg") opts.pg = value().replace(/\/+$/, "");
    else if (Object.hasOwn(own, a)) own[a](value);
    else throw new Error(`unknown option ${a}`);
  }
  return opts;
}

/** Whether the target `name` runs: every one when no --only was given. */
export const wanted = (o: CommonOptions, name: string) => o.only.length === 0 || o.only.includes(name);

// ------------------------------------------------------------------ processes and temporary directories

/** Child processes still running: stopped at the end (stopAll), killed on failure or a signal (runMain). */
export const children = new Set<Subprocess>();
const tempDirs: string[] = [];

/** A new temporary directory, removed by removeTempDirs(). */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/**
 * Spawns `cmd` in ROOT and forwards its stderr, line by line, prefixed with `[what]` (cut to
 * `maxLineChars` when given), so a failure is visible. Its stdout (the service's JSON log) is dropped,
 * or written to `$BENCH_STDOUT_DIR/<what>.log` when that is set (to read a bench's logs). The child leads a process group of its own:
 * `bun run venue-sim` runs the simulator as a grandchild, and the whole group is signalled on the
 * way out (see signal()).
 */
export function spawnLogged(cmd: string[], env: Record<string, string>, what: string, maxLineChars?: number, cwd = ROOT): Subprocess {
  const child = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdout: process.env.BENCH_STDOUT_DIR ? Bun.file(`${process.env.BENCH_STDOUT_DIR}/${what}.log`) : "ignore", stderr: "pipe", detached: true });
  children.add(child);
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr as ReadableStream<Uint8Array>) {
      for (const line of decoder.decode(chunk).split("\n")) if (line.trim()) console.error(`[${what}] ${line.slice(0, maxLineChars)}`);
    }
  })();
  return child;
}

/** Waits until GET `${base}${path}` answers 2xx; fails early when the child exits. */
export async function waitHealthy(
  base: string,
  child: Subprocess,
  what: string,
  { path = "/healthz", timeoutMs = 60_000 }: { path?: string; timeoutMs?: number } = {},
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode} before it answered ${path}`);
    try {
      if ((await fetch(`${base}${path}`)).ok) return;
    } catch {
      // not listening yet
    }
    await Bun.sleep(100);
  }
  throw new Error(`${what} did not answer ${path} within ${timeoutMs} ms`);
}

/** Signals the child's whole process group (it leads one: spawned detached), or the child alone. */
function signal(child: Subprocess, sig: "SIGTERM" | "SIGKILL"): void {
  try {
    process.kill(-child.pid, sig);
  } catch {
    try {
      child.kill(sig);
    } catch {
      // already gone
    }
  }
}

/** SIGTERM, then SIGKILL when the child has not exited after `graceMs`. */
export async function stopChild(child: Subprocess, graceMs = 10_000): Promise<void> {
  if (child.exitCode === null) {
    signal(child, "SIGTERM");
    const done = await Promise.race([child.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
    if (!done) signal(child, "SIGKILL");
  }
  children.delete(child);
}

export async function stopAll(): Promise<void> {
  for (const c of [...children]) await stopChild(c);
}

function killAll(): void {
  for (const c of [...children]) signal(c, "SIGKILL");
}

/**
 * Runs a benchmark's main and exits: 0 when it ran, 1 when it failed (the error printed). On a
 * failure, SIGINT or SIGTERM every child still running is killed.
 */
export async function runMain(main: () => Promise<void>): Promise<never> {
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.on(sig, () => {
      killAll();
      process.exit(130);
    });
  }
  try {
    await main();
    process.exit(0);
  } catch (error) {
    console.error(`benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : error}`);
    killAll();
    process.exit(1);
  }
}

// ------------------------------------------------------------------ the service

export type DatabaseKind = "pglite" | "postgres";

/**
 * Starts the service in a process of its own (`bun run src/main.ts` in `root`) on a free port, a new
 * DATA_DIR, PGlite or the PostgreSQL database `databaseUrl`, with `env` on top, waits until it is
 * healthy and creates an organization: answers its base URL, process and API key.
 */
export async function startServiceProcess(o: {
  kind: DatabaseKind;
  /** The PostgreSQL database (kind postgres). */
  databaseUrl?: string;
  env?: Record<string, string>;
  /** The prefix of its stderr lines (default the kind). */
  name?: string;
  /** The checkout it runs from (default this one). */
  root?: string;
  /** Options to bun before `run` (e.g. --cpu-prof). */
  bunArgs?: string[];
  maxLineChars?: number;
  orgName: string;
}): Promise<{ base: string; child: Subprocess; key: string }> {
  const port = await freePort();
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: tempDir(`bench-${o.kind}-`),
    ADMIN_TOKEN,
    LOG_LEVEL: "warn",
    BUILDER_CODE: `0x${"ab".repeat(32)}`,
    DATABASE_URL: o.kind === "postgres" ? o.databaseUrl! : "",
    // As `npm start` and the container image run it (docs/decisions.md, "The allocator keeps freed memory").
    MIMALLOC_PURGE_DELAY: process.env.MIMALLOC_PURGE_DELAY ?? "-1",
    ...o.env,
  };
  const child = spawnLogged(["bun", ...(o.bunArgs ?? []), "run", "src/main.ts"], env, o.name ?? o.kind, o.maxLineChars, o.root ?? ROOT);
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base, child, `service on ${o.kind}`);
  const org = await call(base, "POST", "/v1/orgs", { authorization: `Bearer ${ADMIN_TOKEN}` }, { name: o.orgName });
  expectStatus(org, 201, "POST /v1/orgs");
  return { base, child, key: org.body.api_key.key };
}

// ------------------------------------------------------------------ HTTP

export async function call(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  return { status: res.status, body: json, text };
}

export function expectStatus(r: { status: number; text: string }, status: number, what: string): void {
  if (r.status !== status) throw new Error(`${what} answered ${r.status}, expected ${status}: ${r.text.slice(0, 500)}`);
}

// ------------------------------------------------------------------ the order

/**
 * A market and an order that pass all eight checks against the fixture book: a resting buy of 5 USDC
 * one tick under the best bid of the first plain 0.01-tick market (not marketable, in the price
 * band, on the tick, at least the market's minimum size).
 */
export function pickIntent() {
  const market = (embeddedMarkets as any[]).find((m) => m.active && !m.closed && m.accepting_orders && !m.neg_risk && m.tick_size === "0.01");
  if (!market) throw new Error("no suitable market in fixtures/markets.json");
  const token = market.tokens[0];
  const bestBid = Number(token.book.bids[0].price);
  const price = Math.round((bestBid - 0.01) * 100) / 100;
  // floor2(5 / price) shares must reach the market's min_order_size.
  if (Math.floor((5 / price) * 100) / 100 < Number(market.min_order_size)) throw new Error("the bench order is below the market's minimum size");
  return { market_id: token.token_id as string, side: "buy" as const, size_usdc: 5, price, question: market.question as string };
}

/**
 * The limits the benchmarks give their agents: no order too large, no daily or capital cap, and the
 * runaway guards opened wide, as the test apps do (the benches repeat one intent per agent thousands
 * of times a second; with the defaults every intent after the first was a 422).
 */
export const BENCH_LIMITS = {
  min_order_usdc: 1,
  max_order_usdc: 1_000_000,
  daily_volume_usdc: 1_000_000_000,
  capital_usdc: 1_000_000_000,
  max_market_exposure_pct: 1,
  kelly_fallback_pct: 1,
  max_depth_share: 1,
  max_slippage: 1,
  duplicate_window_s: 0,
  max_orders_per_minute: 100_000,
  max_open_orders: 100_000,
};

// ------------------------------------------------------------------ PostgreSQL bench database

async function withAdminSql<T>(pgUrl: string, fn: (sql: any) => Promise<T>): Promise<T> {
  const { default: postgres } = await import("postgres");
  const sql = postgres(`${pgUrl}/postgres`, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** (Re)creates the database `name` (an identifier, not quoted) on the server at `pgUrl`. */
export async function createBenchDb(pgUrl: string, name: string): Promise<void> {
  await withAdminSql(pgUrl, async (sql) => {
    await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await sql.unsafe(`CREATE DATABASE ${name}`);
  });
}

/**
 * Creates the bench database `name` as createBenchDb does; when the server at `pgUrl` cannot be
 * reached, says that the PostgreSQL run is skipped and answers false.
 */
export async function tryCreateBenchDb(pgUrl: string, name: string): Promise<boolean> {
  try {
    await createBenchDb(pgUrl, name);
    return true;
  } catch (e) {
    console.log(`PostgreSQL at ${pgUrl} is not available (${e instanceof Error ? e.message : e}): skipping the PostgreSQL run`);
    return false;
  }
}

/** Drops the database `name`; a failure is printed, not thrown. */
export async function dropBenchDb(pgUrl: string, name: string): Promise<void> {
  await withAdminSql(pgUrl, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch((e) =>
    console.error(`could not drop ${name}: ${e instanceof Error ? e.message : e}`),
  );
}

// ------------------------------------------------------------------ report

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return Number.NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * CPU seconds used so far by the PostgreSQL processes that serve the bench database: its backends
 * (their command line names the database) and the server's shared writers (WAL writer, checkpointer,
 * background writer), which work for whatever commits. Other databases' backends are left out.
 */
export function postgresCpuSeconds(database: string): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return Number.NaN;
  }
  for (const pid of entries) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (!stat.includes("(postgres)")) continue;
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmd.includes(` ${database} `) && !/walwriter|checkpointer|background writer/.test(cmd)) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // the process ended between the listing and the read
    }
  }
  return total;
}
