/**
 * Cancel-all without a kill, and the firm-wide kill, over HTTP against the venue simulator (VENUE=clob
 * wire), on PGlite and, when TEST_DATABASE_URL is set, on PostgreSQL:
 *
 * - POST /v1/agents/{id}/cancel-all (delegated: stored credentials; payload: the owner's headers by the
 *   OFFICIAL client, over DELETE /cancel-all or each DELETE /order): the orders cancelled at the venue
 *   (all, or one token's), unconfirmed ones failed and flagged at the deadline, the breaker closed, the
 *   credentials kept, and the agent trading again at once.
 * - POST /v1/kill: 20 agents with open orders killed concurrently within the deadline, answered per
 *   agent; an agent created afterwards starts halted; POST /v1/resume undoes it in one call (an agent
 *   killed on its own before stays halted); agent-scoped keys get 403 and change nothing.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { type ApiKeyCreds, ClobClient, createL2Headers, type OrderType, orderToJsonV2 } from "@polymarket/clob-client-v2";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Database } from "../../src/db/database.ts";
import { credentials } from "../../src/db/schema.ts";
import { ClobVenue } from "../../src/venues/clob/clob-venue.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { type CallOptions, type CancelResult, type VenueCredentials, VenueUnavailableError } from "../../src/venues/venue.ts";
import markets from "../../fixtures/markets.json" with { type: "json" };
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { walletOf } from "../venues/clob-service.ts";
import { BrokerClient } from "../../packages/sdk/src/client.ts";

const SIGNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const DEADLINE_MS = 5000;
const MARGIN_MS = 1500;
// Two plain 0.01-tick markets of the fixture: resting buys one tick under the best bid.
const PLAIN = (markets as any[]).filter((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
const TOKEN_A: string = PLAIN[0].tokens[0].token_id;
const TOKEN_B: string = PLAIN[1].tokens[0].token_id;
const priceUnder = (m: any) => Math.round((Number(m.tokens[0].book.bids[0].price) - 0.01) * 100) / 100;
const PRICE_A = priceUnder(PLAIN[0]);
const PRICE_B = priceUnder(PLAIN[1]);
const LIMITS = { daily_volume_usdc: 100_000, capital_usdc: 100_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600 };

let sim: VenueSim;
/** Venue order ids whose cancels are black-holed until the caller gives up. */
let stuck = new Set<string>();
class ProbedClobVenue extends ClobVenue {
  override cancelOrder(req: { venue_order_id: string; credentials?: VenueCredentials }, opts?: CallOptions): Promise<CancelResult> {
    if (stuck.has(req.venue_order_id)) return blackHole(opts?.signal);
    return super.cancelOrder(req, opts);
  }
  override async cancelOrders(req: { venue_order_ids: string[]; credentials?: VenueCredentials }, opts?: CallOptions): Promise<Record<string, CancelResult>> {
    if (req.venue_order_ids.some((id) => stuck.has(id))) return blackHole(opts?.signal);
    return super.cancelOrders(req, opts);
  }
}
function blackHole<T>(signal?: AbortSignal): Promise<T> {
  return new Promise((_, reject) => signal?.addEventListener("abort", () => reject(new VenueUnavailableError("aborted by the caller")), { once: true }));
}

beforeAll(() => {
  sim = startVenueSim({ port: 0, hostname: "127.0.0.1" });
});
afterAll(async () => {
  await sim?.stop();
});
afterEach(() => {
  stuck = new Set();
});

