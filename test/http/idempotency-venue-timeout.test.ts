/**
 * Review 2: an Idempotency-Key retry of a delegated intent whose placement timed out (504
 * venue_timeout, order kept `unknown`) runs the intent again and places a SECOND order at the venue.
 * CONTRACT 2: "the same key with the same body replays the first response (status and body)"; the
 * 504 names an order that exists (and may rest at the venue), so it must be kept like a 201.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import markets from "../../fixtures/markets.json" with { type: "json" };
import { ClobVenue } from "../../src/venues/clob/clob-venue.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";

const SIGNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const MARKET = (markets as any[]).find((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
const TOKEN: string = MARKET.tokens[0].token_id;
const PRICE = Math.round((Number(MARKET.tokens[0].book.bids[0].price) - 0.01) * 100) / 100;
const LIMITS = { daily_volume_usdc: 100_000, capital_usdc: 100_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600 };

let sim: VenueSim;
let t: TestApp;
/** When set, POST /order reaches the simulator (the order is placed) but its answer is held past the timeout. */
let holdPostAnswers = false;

const slowFetch = (async (input: any, init?: any) => {
  const res = await fetch(input, init);
  if (holdPostAnswers && init?.method === "POST" && String(input).endsWith("/order")) {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, 5000);
      init.signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(new DOMException("aborted", "AbortError"));
      });
    });
  }
  return res;
}) as typeof fetch;

beforeAll(async () => {
  sim = startVenueSim({ port: 0, hostname: "127.0.0.1" });
  t = await createTestApp(await sharedPglite(), {
    venue: new ClobVenue({ baseUrl: sim.url, timeoutMs: 3000, fetch: slowFetch }),
    config: { venueTimeoutMs: 300 },
  });
});
afterAll(async () => {
  await t?.app.stop();
  await sim?.stop();
});

test("Idempotency-Key retry after a 504 venue_timeout does not place a second order", async () => {
  const { key, agent } = await t.newAgent({ body: { signer_address: SIGNER } });
  expect((await t.call("PATCH", `/v1/agents/${agent.id}/limits`, { key, body: LIMITS })).status).toBe(200);
  const c = { api_key: crypto.randomUUID(), api_secret: randomBytes(32).toString("base64url"), passphrase: randomBytes(16).toString("hex") };
  const reg = await fetch(`${sim.url}/_sim/credentials`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...c, address: SIGNER, scopes: ["order:place", "order:cancel"] }),
  });
  expect(reg.status).toBe(201);
  const creds = await t.call("POST", `/v1/agents/${agent.id}/creds`, { key, body: { ...c, scopes: ["order:place", "order:cancel"] } });
  expect(creds.status).toBe(200);

  holdPostAnswers = true;
  const body = { agent_id: agent.id, market_id: TOKEN, side: "buy", size_usdc: 5, price: PRICE };
  const headers = { "idempotency-key": "review2-delegated-1" };
  const first = await t.call("POST", "/v1/orders/intent", { key, body, headers });
  expect(first.status).toBe(504);
  expect(first.body.code).toBe("venue_timeout");

  // The client did not get a definite answer, so it retries with the same key, as idempotency invites.
  const second = await t.call("POST", "/v1/orders/intent", { key, body, headers });
  holdPostAnswers = false;

  const posts = Object.values(sim.state.stats().posts).reduce((a, b) => a + b, 0);
  const orders = await t.call("GET", `/v1/orders?agent_id=${agent.id}`, { key });
  // Expected: the retry replays the 504 (or answers 409), and one order exists, posted once.
  expect({ orders: orders.body.data.length, posts_at_venue: posts, replayed: second.headers.get("idempotent-replayed") }).toEqual({
    orders: 1,
    posts_at_venue: 1,
    replayed: "true",
  });
});
