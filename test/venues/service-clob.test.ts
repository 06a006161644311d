/**
 * The service with VENUE=clob (the venue built by createVenue from the configuration) against the
 * venue simulator over real HTTP, on PGlite and, when TEST_DATABASE_URL is set, PostgreSQL:
 *
 * - payload mode: the trader's venue API key comes from the official client (L1), the intent's order is
 *   signed with viem, and `venue_auth` is computed by the official client (orderToJsonV2 and
 *   createL2Headers) over the body the official client would send. The service forwards exactly that
 *   body, so the simulator accepts the HMAC, verifies the order signature, and rests the order. The
 *   order is read through the service and through the official client, and cancelled by its owner.
 * - delegated mode: orders placed with the stored credentials, read, cancelled one by one, and the
 *   kill switch cancels the rest at the venue.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ClobClient, createL2Headers, OrderType, orderToJsonV2 } from "@polymarket/clob-client-v2";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { agentOfWallet, clobVenueAt, MARKET, TOKEN, walletOf } from "./clob-service.ts";

const LIMITS = { daily_volume_usdc: 100_000, capital_usdc: 100_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600 };

let sim: VenueSim;
beforeAll(() => {
  sim = startVenueSim({ port: 0 });
});
afterAll(async () => {
  await sim?.stop();
});

describeEachDatabase("the service on VENUE=clob against the venue simulator", (_kind, database) => {
  let t: TestApp;

  beforeAll(async () => {
    const { config, venue, env } = await clobVenueAt(sim.url);
    expect(config.venue).toBe("clob");
    expect(venue.name).toBe("clob");
    t = await createTestApp(await database(), { venue, env });
  });
  afterAll(async () => {
    await t?.app.stop();
  });

  const agentWith = (wallet: string) => agentOfWallet(t, wallet, LIMITS);

  test("markets come from the venue, with their version", async () => {
    const res = await t.call("GET", `/v1/markets/${TOKEN}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ market_id: TOKEN, condition_id: MARKET.condition_id, version: "v1", best_bid: "0.48", best_ask: "0.5" });
  });

  test("payload mode: venue_auth computed by the official client verifies; the order rests, is read, and is cancelled by its owner", async () => {
    const pk = generatePrivateKey();
    const wallet = walletOf(pk);
    const address = wallet.account.address;
    const creds = await new ClobClient({ host: sim.url, chain: 137, signer: wallet }).createOrDeriveApiKey();
    const { key, agentId } = await agentWith(address);

    const intent = await t.call("POST", "/v1/orders/intent", { key, body: { agent_id: agentId, market_id: TOKEN, side: "buy", size_usdc: 4, price: 0.4 } });
    expect(intent.status).toBe(201);
    const unsigned = intent.body.unsigned_order;
    const signature = await privateKeyToAccount(pk).signTypedData(unsigned);

    // What the official client would post for this signed order, and its L2 headers over that body.
    const m = unsigned.message;
    const signedOrder = { ...m, side: m.side === 0 ? "BUY" : "SELL", expiration: intent.body.expiration, signature };
    const payload = orderToJsonV2(signedOrder as any, creds.key, intent.body.order_type as OrderType);
    const headers = await createL2Headers(wallet, creds, { method: "POST", requestPath: "/order", body: JSON.stringify(payload) });
    const venue_auth = {
      address: headers.POLY_ADDRESS,
      api_key: headers.POLY_API_KEY,
      passphrase: headers.POLY_PASSPHRASE,
      timestamp: headers.POLY_TIMESTAMP,
      signature: headers.POLY_SIGNATURE,
    };

    const submitted = await t.call("POST", "/v1/orders/submit-signed", { key, body: { order_id: intent.body.order_id, signature, venue_auth } });
    expect(submitted.status).toBe(200);
    expect(submitted.body).toMatchObject({ order_id: intent.body.order_id, status: "open", venue_order_id: intent.body.order_hash });

    const order = await t.call("GET", `/v1/orders/${intent.body.order_id}`, { key });
    expect(order.body).toMatchObject({ status: "open", venue_order_id: intent.body.order_hash });
    const owner = new ClobClient({ host: sim.url, chain: 137, signer: wallet, creds });
    expect(await owner.getOrder(intent.body.order_hash)).toMatchObject({ id: intent.body.order_hash, status: "ORDER_STATUS_LIVE", owner: creds.key });
    expect((await owner.getOrder(intent.body.order_hash)).maker_address.toLowerCase()).toBe(address.toLowerCase());
    expect((await owner.getOpenOrders()).map((o) => o.id)).toEqual([intent.body.order_hash]);

    // The owner cancels it at the venue with its own keys; the service's reading of the venue agrees.
    expect(await owner.cancelOrder({ orderID: intent.body.order_hash })).toEqual({ canceled: [intent.body.order_hash], not_canceled: {} });
    expect((await t.app.services.venue.getOrder({ venue_order_id: intent.body.order_hash, credentials: { api_key: creds.key, api_secret: creds.secret, passphrase: creds.passphrase, address } }))?.status).toBe(
      "cancelled",
    );
  });

  test("payload mode: a venue_auth computed over another body is refused by the venue, and nothing rests", async () => {
    const pk = generatePrivateKey();
    const wallet = walletOf(pk);
    const creds = await new ClobClient({ host: sim.url, chain: 137, signer: wallet }).createOrDeriveApiKey();
    const { key, agentId } = await agentWith(wallet.account.address);
    const intent = await t.call("POST", "/v1/orders/intent", { key, body: { agent_id: agentId, market_id: TOKEN, side: "buy", size_usdc: 4, price: 0.4 } });
    expect(intent.status).toBe(201);
    const signature = await privateKeyToAccount(pk).signTypedData(intent.body.unsigned_order);
    const m = intent.body.unsigned_order.message;
    // The HMAC over the official body with another order type than the one the service sends.
    const payload = orderToJsonV2({ ...m, side: "BUY", expiration: "0", signature } as any, creds.key, OrderType.FOK);
    const h = await createL2Headers(wallet, creds, { method: "POST", requestPath: "/order", body: JSON.stringify(payload) });
    const res = await t.call("POST", "/v1/orders/submit-signed", {
      key,
      body: {
        order_id: intent.body.order_id,
        signature,
        venue_auth: { address: h.POLY_ADDRESS, api_key: h.POLY_API_KEY, passphrase: h.POLY_PASSPHRASE, timestamp: h.POLY_TIMESTAMP, signature: h.POLY_SIGNATURE },
      },
    });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe("venue_rejected");
    expect(res.body.venue_error).toContain("Unauthorized");
    expect(res.text).not.toContain(creds.secret);
    expect(sim.state.venue.order(intent.body.order_hash)).toBeUndefined();
  });

  test("payload mode: without the owner's keys the service cannot cancel at the venue; the kill fails and flags the order", async () => {
    const pk = generatePrivateKey();
    const wallet = walletOf(pk);
    const creds = await new ClobClient({ host: sim.url, chain: 137, signer: wallet }).createOrDeriveApiKey();
    const { key, agentId } = await agentWith(wallet.account.address);
    const intent = await t.call("POST", "/v1/orders/intent", { key, body: { agent_id: agentId, market_id: TOKEN, side: "buy", size_usdc: 4, price: 0.4 } });
    const signature = await privateKeyToAccount(pk).signTypedData(intent.body.unsigned_order);
    const m = intent.body.unsigned_order.message;
    const payload = orderToJsonV2({ ...m, side: "BUY", expiration: intent.body.expiration, signature } as any, creds.key, intent.body.order_type as OrderType);
    const h = await createL2Headers(wallet, creds, { method: "POST", requestPath: "/order", body: JSON.stringify(payload) });
    const venue_auth = { address: h.POLY_ADDRESS, api_key: h.POLY_API_KEY, passphrase: h.POLY_PASSPHRASE, timestamp: h.POLY_TIMESTAMP, signature: h.POLY_SIGNATURE };
    expect((await t.call("POST", "/v1/orders/submit-signed", { key, body: { order_id: intent.body.order_id, signature, venue_auth } })).status).toBe(200);

    const cancel = await t.call("DELETE", `/v1/orders/${intent.body.order_id}`, { key });
    expect(cancel.status).toBe(502);
    expect(cancel.body.code).toBe("venue_rejected");
    expect(sim.state.venue.order(intent.body.order_hash)?.status).toBe("live");

    const killed = await t.call("POST", `/v1/agents/${agentId}/kill`, { key, body: {} });
    expect(killed.status).toBe(200);
    expect(killed.body.failed).toEqual([intent.body.order_id]);
    const order = (await t.call("GET", `/v1/orders/${intent.body.order_id}`, { key })).body;
    expect(order).toMatchObject({ status: "failed", flagged_for_review: true });
    expect(sim.state.venue.order(intent.body.order_hash)?.status).toBe("live"); // still resting: its owner must cancel it
  });

  test("delegated mode: orders placed, read and cancelled at the venue; the kill cancels the rest", async () => {
    const pk = generatePrivateKey();
    const wallet = walletOf(pk);
    const address = wallet.account.address;
    const creds = await new ClobClient({ host: sim.url, chain: 137, signer: wallet }).createOrDeriveApiKey();
    const { key, agentId } = await agentWith(address);
    const stored = await t.call("POST", `/v1/agents/${agentId}/creds`, {
      key,
      body: { api_key: creds.key, api_secret: creds.secret, passphrase: creds.passphrase, scopes: ["order:place", "order:cancel"] },
    });
    expect(stored.status).toBe(200);
    expect(stored.body.mode).toBe("delegated");

    const placed: { order_id: string; venue_order_id: string }[] = [];
    for (const price of [0.4, 0.41, 0.42]) {
      const r = await t.call("POST", "/v1/orders/intent", { key, body: { agent_id: agentId, market_id: TOKEN, side: "buy", size_usdc: 4.1, price } });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ mode: "delegated", status: "open" });
      placed.push(r.body);
    }
    const owner = new ClobClient({ host: sim.url, chain: 137, signer: wallet, creds });
    expect((await owner.getOpenOrders()).map((o) => o.id).sort()).toEqual(placed.map((p) => p.venue_order_id).sort());
    for (const p of placed) expect((await t.call("GET", `/v1/orders/${p.order_id}`, { key })).body.status).toBe("open");

    const one = await t.call("DELETE", `/v1/orders/${placed[0].order_id}`, { key });
    expect(one.status).toBe(200);
    expect(one.body.status).toBe("cancelled");
    expect((await owner.getOrder(placed[0].venue_order_id)).status).toBe("ORDER_STATUS_CANCELED");

    const batchesBefore = sim.state.routes.get("DELETE /orders") ?? 0;
    const singlesBefore = sim.state.routes.get("DELETE /order") ?? 0;
    const killed = await t.call("POST", `/v1/agents/${agentId}/kill`, { key, body: { reason: "test" } });
    expect(killed.status).toBe(200);
    expect(killed.body.cancelled.sort()).toEqual([placed[1].order_id, placed[2].order_id].sort());
    expect(killed.body.failed).toEqual([]);
    expect(killed.body.credentials_deleted).toBe(true);
    // The kill's cancels went out together: one DELETE /orders, no single cancels.
    expect((sim.state.routes.get("DELETE /orders") ?? 0) - batchesBefore).toBe(1);
    expect((sim.state.routes.get("DELETE /order") ?? 0) - singlesBefore).toBe(0);
    expect(await owner.getOpenOrders()).toEqual([]);
    for (const p of placed) expect((await t.call("GET", `/v1/orders/${p.order_id}`, { key })).body.status).toBe("cancelled");
  });
});
