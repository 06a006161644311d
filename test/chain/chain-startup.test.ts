/**
 * The chain source in the real service process: off without CHAIN_RPC_URL (start-up log and /readyz
 * say so), on with it (following Anvil, its cursor kept across a restart, on both databases), an
 * unreachable chain reported without making the service unready; and the simulator's `--chain` flag.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { type Anvil, startAnvil } from "../support/anvil.ts";
import { copyOfTemplate, postgresUrl } from "../support/databases.ts";
import { ownPostgresDatabase } from "../support/own-postgres-database.ts";
import { type ServiceProcess, startService } from "../support/service-process.ts";

let anvil: Anvil;
const dirs: string[] = [];

beforeAll(async () => {
  anvil = await startAnvil();
});

afterAll(async () => {
  await anvil?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A data directory holding a migrated PGlite database (a copy of the tests' template: no initdb per start). */
const tempDir = async () => {
  const d = await copyOfTemplate();
  dirs.push(d);
  return d;
};

const logged = (svc: ServiceProcess, msg: string) => svc.lines.map((l) => JSON.parse(l)).filter((j) => typeof j.msg === "string" && j.msg.startsWith(msg));

async function readyz(svc: ServiceProcess): Promise<{ status: number; body: any }> {
  const res = await fetch(`${svc.url}/readyz`);
  return { status: res.status, body: await res.json() };
}

async function waitReady(svc: ServiceProcess, chain: string): Promise<any> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await readyz(svc);
    if (r.body.chain === chain) return r;
    if (Date.now() > deadline) throw new Error(`readyz never said chain ${chain}: ${JSON.stringify(r.body)}`);
    await Bun.sleep(100);
  }
}

test("without CHAIN_RPC_URL the chain source is off: the start-up log and /readyz say so", async () => {
  const svc = await startService({ DATA_DIR: await tempDir() }, 60_000);
  try {
    expect(logged(svc, "chain source off")).toHaveLength(1);
    expect(logged(svc, "chain source on")).toHaveLength(0);
    const r = await readyz(svc);
    expect(r).toEqual({ status: 200, body: { status: "ready", database: "pglite", venue: "paper", chain: "off" } });
  } finally {
    expect(await svc.stop()).toBe(0);
  }
}, 90_000);

test("an unreachable chain is reported by /readyz without making the service unready", async () => {
  const svc = await startService({ DATA_DIR: await tempDir(), CHAIN_RPC_URL: "http://127.0.0.1:9/", CHAIN_POLL_MS: "200" }, 60_000);
  try {
    const r = await waitReady(svc, "unreachable");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: "ready", chain: "unreachable", chain_cursor_block: null });
    // The URL (a provider's often carries its key) is in no log line.
    expect(svc.lines.filter((l) => l.includes("127.0.0.1:9"))).toEqual([]);
    expect(logged(svc, "chain source: pass failed").length).toBeGreaterThan(0);
  } finally {
    expect(await svc.stop()).toBe(0);
  }
}, 90_000);

const kinds = ["pglite", ...(postgresUrl ? ["postgres"] : [])] as const;
for (const kind of kinds) {
  describe(`[${kind}]`, () => {
    test("with CHAIN_RPC_URL the source follows the chain from its cursor, which a restart keeps", async () => {
      const env: Record<string, string> =
        kind === "postgres" ? { DATABASE_URL: (await ownPostgresDatabase("chain_startup"))! } : { DATA_DIR: await tempDir() };
      Object.assign(env, { CHAIN_RPC_URL: anvil.url, CHAIN_POLL_MS: "100", CHAIN_CONFIRMATIONS: "3" });
      const first = await startService(env, 60_000);
      let cursor: bigint;
      try {
        expect(logged(first, "chain source on")).toEqual([expect.objectContaining({ confirmations: 3, poll_ms: 100 })]);
        const r = await waitReady(first, "following");
        expect(r.status).toBe(200);
        cursor = BigInt(r.body.chain_cursor_block);
        // New blocks move the cursor to head - (confirmations - 1).
        await anvil.mine(6);
        const head = await anvil.blockNumber();
        const deadline = Date.now() + 5000;
        while (BigInt((await readyz(first)).body.chain_cursor_block) !== head - 2n) {
          if (Date.now() > deadline) throw new Error(`the cursor did not follow: ${JSON.stringify((await readyz(first)).body)}`);
          await Bun.sleep(100);
        }
        cursor = head - 2n;
        expect(logged(first, "chain source: cursor created")).toHaveLength(1);
      } finally {
        expect(await first.stop()).toBe(0);
      }
      await anvil.mine(4);
      const second = await startService(env, 60_000);
      try {
        const r = await waitReady(second, "following");
        // Started from the stored cursor (no new cursor), caught up to the head.
        expect(logged(second, "chain source: cursor created")).toHaveLength(0);
        expect(BigInt(r.body.chain_cursor_block)).toBe((await anvil.blockNumber()) - 2n);
        expect(BigInt(r.body.chain_cursor_block)).toBe(cursor + 4n);
      } finally {
        expect(await second.stop()).toBe(0);
      }
    }, 120_000);
  });
}

test("the simulator's --chain settles on that chain and GET /_sim/chain names the addresses; without it, 404", async () => {
  const main = resolve(import.meta.dir, "../../src/venues/sim/main.ts");
  const start = async (args: string[]) => {
    const proc = Bun.spawn(["bun", main, "--port", "0", ...args], { stdout: "pipe", stderr: "pipe" });
    const reader = proc.stdout.getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`venue-sim exited: ${out} ${await new Response(proc.stderr).text()}`);
      out += new TextDecoder().decode(value);
    }
    return { proc, url: out.trim() };
  };
  const withChain = await start(["--chain", anvil.url]);
  const without = await start([]);
  try {
    const res = await fetch(`${withChain.url}/_sim/chain`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toEqual({
      rpc_url: anvil.url,
      exchanges: {
        ctf_exchange_v2: "0xE111180000d2663C0091e4f400237545B87B996B",
        neg_risk_ctf_exchange_v2: "0xe2222d279d744050d28e00520010520000310F59",
        exchange_v3: "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa",
      },
      conditional_tokens: "0x4D97DCd97eC945f40cF65F87097ACe5EA0476045",
      sender: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
    });
    for (const address of [...Object.values(body.exchanges), body.conditional_tokens]) {
      expect((await anvil.rpc<string>("eth_getCode", [address, "latest"])).length).toBeGreaterThan(100);
    }
    expect((await fetch(`${without.url}/_sim/chain`)).status).toBe(404);
    // A URL that is not one is refused at start-up.
    const bad = Bun.spawn(["bun", main, "--port", "0", "--chain", "nonsense"], { stdout: "pipe", stderr: "pipe" });
    expect(await bad.exited).toBe(2);
    expect(await new Response(bad.stderr).text()).toContain("--chain must be an http(s) URL");
  } finally {
    withChain.proc.kill();
    without.proc.kill();
    await Promise.all([withChain.proc.exited, without.proc.exited]);
  }
}, 90_000);
