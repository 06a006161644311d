/**
 * Review 2: configuration values that pass loadConfig's patterns but are not usable. CONTRACT 1 /
 * README: "a bad value stops the start-up with a message naming the variable".
 *  - VENUE_URL=http://[bad matches ^https?://\S+$ but is no URL: the service starts and listens,
 *    and every venue call then fails (markets 503, intents 503) — it never stops.
 *  - DATABASE_URL=postgres://%zz passes the pattern; start-up dies in postgres-js with "URIError: URI
 *    error" and a stack trace, never naming DATABASE_URL.
 *  - PAPER_MARKETS=<missing file> dies with an uncaught MarketsFileError and a stack trace, naming the
 *    file but not the variable.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.ts";

const ROOT = resolve(import.meta.dir, "../..");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function expectConfigError(env: Record<string, string>, variable: string) {
  let error: unknown = null;
  try {
    loadConfig(env);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).toContain(variable);
}

/** Starts src/main.ts with `env`; answers its exit code (null if still running after `ms`) and stderr. */
async function start(env: Record<string, string>, ms = 15_000): Promise<{ code: number | null; out: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "review2-config-"));
  dirs.push(dataDir);
  const proc = Bun.spawn(["bun", "run", "src/main.ts"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    proc.kill();
  }, ms);
  const code = await proc.exited;
  clearTimeout(timer);
  const out = (await new Response(proc.stderr).text()) + (await new Response(proc.stdout).text());
  return { code: killed ? null : code, out };
}

describe("configuration validation", () => {
  test("loadConfig refuses VENUE_URL=http://[bad (not a URL) naming VENUE_URL", () => {
    expectConfigError({ VENUE: "clob", VENUE_URL: "http://[bad" }, "VENUE_URL");
  });

  test("loadConfig refuses DATABASE_URL=postgres://%zz (not a URL) naming DATABASE_URL", () => {
    expectConfigError({ DATABASE_URL: "postgres://%zz" }, "DATABASE_URL");
  });

  test("start-up with VENUE=clob VENUE_URL=http://[bad stops with a message naming VENUE_URL", async () => {
    const { code, out } = await start({ VENUE: "clob", VENUE_URL: "http://[bad" }, 12_000);
    // null: still running (listening) after 12 s, so the bad value did not stop start-up.
    expect({ still_running: code === null, names_variable: out.includes("VENUE_URL") }).toEqual({ still_running: false, names_variable: true });
    expect(code).not.toBe(0);
  }, 30_000);

  test("start-up with PAPER_MARKETS=<missing file> stops with a message naming PAPER_MARKETS and no stack trace", async () => {
    const { code, out } = await start({ PAPER_MARKETS: "/nonexistent/review2-markets.json" });
    expect(code).not.toBeNull();
    expect(code).not.toBe(0);
    expect(out).toContain("PAPER_MARKETS");
    expect(out).not.toMatch(/\n\s+at /);
  }, 30_000);
});
