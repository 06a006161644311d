/**
 * Venue faults on reads and single cancels (issue 15), the service on the ClobVenue adapter against
 * the simulator: a venue that hangs on reads answers 503 and creates nothing; a single cancel the
 * venue answers 429 or 500 is a problem answer (never a 500 of ours) that leaves the order open and
 * live, and succeeds once the venue recovers. Kill-switch cancels under errors, 429s, timeouts and
 * hangs, placement errors and timeouts, and the breaker's trip and reset are in test/kill/kill-sim.test.ts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import markets from "../../fixtures/markets.json" with { type: "json" };
import type { Database } from "../../src/db/database.ts";
import { ClobVenue } from "../../src/venues/clob/clob-venue.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { createTestApp, type TestApp, type TestResponse } from "../support/app.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";

const SIGNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const MARKET = (markets as any[]).find((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
const TOKEN: string = MARKET.tokens[0].token_id;
const PRICE = Math.round((Number(MARKET.tokens[0].book.bids[0].price) - 0.01) * 100) / 100;
const LIMITS = { daily_volume_usdc: 100_000, capital_usdc: 100_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600 };

let sim: VenueSim;
beforeAll(() => {
  sim = startVenueSim({ port: 0, hostname: "127.0.0.1" });
});
afterAll(async () => {
  await sim.stop();
});
const faults = (f: Record<string, number>) => fetch(`${sim.url}/_sim/faults`, { method: "POST", body: JSON.stringify(f) });

function expectProblem(res: TestResponse, status: number, code?: string) {
  if (res.status !== status || (code && res.body?.code !== code)) throw new Error(`expected ${status} ${code ?? ""}, got ${res.status}: ${res.text}`);
  expect(res.headers.get("content-type")).toStartWith("application/problem+json");
}

describeEachDatabase("venue faults on reads and single cancels", (_kind, getDatabase) => {
  let database: Database;
  let t: TestApp;
  let key: string;
  let agentId: string;

  beforeAll(async () => {
    database = await getDatabase();
    // Reads and cancels bounded at 400 ms by the adapter, placements at 300 ms.
    t = await createTestApp(database, { venue: new ClobVenue({ baseUrl: sim.url, timeoutMs: 400, marketsCacheMs: 0 }), config: { venueTimeoutMs: 300 } });
    const made = await t.newAgent({ body: { signer_address: SIGNER, wallet_address: SIGNER, limits: LIMITS } });
    key = made.key;
    agentId = made.agent.id;
    const c = { api_key: crypto.randomUUID(), api_secret: randomBytes(32).toString("base64url"), passphrase: randomBytes(16).toString("hex") };
    await fetch(`${sim.url}/_sim/credentials`, { method: "POST", body: JSON.stringify({ ...c, address: SIGNER, scopes: ["order:place", "order:cancel"] }) });
    expect((await t.call("POST", `/v1/agents/${agentId}/creds`, { key, body: { ...c, scopes: ["order:place", "order:cancel"] } })).status).toBe(200);
  });
  afterAll(async () => {
    await faults({ latency_ms: 0, cancel_error_ratio: 0 });
    await t.app.stop();
  });

  const intent = () => t.call("POST", "/v1/orders/intent", { key, body: { market_id: TOKEN, side: "buy", size_usdc: 5, price: PRICE, agent_id: agentId } });
  const counts = async () => JSON.stringify(await rowsOf(database, sql`select (select count(*) from orders where agent_id = ${agentId}) as o, (select count(*) from risk_decisions where agent_id = ${agentId}) as d`));

  test("a venue that hangs on reads: markets and intents answer 503 venue_unavailable, nothing is created, /readyz says not ready", async () => {
    const before = await counts();
    await faults({ latency_ms: 1500 });
    try {
      const t0 = performance.now();
      expectProblem(await intent(), 503, "venue_unavailable");
      expectProblem(await t.call("GET", `/v1/markets/${TOKEN}`, { key }), 503);
      expect((await t.call("GET", "/readyz")).status).toBe(503);
      expect(performance.now() - t0).toBeLessThan(3 * 1500);
      expect(await counts()).toBe(before);
    } finally {
      await faults({ latency_ms: 0 });
    }
    expect((await intent()).status).toBe(201);
  });

  for (const status of [429, 500]) {
    test(`a single cancel the venue answers ${status}: 503 with Retry-After, the order stays open and live; it cancels once the venue recovers`, async () => {
      const placed = await intent();
      expect(placed.status).toBe(201);
      await faults({ cancel_error_ratio: 1, cancel_error_status: status, cancel_retry_after_s: 1 });
      try {
        const res = await t.call("DELETE", `/v1/orders/${placed.body.order_id}`, { key });
        // Nothing changed and it is safe to retry: 503 with the venue's Retry-After.
        expectProblem(res, 503, "venue_unavailable");
        expect(res.headers.get("retry-after")).toBe(status === 429 ? "1" : "2");
        expect((await t.call("GET", `/v1/orders/${placed.body.order_id}`, { key })).body.status).toBe("open");
        expect(sim.state.venue.order(placed.body.venue_order_id)?.status).toBe("live");
      } finally {
        await faults({ cancel_error_ratio: 0 });
      }
      const ok = await t.call("DELETE", `/v1/orders/${placed.body.order_id}`, { key });
      expect(ok.status).toBe(200);
      expect(sim.state.venue.order(placed.body.venue_order_id)?.status).toBe("cancelled");
    });
  }
});
