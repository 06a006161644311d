/**
 * First run, through the real start-up (src/main.ts): on an empty database the service creates a
 * default organization and its first API key, prints the key once with the dashboard URL (on the
 * console, never in the JSON log), and writes it to DATA_DIR/initial-api-key with mode 0600. The
 * key works. A second start on the same database prints nothing new and leaves the file alone.
 * On embedded PGlite and, when TEST_DATABASE_URL is set, on a fresh PostgreSQL database.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import postgres from "postgres";
import { copyOfTemplate, postgresUrl } from "../support/databases.ts";

const MAIN = resolve(import.meta.dir, "../../src/main.ts");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Run {
  stdout: string[];
  stderr: string;
  port: number;
  /** GET path with the key, while the service runs. */
  status: number | null;
}

/** Starts the service, waits for "listening", calls GET /v1/agents with `key()` if given, stops it. */
async function startOnce(env: Record<string, string>, key?: () => string | null): Promise<Run> {
  const proc = Bun.spawn(["bun", MAIN], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderrText = new Response(proc.stderr).text();
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  const stdout: string[] = [];
  let buffered = "";
  let port = 0;
  const deadline = Date.now() + 30_000;
  while (!port) {
    if (Date.now() > deadline) throw new Error(`the service did not start: ${stdout.join("\n")}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`the service exited: ${stdout.join("\n")}\n${await stderrText}`);
    buffered += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      stdout.push(line);
      const j = JSON.parse(line);
      if (j.msg === "listening") port = Number(new URL(j.url).port);
    }
  }
  const drain = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      stdout.push(...decoder.decode(value).split("\n").filter(Boolean));
    }
  })();
  let status: number | null = null;
  const k = key?.();
  if (k) status = (await fetch(`http://127.0.0.1:${port}/v1/agents`, { headers: { "x-api-key": k } })).status;
  proc.kill("SIGTERM");
  expect(await proc.exited).toBe(0);
  await drain;
  return { stdout, stderr: await stderrText, port, status };
}

const KEY_RE = /API key:\s+(bk_[A-Za-z0-9_-]{43})/;

async function firstRunTwice(env: Record<string, string>, dataDir: string) {
  let printed: string | null = null;
  // The key is only known from the banner, which arrives on stderr: read it from the file meanwhile.
  const fileKey = () => (existsSync(join(dataDir, "initial-api-key")) ? readFileSync(join(dataDir, "initial-api-key"), "utf8").trim() : null);
  const first = await startOnce(env, fileKey);
  const match = KEY_RE.exec(first.stderr);
  expect(match).not.toBeNull();
  printed = match![1];
  expect(first.stderr).toContain(`http://127.0.0.1:${first.port}/dashboard`);
  expect(first.stderr.match(/bk_/g)?.length).toBe(1);
  // The file holds the same key, owner-only.
  const path = join(dataDir, "initial-api-key");
  expect(readFileSync(path, "utf8").trim()).toBe(printed);
  expect(statSync(path).mode & 0o777).toBe(0o600);
  // The key works, and it never reached the JSON log.
  expect(first.status).toBe(200);
  expect(first.stdout.some((l) => l.includes(printed!))).toBe(false);
  expect(first.stdout.some((l) => JSON.parse(l).msg === "first start: default organization created")).toBe(true);

  const before = statSync(path).mtimeMs;
  const second = await startOnce(env, () => printed);
  expect(second.stderr).not.toContain("bk_");
  expect(second.stderr).not.toContain("First start");
  expect(second.stdout.some((l) => JSON.parse(l).msg === "first start: default organization created")).toBe(false);
  expect(statSync(path).mtimeMs).toBe(before);
  expect(second.status).toBe(200);
  return printed;
}

describe("first run [pglite]", () => {
  test("an empty database gets a default organization and its first key, printed and written once", async () => {
    const dataDir = await copyOfTemplate();
    dirs.push(dataDir);
    await firstRunTwice({ DATA_DIR: dataDir }, dataDir);
  }, 90_000);
});

if (postgresUrl) {
  describe("first run [postgres]", () => {
    test("an empty database gets a default organization and its first key, printed and written once", async () => {
      // A database of its own: the shared test database holds other suites' organizations.
      const url = new URL(postgresUrl!);
      const name = `${decodeURIComponent(url.pathname.slice(1))}_first_run`;
      const admin = new URL(postgresUrl!);
      admin.pathname = "/postgres";
      const sql = postgres(admin.toString(), { max: 1, onnotice() {} });
      await sql.unsafe(`drop database if exists "${name}"`);
      await sql.unsafe(`create database "${name}"`);
      const own = new URL(postgresUrl!);
      own.pathname = `/${name}`;
      const dataDir = mkdtempSync(join(tmpdir(), "first-run-pg-"));
      dirs.push(dataDir);
      try {
        await firstRunTwice({ DATA_DIR: dataDir, DATABASE_URL: own.toString() }, dataDir);
      } finally {
        await sql.unsafe(`drop database if exists "${name}" with (force)`);
        await sql.end();
      }
    }, 90_000);
  });
}
