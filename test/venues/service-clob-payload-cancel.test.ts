/**
 * Payload-mode cancels at a real CLOB wire (the venue simulator over HTTP, VENUE=clob), on PGlite and,
 * when TEST_DATABASE_URL is set, PostgreSQL. The service holds no venue keys for a payload agent: the
 * owner sends `venue_auth`, L2 headers computed by the OFFICIAL client (@polymarket/clob-client-v2
 * createL2Headers) over the exact request the service sends:
 *
 * - DELETE /v1/orders/{id} {venue_auth} over `DELETE /order {"orderID": hash}`: cancelled at the venue.
 * - POST /v1/agents/{id}/kill {venue_auth} over `DELETE /cancel-all`: one call cancels every open order
 *   of the account; nothing failed or flagged.
 * - a wrong venue_auth: the venue refuses; a cancel answers the problem and the order stays open; a kill
 *   fails and flags what stays unconfirmed.
 * - bad input: 400, nothing changed; the headers never reach a log line or an answer.
 * - the same through the SDK (packages/sdk), whose builders match the official client's headers.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ApiKeyCreds, ClobClient, createL2Headers, type OrderType, orderToJsonV2 } from "@polymarket/clob-client-v2";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BrokerClient, buildCancelAllVenueAuth, buildCancelVenueAuth, VenueRejectedError, type PayloadIntentAnswer } from "../../packages/sdk/src/client.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { redactFields } from "../../src/observability/redaction.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { type LiveService, serveTestApp } from "../sdk/serve.ts";
import { agentOfWallet, clobVenueAt, TOKEN, walletOf } from "./clob-service.ts";

const LIMITS = { daily_volume_usdc: 100_000, capital_usdc: 100_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600, duplicate_window_s: 0 };

type Wallet = ReturnType<typeof walletOf>;
interface Owner {
  pk: Hex;
  wallet: Wallet;
  creds: ApiKeyCreds;
  client: ClobClient;
}

/** L2 headers by the official client, as the service's venue_auth. */
async function officialVenueAuth(o: Owner, req: { method: string; requestPath: string; body?: string }) {
  const h = await createL2Headers(o.wallet, o.creds, req);
  return { address: h.POLY_ADDRESS, api_key: h.POLY_API_KEY, passphrase: h.POLY_PASSPHRASE, timestamp: h.POLY_TIMESTAMP, signature: h.POLY_SIGNATURE };
}

let sim: VenueSim;
beforeAll(() => {
  sim = startVenueSim({ port: 0 });
});
afterAll(async () => {
  await sim?.stop();
});

