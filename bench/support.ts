/**
 * Helpers shared by the benchmark scripts (bench/intent.ts, bench/kill.ts): child processes on
 * 127.0.0.1 and their clean-up, temporary directories, HTTP calls, the PostgreSQL bench database,
 * the fixture order and medians.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import embeddedMarkets from "../fixtures/markets.json" with { type: "json" };

export const ROOT = resolve(import.meta.dir, "..");
export const ADMIN_TOKEN = "bench-admin-token-0123456789abcdef";

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
 * `maxLineChars` when given), so a failure is visible. The child leads a process group of its own:
 * `bun run venue-sim` runs the simulator as a grandchild, and the whole group is signalled on the
 * way out (see signal()).
 */
export function spawnLogged(cmd: string[], env: Record<string, string>, what: string, maxLineChars?: number, cwd = ROOT): Subprocess {
  const child = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdout: "ignore", stderr: "pipe", detached: true });
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
