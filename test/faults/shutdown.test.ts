/**
 * Graceful shutdown of the real process (issue 15): on SIGTERM the service stops accepting, the
 * requests under way finish (their venue calls and writes included) and it exits 0; what they
 * wrote is there after a restart. A second signal exits at once. The venue is the simulator with
 * latency, so requests are really in flight when the signal comes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import markets from "../../fixtures/markets.json" with { type: "json" };
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { ADMIN_TOKEN, type ServiceProcess, startService } from "../support/service-process.ts";

const MARKET = (markets as any[]).find((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
const TOKEN: string = MARKET.tokens[0].token_id;
const PRICE = Math.round((Number(MARKET.tokens[0].book.bids[0].price) - 0.01) * 100) / 100;
const LIMITS = { daily_volume_usdc: 100_000, capital_usdc: 100_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600 };
const WALLET = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const LATENCY_MS = 1200;

let sim: VenueSim;
const dirs: string[] = [];
beforeAll(() => {
  sim = startVenueSim({ port: 0, hostname: "127.0.0.1" });
});
afterAll(async () => {
  await sim.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const faults = (f: Record<string, number>) => fetch(`${sim.url}/_sim/faults`, { method: "POST", body: JSON.stringify(f) });

async function call(s: ServiceProcess, method: string, path: string, body?: unknown, key?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key) headers["x-api-key"] = key;
  else headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  const res = await fetch(`${s.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json().catch(() => null) };
}

async function serviceWithAgent(dataDir: string) {
  const s = await startService({ DATA_DIR: dataDir, VENUE: "clob", VENUE_URL: sim.url, VENUE_TIMEOUT_MS: "5000", SEAL_SECRET_KEY: Buffer.alloc(32, 7).toString("base64") });
  const org = await call(s, "POST", "/v1/orgs", { name: "shutdown" });
  const key = org.body.api_key.key as string;
  const agent = await call(s, "POST", "/v1/agents", { wallet_address: WALLET, limits: LIMITS }, key);
  expect(agent.status).toBe(201);
  return { s, key, agentId: agent.body.id as string };
}

describe("graceful shutdown of the real process", () => {
  test("SIGTERM: in-flight requests finish and are stored, new connections are refused, exit 0; a restart finds the orders", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "brokerage-stop-"));
    dirs.push(dataDir);
    const { s, key, agentId } = await serviceWithAgent(dataDir);
    await faults({ latency_ms: LATENCY_MS });
    try {
      const t0 = performance.now();
      const inFlight = Array.from({ length: 3 }, (_, i) =>
        call(s, "POST", "/v1/orders/intent", { market_id: TOKEN, side: "buy", size_usdc: 5 + i, price: PRICE, agent_id: agentId }, key),
      );
      await Bun.sleep(300);
      s.signal("SIGTERM");
      await Bun.sleep(100);
      const late = await fetch(`${s.url}/healthz`).then((r) => r.status, (e: Error) => e.message);
      expect(String(late)).toMatch(/ECONNREFUSED|Unable to connect|refused/i);
      const answers = await Promise.all(inFlight);
      for (const a of answers) expect(a.status).toBe(201);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(LATENCY_MS);
      expect(await s.exited).toBe(0);
      expect(s.lines.some((l) => l.includes('"stopping"'))).toBe(true);
      expect(s.lines.some((l) => l.includes('"stopped"'))).toBe(true);

      await faults({ latency_ms: 0 });
      const again = await startService({ DATA_DIR: dataDir, VENUE: "clob", VENUE_URL: sim.url, SEAL_SECRET_KEY: Buffer.alloc(32, 7).toString("base64") });
      try {
        for (const a of answers) {
          const got = await call(again, "GET", `/v1/orders/${a.body.order_id}`, undefined, key);
          expect(got.status).toBe(200);
          expect(got.body.status).toBe("awaiting_signature");
        }
      } finally {
        expect(await again.stop()).toBe(0);
      }
    } finally {
      await faults({ latency_ms: 0 });
      s.signal("SIGKILL");
    }
  }, 90_000);

  test("SIGTERM with an event stream open: the stream ends and the process exits 0 well inside the grace period", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "brokerage-stop-"));
    dirs.push(dataDir);
    const { s, key } = await serviceWithAgent(dataDir);
    try {
      const res = await fetch(`${s.url}/v1/events`, { headers: { "x-api-key": key } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith("text/event-stream");
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toContain("retry:");
      const t0 = performance.now();
      s.signal("SIGTERM");
      // The stream is ended by the service (not left for the grace period to cut).
      for (;;) {
        const next = await reader.read().catch(() => ({ done: true }) as const);
        if (next.done) break;
      }
      expect(await s.exited).toBe(0);
      expect(performance.now() - t0).toBeLessThan(5000);
      expect(s.lines.some((l) => l.includes('"stopped"'))).toBe(true);
    } finally {
      s.signal("SIGKILL");
    }
  }, 60_000);

  test("a second signal exits at once, without waiting for the requests under way", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "brokerage-stop-"));
    dirs.push(dataDir);
    const { s, key, agentId } = await serviceWithAgent(dataDir);
    await faults({ latency_ms: 4000 });
    try {
      const pending = call(s, "POST", "/v1/orders/intent", { market_id: TOKEN, side: "buy", size_usdc: 5, price: PRICE, agent_id: agentId }, key).catch((e: Error) => e);
      await Bun.sleep(300);
      const t0 = performance.now();
      s.signal("SIGTERM");
      await Bun.sleep(200);
      s.signal("SIGINT");
      expect(await s.exited).toBe(130);
      expect(performance.now() - t0).toBeLessThan(1500);
      expect(await pending).toBeInstanceOf(Error); // the connection went with the process
    } finally {
      await faults({ latency_ms: 0 });
      s.signal("SIGKILL");
    }
  }, 60_000);
});