describeEachDatabase("payload-mode cancels with the owner's venue_auth, VENUE=clob against the simulator", (_kind, database) => {
  let live: LiveService;
  /** Every venue_auth signature and passphrase used: none may reach a log line. */
  const secrets: string[] = [];
  const call = (method: string, path: string, o: { key?: string; body?: unknown; raw?: string } = {}) => live.t.call(method, path, o);

  beforeAll(async () => {
    const { venue, env } = await clobVenueAt(sim.url);
    expect(venue.name).toBe("clob");
    live = await serveTestApp(await database(), { venue, env });
  });
  afterAll(async () => {
    // The owner's headers were passed through and forgotten: no log line holds them.
    const logs = live?.t.logs.join("\n") ?? "";
    expect(secrets.length).toBeGreaterThan(0);
    for (const s of secrets) expect(logs).not.toContain(s);
    await live?.t.app.stop();
    await live?.stop();
  });

  async function newOwner(): Promise<Owner> {
    const pk = generatePrivateKey();
    const wallet = walletOf(pk);
    const creds = await new ClobClient({ host: sim.url, chain: 137, signer: wallet }).createOrDeriveApiKey();
    secrets.push(creds.passphrase, creds.secret);
    return { pk, wallet, creds, client: new ClobClient({ host: sim.url, chain: 137, signer: wallet, creds }) };
  }

  const agentFor = (o: Owner) => agentOfWallet(live.t, o.wallet.account.address, LIMITS);

  /** An intent signed with viem and submitted with the official client's venue_auth: open at the venue. */
  async function placeOpen(o: Owner, key: string, agentId: string, price: number): Promise<{ order_id: string; order_hash: string }> {
    const intent = await call("POST", "/v1/orders/intent", { key, body: { agent_id: agentId, market_id: TOKEN, side: "buy", size_usdc: 4, price } });
    expect(intent.status).toBe(201);
    const signature = await privateKeyToAccount(o.pk).signTypedData(intent.body.unsigned_order);
    const m = intent.body.unsigned_order.message;
    const payload = orderToJsonV2({ ...m, side: m.side === 0 ? "BUY" : "SELL", expiration: intent.body.expiration, signature } as any, o.creds.key, intent.body.order_type as OrderType);
    const venue_auth = await officialVenueAuth(o, { method: "POST", requestPath: "/order", body: JSON.stringify(payload) });
    const submitted = await call("POST", "/v1/orders/submit-signed", { key, body: { order_id: intent.body.order_id, signature, venue_auth } });
    expect(submitted.status).toBe(200);
    expect(submitted.body.status).toBe("open");
    expect(sim.state.venue.order(intent.body.order_hash)?.status).toBe("live");
    return { order_id: intent.body.order_id, order_hash: intent.body.order_hash };
  }

  const routes = (name: string) => sim.state.routes.get(name) ?? 0;

  test("DELETE /v1/orders/{id} with the official client's headers over DELETE /order: cancelled at the venue, nothing flagged", async () => {
    const o = await newOwner();
    const { key, agentId } = await agentFor(o);
    const a = await placeOpen(o, key, agentId, 0.4);
    const b = await placeOpen(o, key, agentId, 0.41);

    const venue_auth = await officialVenueAuth(o, { method: "DELETE", requestPath: "/order", body: JSON.stringify({ orderID: a.order_hash }) });
    secrets.push(venue_auth.signature);
    const singles = routes("DELETE /order");
    const cancelled = await call("DELETE", `/v1/orders/${a.order_id}`, { key, body: { venue_auth } });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: a.order_id, status: "cancelled", flagged_for_review: false });
    expect(cancelled.text).not.toContain(venue_auth.signature);
    expect(cancelled.text).not.toContain(venue_auth.passphrase);
    // At the venue: one single DELETE /order, the order cancelled, the other still resting.
    expect(routes("DELETE /order") - singles).toBe(1);
    expect((await (await fetch(`${sim.url}/_sim/stats`)).json()).cancels[a.order_hash]).toBe(1);
    expect((await o.client.getOrder(a.order_hash)).status).toBe("ORDER_STATUS_CANCELED");
    expect((await o.client.getOpenOrders()).map((x) => x.id)).toEqual([b.order_hash]);
    expect((await call("GET", `/v1/orders/${b.order_id}`, { key })).body.status).toBe("open");
    const agent = (await call("GET", `/v1/agents/${agentId}`, { key })).body;
    expect(agent.open_orders).toBe(1);
  });

  test("a wrong venue_auth on a cancel: the venue refuses, the service answers the problem, the order stays open", async () => {
    const o = await newOwner();
    const { key, agentId } = await agentFor(o);
    const a = await placeOpen(o, key, agentId, 0.4);
    const b = await placeOpen(o, key, agentId, 0.41);
    // Headers over the other order's cancel: a valid signature, for another body.
    const other = await officialVenueAuth(o, { method: "DELETE", requestPath: "/order", body: JSON.stringify({ orderID: b.order_hash }) });
    secrets.push(other.signature);
    const res = await call("DELETE", `/v1/orders/${a.order_id}`, { key, body: { venue_auth: other } });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe("venue_rejected");
    expect(res.body.venue_error).toContain("Unauthorized");
    expect(res.text).not.toContain(other.signature);
    expect(res.text).not.toContain(o.creds.passphrase);
    expect(sim.state.venue.order(a.order_hash)?.status).toBe("live");
    expect(sim.state.venue.order(b.order_hash)?.status).toBe("live");
    expect((await call("GET", `/v1/orders/${a.order_id}`, { key })).body).toMatchObject({ status: "open", flagged_for_review: false });

    // Another account's valid headers: the venue cancels nothing of this owner's.
    const stranger = await newOwner();
    const theirs = await officialVenueAuth(stranger, { method: "DELETE", requestPath: "/order", body: JSON.stringify({ orderID: a.order_hash }) });
    secrets.push(theirs.signature);
    const res2 = await call("DELETE", `/v1/orders/${a.order_id}`, { key, body: { venue_auth: theirs } });
    expect(res2.status).toBe(502);
    expect(res2.body.code).toBe("venue_rejected");
    expect(sim.state.venue.order(a.order_hash)?.status).toBe("live");
  });

  test("bad venue_auth input is 400 and changes nothing, for the cancel and for the kill", async () => {
    const o = await newOwner();
    const { key, agentId } = await agentFor(o);
    const a = await placeOpen(o, key, agentId, 0.4);
    const good = await officialVenueAuth(o, { method: "DELETE", requestPath: "/order", body: JSON.stringify({ orderID: a.order_hash }) });
    secrets.push(good.signature);
    const bad = [
      { ...good, api_key: "line\nbreak" },
      { ...good, passphrase: "caf\u00e9" },
      { ...good, signature: "" },
      { ...good, timestamp: "soon" },
      { ...good, address: "0x1234" },
      { ...good, extra: "x" },
      "not an object",
    ];
    for (const venue_auth of bad) {
      const res = await call("DELETE", `/v1/orders/${a.order_id}`, { key, body: { venue_auth } });
      expect(res.status).toBe(400);
      expect(res.text).not.toContain(good.signature);
      const killed = await call("POST", `/v1/agents/${agentId}/kill`, { key, body: { venue_auth } });
      expect(killed.status).toBe(400);
    }
    expect((await call("DELETE", `/v1/orders/${a.order_id}`, { key, raw: "[1]" })).status).toBe(400);
    expect((await call("DELETE", `/v1/orders/${a.order_id}`, { key, raw: "{" })).status).toBe(400);
    expect(sim.state.venue.order(a.order_hash)?.status).toBe("live");
    expect((await call("GET", `/v1/orders/${a.order_id}`, { key })).body.status).toBe("open");
    expect((await call("GET", `/v1/agents/${agentId}`, { key })).body.breaker.state).toBe("closed");
    // Finally the good one works.
    const ok = await call("DELETE", `/v1/orders/${a.order_id}`, { key, body: { venue_auth: good } });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe("cancelled");
  });

  test("the kill with the official client's headers over DELETE /cancel-all: every order cancelled at the venue in one call, nothing flagged", async () => {
    const o = await newOwner();
    const { key, agentId } = await agentFor(o);
    const open = [await placeOpen(o, key, agentId, 0.4), await placeOpen(o, key, agentId, 0.41), await placeOpen(o, key, agentId, 0.42)];
    // One more still awaiting its signature: cancelled locally.
    const unsigned = await call("POST", "/v1/orders/intent", { key, body: { agent_id: agentId, market_id: TOKEN, side: "buy", size_usdc: 4, price: 0.43 } });
    expect(unsigned.status).toBe(201);
    expect((await o.client.getOpenOrders()).length).toBe(3);

    const venue_auth = await officialVenueAuth(o, { method: "DELETE", requestPath: "/cancel-all" });
    secrets.push(venue_auth.signature);
    const before = { all: routes("DELETE /cancel-all"), one: routes("DELETE /order"), many: routes("DELETE /orders") };
    const killed = await call("POST", `/v1/agents/${agentId}/kill`, { key, body: { reason: "test", venue_auth } });
    expect(killed.status).toBe(200);
    expect(killed.body.cancelled.sort()).toEqual([...open.map((x) => x.order_id), unsigned.body.order_id].sort());
    expect(killed.body.failed).toEqual([]);
    expect(killed.body.credentials_deleted).toBe(false);
    expect(killed.body.agent.breaker).toMatchObject({ state: "tripped", reason: "kill" });
    expect(killed.text).not.toContain(venue_auth.signature);
    // One DELETE /cancel-all, no per-order cancels.
    expect(routes("DELETE /cancel-all") - before.all).toBe(1);
    expect(routes("DELETE /order") - before.one).toBe(0);
    expect(routes("DELETE /orders") - before.many).toBe(0);
    expect(await o.client.getOpenOrders()).toEqual([]);
    for (const x of open) {
      expect((await o.client.getOrder(x.order_hash)).status).toBe("ORDER_STATUS_CANCELED");
      expect((await call("GET", `/v1/orders/${x.order_id}`, { key })).body).toMatchObject({ status: "cancelled", flagged_for_review: false });
    }
    const stats = await (await fetch(`${sim.url}/_sim/stats`)).json();
    for (const x of open) expect(stats.cancels[x.order_hash]).toBe(1);
  });

  test("the kill with a wrong venue_auth: the venue refuses the cancel-all, the orders are failed and flagged and keep resting", async () => {
    const o = await newOwner();
    const { key, agentId } = await agentFor(o);
    const a = await placeOpen(o, key, agentId, 0.4);
    // Signed over DELETE /order, sent for DELETE /cancel-all: the HMAC does not verify.
    const wrong = await officialVenueAuth(o, { method: "DELETE", requestPath: "/order" });
    secrets.push(wrong.signature);
    const before = routes("DELETE /cancel-all");
    const killed = await call("POST", `/v1/agents/${agentId}/kill`, { key, body: { venue_auth: wrong } });
    expect(killed.status).toBe(200);
    expect(killed.body.failed).toEqual([a.order_id]);
    expect(killed.body.cancelled).toEqual([]);
    // A refusal is not repeated.
    expect(routes("DELETE /cancel-all") - before).toBe(1);
    expect((await call("GET", `/v1/orders/${a.order_id}`, { key })).body).toMatchObject({ status: "failed", flagged_for_review: true });
    expect(sim.state.venue.order(a.order_hash)?.status).toBe("live");
    expect(live.t.logs.some((l) => l.includes("refused the owner's cancel-all"))).toBe(true);
    await o.client.cancelAll(); // tidy up: the owner cancels it
  });

  test("the kill's cancel-all is sent once more after a venue error, and confirms the orders then; an outage to the end fails and flags them", async () => {
    const faults = (f: Record<string, number>) => fetch(`${sim.url}/_sim/faults`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(f) });
    const NONE = { cancel_error_ratio: 0, cancel_error_status: 500, cancel_latency_ms: 0 };
    try {
      // 1. The first cancel-all is answered 503; the second, made while the fault is lifted, cancels.
      const o = await newOwner();
      const { key, agentId } = await agentFor(o);
      const a = await placeOpen(o, key, agentId, 0.4);
      const b = await placeOpen(o, key, agentId, 0.41);
      const venue_auth = await officialVenueAuth(o, { method: "DELETE", requestPath: "/cancel-all" });
      secrets.push(venue_auth.signature);
      expect((await faults({ cancel_error_ratio: 1, cancel_error_status: 503, cancel_latency_ms: 250 })).status).toBe(200);
      const before = routes("DELETE /cancel-all");
      const killing = call("POST", `/v1/agents/${agentId}/kill`, { key, body: { venue_auth } });
      // The second call has reached the venue and waits out its latency: lift the fault before it answers.
      while (routes("DELETE /cancel-all") - before < 2) await Bun.sleep(5);
      await faults(NONE);
      const killed = await killing;
      expect(killed.status).toBe(200);
      expect(killed.body.cancelled.sort()).toEqual([a.order_id, b.order_id].sort());
      expect(killed.body.failed).toEqual([]);
      expect(routes("DELETE /cancel-all") - before).toBe(2);
      expect(await o.client.getOpenOrders()).toEqual([]);

      // 2. The venue errs on every cancel-all: two calls, then the orders are failed and flagged.
      const o2 = await newOwner();
      const second = await agentFor(o2);
      const c = await placeOpen(o2, second.key, second.agentId, 0.4);
      const auth2 = await officialVenueAuth(o2, { method: "DELETE", requestPath: "/cancel-all" });
      secrets.push(auth2.signature);
      await faults({ cancel_error_ratio: 1, cancel_error_status: 503 });
      const before2 = routes("DELETE /cancel-all");
      const killed2 = await call("POST", `/v1/agents/${second.agentId}/kill`, { key: second.key, body: { venue_auth: auth2 } });
      expect(killed2.status).toBe(200);
      expect(killed2.body.failed).toEqual([c.order_id]);
      expect(routes("DELETE /cancel-all") - before2).toBe(2);
      expect((await call("GET", `/v1/orders/${c.order_id}`, { key: second.key })).body).toMatchObject({ status: "failed", flagged_for_review: true });
      await faults(NONE);
      expect(sim.state.venue.order(c.order_hash)?.status).toBe("live");
      await o2.client.cancelAll();
    } finally {
      await faults(NONE);
    }
  });

  test("through the SDK: the builders match the official client's headers; cancelOrder and kill with the owner's credentials", async () => {
    const o = await newOwner();
    const { key, agentId } = await agentFor(o);
    const sdk = new BrokerClient({ baseUrl: live.url, apiKey: key, retry: { retries: 0 } });
    const venueCredentials = { api_key: o.creds.key, api_secret: o.creds.secret, passphrase: o.creds.passphrase, address: o.wallet.account.address };

    // The SDK's builders give the official client's headers, byte for byte, at the same timestamp.
    const ts = Math.floor(Date.now() / 1000);
    const hash = `0x${"ab".repeat(32)}`;
    const official = await createL2Headers(o.wallet, o.creds, { method: "DELETE", requestPath: "/order", body: JSON.stringify({ orderID: hash }) }, ts);
    expect(buildCancelVenueAuth({ credentials: venueCredentials, venue_order_id: hash, timestamp: ts })).toEqual({
      address: official.POLY_ADDRESS,
      api_key: official.POLY_API_KEY,
      passphrase: official.POLY_PASSPHRASE,
      timestamp: official.POLY_TIMESTAMP,
      signature: official.POLY_SIGNATURE,
    });
    const officialAll = await createL2Headers(o.wallet, o.creds, { method: "DELETE", requestPath: "/cancel-all" }, ts);
    expect(buildCancelAllVenueAuth({ credentials: venueCredentials, timestamp: ts }).signature).toBe(officialAll.POLY_SIGNATURE);

    const place = async (price: number) => {
      const answer = (await sdk.placeIntent({ agent_id: agentId, market_id: TOKEN, side: "buy", size_usdc: 4, price })) as PayloadIntentAnswer;
      const sent = await sdk.signAndSubmit(answer, privateKeyToAccount(o.pk), { venueCredentials });
      expect(sent.status).toBe("open");
      return { order_id: answer.order_id, order_hash: answer.order_hash };
    };
    const a = await place(0.4);
    const b = await place(0.41);
    const c = await place(0.42);

    // Without the owner's keys the venue refuses: a typed error, the order stays open.
    const refused = await sdk.cancelOrder(a.order_id).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(VenueRejectedError);
    expect(sim.state.venue.order(a.order_hash)?.status).toBe("live");

    // With them (the SDK reads the order and signs its DELETE /order), and with a venue_auth built by hand.
    expect((await sdk.cancelOrder(a.order_id, { venueCredentials })).status).toBe("cancelled");
    const byHand = buildCancelVenueAuth({ credentials: venueCredentials, venue_order_id: b.order_hash });
    secrets.push(byHand.signature);
    expect((await sdk.cancelOrder(b.order_id, { venue_auth: byHand })).status).toBe("cancelled");
    expect((await o.client.getOpenOrders()).map((x) => x.id)).toEqual([c.order_hash]);

    // The kill: one DELETE /cancel-all with headers the SDK built.
    const before = routes("DELETE /cancel-all");
    const killed = await sdk.kill(agentId, { reason: "sdk" }, { venueCredentials });
    expect(killed.cancelled).toEqual([c.order_id]);
    expect(killed.failed).toEqual([]);
    expect(routes("DELETE /cancel-all") - before).toBe(1);
    expect(await o.client.getOpenOrders()).toEqual([]);
    expect((await sdk.getOrder(c.order_id)).flagged_for_review).toBe(false);
  });
});

test("a venue_auth bag that reaches a log call is redacted whole", () => {
  const line = redactFields({ msg: "x", venue_auth: { api_key: "k", passphrase: "p", timestamp: "1", signature: "s" } });
  expect(line.venue_auth).toBe("[redacted]");
});
