/**
 * Issue #22, item 5 (the limit bypass): a payload order that fully filled at the venue, then
 * `DELETE /v1/orders/{id}` with the owner's venue_auth. The service holds no credentials to read the
 * order with (the simulator answers 401), so it can never conclude "nothing filled": the order is left
 * `unknown` and its traded volume keeps counting. VENUE=clob against the simulator over HTTP; the
 * counterparty is Polymarket's official client; PGlite and, with TEST_DATABASE_URL, PostgreSQL.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ApiKeyCreds, ClobClient, createL2Headers, type OrderType, orderToJsonV2, Side } from "@polymarket/clob-client-v2";
import type { Hex } from "viem";
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { type LiveService, serveTestApp } from "../sdk/serve.ts";
import { agentOfWallet, clobVenueAt, TOKEN, walletOf } from "../venues/clob-service.ts";

const LIMITS = { daily_volume_usdc: 100_000, capital_usdc: 100_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600, duplicate_window_s: 0 };

interface Owner {
  pk: Hex;
  wallet: ReturnType<typeof walletOf>;
  creds: ApiKeyCreds;
  client: ClobClient;
}

let sim: VenueSim;
beforeAll(() => {
  sim = startVenueSim({ port: 0 });
});
afterAll(async () => {
  await sim?.stop();
});

describeEachDatabase("a payload cancel of a filled order keeps its volume (VENUE=clob, simulator, official client)", (_kind, database) => {
  let live: LiveService;
  const call = (method: string, path: string, o: { key?: string; body?: unknown } = {}) => live.t.call(method, path, o);

  beforeAll(async () => {
    const { venue, env } = await clobVenueAt(sim.url);
    live = await serveTestApp(await database(), { venue, env });
  });
  afterAll(async () => {
    await live?.t.app.stop();
    await live?.stop();
  });

  async function newOwner(): Promise<Owner> {
    const pk = generatePrivateKey();
    const wallet = walletOf(pk);
    const creds = await new ClobClient({ host: sim.url, chain: 137, signer: wallet }).createOrDeriveApiKey();
    return { pk, wallet, creds, client: new ClobClient({ host: sim.url, chain: 137, signer: wallet, creds }) };
  }

  const venueAuth = async (o: Owner, req: { method: string; requestPath: string; body?: string }) => {
    const h = await createL2Headers(o.wallet, o.creds, req);
    return { address: h.POLY_ADDRESS, api_key: h.POLY_API_KEY, passphrase: h.POLY_PASSPHRASE, timestamp: h.POLY_TIMESTAMP, signature: h.POLY_SIGNATURE };
  };

  test("10 shares at 0.49 filled by a counterparty, then DELETE with venue_auth: unknown, daily volume stays", async () => {
    const o = await newOwner();
    const { key, agentId } = await agentOfWallet(live.t, o.wallet.account.address, LIMITS);
    // 4.9 USDC at 0.49 → 10 shares, the best bid, resting (the book: bids 0.48, asks 0.50).
    const intent = await call("POST", "/v1/orders/intent", { key, body: { agent_id: agentId, market_id: TOKEN, side: "buy", size_usdc: 4.9, price: 0.49 } });
    expect(intent.status).toBe(201);
    const m = intent.body.unsigned_order.message;
    // Item 11: the unsigned order carries checksummed addresses, as the official client writes them.
    expect(m.maker).toBe(getAddress(o.wallet.account.address));
    expect(m.signer).toBe(getAddress(o.wallet.account.address));
    const signature = await privateKeyToAccount(o.pk).signTypedData(intent.body.unsigned_order);
    // The official client's own POST /order body of this signed order: its venue_auth verifies over ours.
    const payload = orderToJsonV2({ ...m, side: m.side === 0 ? "BUY" : "SELL", expiration: intent.body.expiration, signature } as any, o.creds.key, intent.body.order_type as OrderType);
    const post = await venueAuth(o, { method: "POST", requestPath: "/order", body: JSON.stringify(payload) });
    const submitted = await call("POST", "/v1/orders/submit-signed", { key, body: { order_id: intent.body.order_id, signature, venue_auth: post } });
    expect(submitted.status).toBe(200);
    expect(submitted.body.status).toBe("open");

    // A counterparty sells the 10 shares into the bid with the official client.
    const other = await newOwner();
    const sold: any = await other.client.createAndPostOrder({ tokenID: TOKEN, price: 0.49, size: 10, side: Side.SELL });
    expect(sold.success).toBe(true);
    expect(sim.state.venue.order(intent.body.order_hash)?.status).toBe("matched");

    const agentBefore = (await call("GET", `/v1/agents/${agentId}`, { key })).body;
    expect(agentBefore.daily_volume.used_usdc).toBe(4.9);

    const del = await venueAuth(o, { method: "DELETE", requestPath: "/order", body: JSON.stringify({ orderID: intent.body.order_hash }) });
    const res = await call("DELETE", `/v1/orders/${intent.body.order_id}`, { key, body: { venue_auth: del } });
    expect(res.status).toBe(200);
    // Before the fix: `cancelled`, nothing filled, daily volume 0. Now: unknown, the volume kept.
    expect(res.body.status).toBe("unknown");
    const order = (await call("GET", `/v1/orders/${intent.body.order_id}`, { key })).body;
    expect(order.status).toBe("unknown");
    const agent = (await call("GET", `/v1/agents/${agentId}`, { key })).body;
    expect(agent.daily_volume.used_usdc).toBe(4.9);
    // The traded amount cannot be traded again: with a daily limit of 6, a second 4.9 USDC is refused.
    const patched = await call("PATCH", `/v1/agents/${agentId}/limits`, { key, body: { daily_volume_usdc: 6 } });
    expect(patched.status).toBe(200);
    const again = await call("POST", "/v1/orders/intent", { key, body: { agent_id: agentId, market_id: TOKEN, side: "buy", size_usdc: 4.9, price: 0.49 } });
    expect(again.status).toBe(422);
    expect(again.body.failures.map((f: any) => f.code)).toContain("daily_volume_exceeded");
  });
});