async function simPost(path: string, body: unknown) {
  const res = await fetch(`${sim.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return res.json();
}
const atVenue = (hash: string) => sim.state.venue.order(hash)?.status;

describeEachDatabase("cancel-all and the firm-wide kill against the venue simulator", (_kind, getDatabase) => {
  let database: Database;
  let t: TestApp;

  beforeAll(async () => {
    database = await getDatabase();
    t = await createTestApp(database, { venue: new ProbedClobVenue({ baseUrl: sim.url, timeoutMs: 3000 }), config: { killDeadlineMs: DEADLINE_MS, venueTimeoutMs: 5000 } });
  });
  afterAll(async () => {
    await t.app.stop();
  });

  async function delegatedAgent(key?: string) {
    const { key: k, agent } = await t.newAgent({ key, body: { signer_address: SIGNER } });
    expect((await t.call("PATCH", `/v1/agents/${agent.id}/limits`, { key: k, body: LIMITS })).status).toBe(200);
    const c = { api_key: crypto.randomUUID(), api_secret: randomBytes(32).toString("base64url"), passphrase: randomBytes(16).toString("hex") };
    await simPost("/_sim/credentials", { ...c, address: SIGNER, scopes: ["order:place", "order:cancel"] });
    const creds = await t.call("POST", `/v1/agents/${agent.id}/creds`, { key: k, body: { ...c, scopes: ["order:place", "order:cancel"] } });
    expect(creds.status).toBe(200);
    return { key: k, agentId: agent.id as string };
  }
  const intent = (key: string, agentId: string, token = TOKEN_A, price = PRICE_A) =>
    t.call("POST", "/v1/orders/intent", { key, body: { agent_id: agentId, market_id: token, side: "buy", size_usdc: 5, price } });
  async function placeOpen(key: string, agentId: string, n: number, token = TOKEN_A, price = PRICE_A) {
    const answers = await Promise.all(Array.from({ length: n }, () => intent(key, agentId, token, price)));
    for (const a of answers) {
      if (a.status !== 201) throw new Error(`intent answered ${a.status}: ${a.text}`);
      expect(a.body.status).toBe("open");
    }
    return answers.map((a) => a.body as { order_id: string; venue_order_id: string });
  }
  const getOrder = async (key: string, id: string) => (await t.call("GET", `/v1/orders/${id}`, { key })).body;
  const agentKey = async (key: string, agentId: string) => (await t.call("POST", "/v1/api-keys", { key, body: { agent_id: agentId } })).body.key as string;

  test("delegated: cancel-all of one market, then of everything; unconfirmed cancels failed and flagged; breaker closed, credentials kept, trading again", async () => {
    const { key, agentId } = await delegatedAgent();
    const a = await placeOpen(key, agentId, 4, TOKEN_A, PRICE_A);
    const b = await placeOpen(key, agentId, 3, TOKEN_B, PRICE_B);

    // One market: only its orders are cancelled at the venue.
    const one = await t.call("POST", `/v1/agents/${agentId}/cancel-all`, { key, body: { market_id: TOKEN_B } });
    expect(one.status).toBe(200);
    expect(one.body.market_id).toBe(TOKEN_B);
    expect(new Set(one.body.cancelled)).toEqual(new Set(b.map((o) => o.order_id)));
    expect(one.body.failed).toEqual([]);
    for (const o of b) expect(atVenue(o.venue_order_id)).toBe("cancelled");
    for (const o of a) expect(atVenue(o.venue_order_id)).toBe("live");
    expect(one.body.agent).toMatchObject({ breaker: { state: "closed" }, mode: "delegated", open_orders: 4 });
    expect((await getOrder(key, b[0].order_id)).status).toBe("cancelled");

    // Everything, with one cancel the venue never answers: failed and flagged at the deadline, the rest cancelled.
    stuck = new Set([a[0].venue_order_id]);
    const t0 = performance.now();
    const all = await t.call("POST", `/v1/agents/${agentId}/cancel-all`, { key });
    const elapsed = performance.now() - t0;
    expect(all.status).toBe(200);
    expect(elapsed).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
    expect(elapsed).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    expect(all.body.market_id).toBeNull();
    expect(all.body.failed).toEqual([a[0].order_id]);
    expect(new Set(all.body.cancelled)).toEqual(new Set(a.slice(1).map((o) => o.order_id)));
    expect(await getOrder(key, a[0].order_id)).toMatchObject({ status: "failed", flagged_for_review: true });
    for (const o of a.slice(1)) expect(await getOrder(key, o.order_id)).toMatchObject({ status: "cancelled", flagged_for_review: false });
    stuck = new Set();

    // Not halted: breaker closed, credentials in place (stored row), and the next intent is at the venue.
    const agent = (await t.call("GET", `/v1/agents/${agentId}`, { key })).body;
    expect(agent).toMatchObject({ breaker: { state: "closed", reason: null }, mode: "delegated" });
    expect(agent.credentials).not.toBeNull();
    expect(await database.db.select().from(credentials).where(eq(credentials.agentId, agentId))).toHaveLength(1);
    const next = await intent(key, agentId);
    expect(next.status).toBe(201);
    expect(next.body.status).toBe("open");
    expect(atVenue(next.body.venue_order_id)).toBe("live");

    // Nothing left to cancel beyond the new order; a repeat answers what it did (nothing twice).
    const again = await t.call("POST", `/v1/agents/${agentId}/cancel-all`, { key });
    expect(again.body.cancelled).toEqual([next.body.order_id]);
    const empty = await t.call("POST", `/v1/agents/${agentId}/cancel-all`, { key, body: {} });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ cancelled: [], failed: [], filled: [] });

    // Bad input: 400, nothing changed.
    for (const body of [{ market_id: "abc" }, { market_id: TOKEN_A, venue_auth: { api_key: "k", passphrase: "p", timestamp: "1", signature: "s" } }, { extra: 1 }]) {
      const bad = await t.call("POST", `/v1/agents/${agentId}/cancel-all`, { key, body });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe("invalid_request");
    }
    expect((await t.call("POST", `/v1/agents/${agentId}/cancel-all`, { key, raw: "[1]" })).status).toBe(400);
  }, 30_000);

  test("payload: cancel-all with the official client's headers (DELETE /cancel-all, and per order for one market); breaker closed, trading again", async () => {
    const pk = generatePrivateKey();
    const wallet = walletOf(pk);
    const creds: ApiKeyCreds = await new ClobClient({ host: sim.url, chain: 137, signer: wallet }).createOrDeriveApiKey();
    const owner = new ClobClient({ host: sim.url, chain: 137, signer: wallet, creds });
    const headers = async (req: { method: string; requestPath: string; body?: string }) => {
      const h = await createL2Headers(wallet, creds, req);
      return { address: h.POLY_ADDRESS, api_key: h.POLY_API_KEY, passphrase: h.POLY_PASSPHRASE, timestamp: h.POLY_TIMESTAMP, signature: h.POLY_SIGNATURE };
    };
    const { key, agent } = await t.newAgent({ body: { wallet_address: wallet.account.address } });
    const agentId: string = agent.id;
    expect((await t.call("PATCH", `/v1/agents/${agentId}/limits`, { key, body: LIMITS })).status).toBe(200);
    const placeSigned = async (token: string, price: number) => {
      const i = await intent(key, agentId, token, price);
      expect(i.status).toBe(201);
      const signature = await privateKeyToAccount(pk as Hex).signTypedData(i.body.unsigned_order);
      const m = i.body.unsigned_order.message;
      const payload = orderToJsonV2({ ...m, side: m.side === 0 ? "BUY" : "SELL", expiration: i.body.expiration, signature } as any, creds.key, i.body.order_type as OrderType);
      const venue_auth = await headers({ method: "POST", requestPath: "/order", body: JSON.stringify(payload) });
      const s = await t.call("POST", "/v1/orders/submit-signed", { key, body: { order_id: i.body.order_id, signature, venue_auth } });
      expect(s.body.status).toBe("open");
      return { order_id: i.body.order_id as string, order_hash: i.body.order_hash as string };
    };
    const a1 = await placeSigned(TOKEN_A, PRICE_A);
    const a2 = await placeSigned(TOKEN_A, Math.round((PRICE_A - 0.01) * 100) / 100);
    const b1 = await placeSigned(TOKEN_B, PRICE_B);

    // One market: the owner's headers over each of its orders' DELETE /order.
    const venue_auths = { [b1.order_hash]: await headers({ method: "DELETE", requestPath: "/order", body: JSON.stringify({ orderID: b1.order_hash }) }) };
    const one = await t.call("POST", `/v1/agents/${agentId}/cancel-all`, { key, body: { market_id: TOKEN_B, venue_auths } });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ cancelled: [b1.order_id], failed: [] });
    expect(atVenue(b1.order_hash)).toBe("cancelled");
    expect(atVenue(a1.order_hash)).toBe("live");
    expect(one.text).not.toContain(venue_auths[b1.order_hash].signature);

    // Everything: one DELETE /cancel-all with the owner's headers; an unsigned order is cancelled locally.
    const unsigned = await intent(key, agentId);
    const all = await t.call("POST", `/v1/agents/${agentId}/cancel-all`, { key, body: { venue_auth: await headers({ method: "DELETE", requestPath: "/cancel-all" }) } });
    expect(all.status).toBe(200);
    expect(new Set(all.body.cancelled)).toEqual(new Set([a1.order_id, a2.order_id, unsigned.body.order_id]));
    expect(all.body.failed).toEqual([]);
    expect((await owner.getOpenOrders()).length).toBe(0);
    expect(all.body.agent).toMatchObject({ mode: "payload", breaker: { state: "closed" }, open_orders: 0 });

    // Trading again at once.
    const again = await placeSigned(TOKEN_A, PRICE_A);
    expect(atVenue(again.order_hash)).toBe("live");

    // The same through the SDK with the owner's venue credentials: it builds the headers itself.
    const sdk = new BrokerClient({ baseUrl: "http://service.test", apiKey: key, fetch: ((input: any, init?: RequestInit) => t.app.handle(new Request(input, init))) as typeof fetch });
    const venueCredentials = { api_key: creds.key, api_secret: creds.secret, passphrase: creds.passphrase };
    const b2 = await placeSigned(TOKEN_B, PRICE_B);
    const byMarket = await sdk.cancelAll(agentId, { market_id: TOKEN_B }, { venueCredentials });
    expect(byMarket).toMatchObject({ cancelled: [b2.order_id], failed: [] });
    expect(atVenue(b2.order_hash)).toBe("cancelled");
    expect(atVenue(again.order_hash)).toBe("live");
    const rest = await sdk.cancelAll(agentId, {}, { venueCredentials });
    expect(rest).toMatchObject({ cancelled: [again.order_id], failed: [] });
    expect(atVenue(again.order_hash)).toBe("cancelled");
    expect(rest.agent.breaker.state).toBe("closed");
  }, 30_000);

  test("firm-wide kill: 20 agents with open orders killed concurrently within the deadline; new agents start halted; one resume undoes it", async () => {
    const { key, orgId } = await t.newOrg("firm");
    // One agent killed on its own before the firm kill: the firm resume leaves it halted.
    const loner = await delegatedAgent(key);
    expect((await t.call("POST", `/v1/agents/${loner.agentId}/kill`, { key })).status).toBe(200);
    const fleet = await Promise.all(Array.from({ length: 20 }, () => delegatedAgent(key)));
    const placed = new Map<string, { order_id: string; venue_order_id: string }[]>();
    // Placed five agents at a time (a shared two-core machine; the placements are not what is tested).
    for (let i = 0; i < fleet.length; i += 5) await Promise.all(fleet.slice(i, i + 5).map(async (f) => placed.set(f.agentId, await placeOpen(key, f.agentId, 4))));
    // One order of one agent hangs at the venue: that agent's kill fails and flags it at its deadline, the others are done long before.
    const slow = fleet[0].agentId;
    stuck = new Set([placed.get(slow)![0].venue_order_id]);

    // An agent-scoped key may not use it.
    const scoped = await agentKey(key, fleet[1].agentId);
    for (const [method, path] of [["POST", "/v1/kill"], ["POST", "/v1/resume"], ["GET", "/v1/kill"]] as const) {
      const refused = await t.call(method, path, { key: scoped, body: method === "POST" ? { org_id: orgId } : undefined });
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe("forbidden");
    }
    expect((await t.call("GET", `/v1/agents/${fleet[1].agentId}`, { key })).body.breaker.state).toBe("closed");
    expect((await t.call("GET", "/v1/kill", { key })).body).toMatchObject({ org_id: orgId, halted: false });

    const t0 = performance.now();
    // The organization is named on purpose: a per-agent route with the agent id ".." becomes this path
    // once a client normalizes it, and must not kill or resume the firm.
    for (const path of ["/v1/agents/../kill", "/v1/agents/%2e%2e/resume"]) {
      const stray = await t.call("POST", path, { key, body: path.endsWith("kill") ? { reason: "stray" } : undefined });
      expect(stray.status).toBe(400);
    }
    const other = await t.newOrg("other");
    expect((await t.call("POST", "/v1/kill", { key, body: { org_id: other.orgId } })).status).toBe(400);
    expect((await t.call("GET", "/v1/kill", { key })).body.halted).toBe(false);
    const res = await t.call("POST", "/v1/kill", { key, body: { org_id: orgId, reason: "firm test" } });
    const elapsed = performance.now() - t0;
    expect(res.status).toBe(200);
    expect(elapsed).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    expect(res.body).toMatchObject({ org_id: orgId, halted: true });
    expect(res.body.agents).toHaveLength(21);
    const byAgent = new Map<string, any>(res.body.agents.map((a: any) => [a.agent_id, a]));
    for (const f of fleet) {
      const r = byAgent.get(f.agentId);
      expect(r.error).toBeNull();
      expect(r.kill_id).toMatch(/^kil_/);
      expect(r.duration_ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
      expect(r.credentials_deleted).toBe(true);
      const ids = placed.get(f.agentId)!.map((o) => o.order_id);
      if (f.agentId === slow) {
        expect(r.failed).toEqual([ids[0]]);
        expect(new Set(r.cancelled)).toEqual(new Set(ids.slice(1)));
      } else {
        expect(r.failed).toEqual([]);
        expect(new Set(r.cancelled)).toEqual(new Set(ids));
        for (const o of placed.get(f.agentId)!) expect(atVenue(o.venue_order_id)).toBe("cancelled");
      }
      expect((await t.call("GET", `/v1/agents/${f.agentId}`, { key })).body.breaker).toMatchObject({ state: "tripped", reason: "kill" });
    }
    // Concurrent: the slow agent's deadline bounds the whole answer (20 kills one after another would take far longer).
    expect(byAgent.get(slow).duration_ms).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
    stuck = new Set();

    // Halted firm: a new agent starts halted and its intents are refused.
    const state = (await t.call("GET", "/v1/kill", { key })).body;
    expect(state).toMatchObject({ halted: true, halted_at: res.body.halted_at });
    expect(new Set(state.agent_ids)).toEqual(new Set(fleet.map((f) => f.agentId)));
    const late = await t.newAgent({ key });
    expect(late.agent.breaker).toMatchObject({ state: "tripped", reason: "kill" });
    const refused = await intent(key, late.agent.id);
    expect(refused.status).toBe(422);
    expect(refused.body.failures.map((f: any) => f.code)).toContain("breaker_tripped");

    // One resume undoes the firm kill: the fleet and the late agent trade again, the loner stays halted.
    const resumed = await t.call("POST", "/v1/resume", { key, body: { org_id: orgId } });
    expect(resumed.status).toBe(200);
    expect(new Set(resumed.body.resumed)).toEqual(new Set([...fleet.map((f) => f.agentId), late.agent.id]));
    expect((await t.call("GET", "/v1/kill", { key })).body).toMatchObject({ halted: false, halted_at: null, agent_ids: [] });
    expect((await t.call("GET", `/v1/agents/${loner.agentId}`, { key })).body.breaker).toMatchObject({ state: "tripped", reason: "kill" });
    expect((await t.call("GET", `/v1/agents/${late.agent.id}`, { key })).body.breaker.state).toBe("closed");
    expect((await t.newAgent({ key })).agent.breaker.state).toBe("closed");
    expect((await intent(key, late.agent.id)).status).toBe(201);
    // A repeated resume changes nothing.
    expect((await t.call("POST", "/v1/resume", { key, body: { org_id: orgId } })).body).toEqual({ org_id: orgId, halted: false, resumed: [] });
  }, 60_000);
});
