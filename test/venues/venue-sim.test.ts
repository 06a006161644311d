/**
 * The venue simulator over real HTTP on 127.0.0.1, driven through the ClobVenue adapter.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { OrderType as OfficialOrderType, orderToJsonV2 } from "@polymarket/clob-client-v2";
import { privateKeyToAccount } from "viem/accounts";
import { buildUnsignedOrder } from "../../src/eip712/order-typed-data.ts";
import { toUnits } from "../../src/domain/units.ts";
import { ClobVenue, serializePostOrderBody, VenueRequestError } from "../../src/venues/clob/clob-venue.ts";
import { buildL2Signature, l2Headers } from "../../src/venues/clob/l2-auth.ts";
import { orderHash } from "../../src/venues/paper/paper-venue.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { type Market, type OrderMessage, type OrderType, type VenueCredentials, VenueUnavailableError } from "../../src/venues/venue.ts";
import { orderMessage } from "../support/order-message.ts";
import { registerSimCredentials, SIM_MARKETS_FILE } from "../support/venue-sim.ts";

const NO_FAULTS = { latency_ms: 0, cancel_latency_ms: 0, cancel_hang_ratio: 0, error_ratio: 0, cancel_error_ratio: 0, cancel_error_status: 500, cancel_retry_after_s: 0 };
const ZERO32 = `0x${"00".repeat(32)}` as const;
const SIG = `0x${"cd".repeat(65)}` as const;
const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" as const;
const BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" as const;
const CAROL = "0x90F79bf6EB2c4f870365E785982E1f101E93b906" as const;

const ALICE_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" as const;
const BOB_KEY = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a" as const;

/** A real EIP-712 signature of a v1 order by `key`, under the order's market domain on chain 137. */
async function signOrder(key: `0x${string}`, order: OrderMessage): Promise<`0x${string}`> {
  const negRisk = sim.state.venue.marketForToken(order.tokenId)?.neg_risk ?? false;
  return privateKeyToAccount(key).signTypedData(buildUnsignedOrder({ chainId: 137, negRisk, message: order }) as any);
}

const secret = (n: number) => Buffer.alloc(32, n).toString("base64url"); // url-safe, unpadded on purpose
const BOTH: VenueCredentials = { api_key: "key-both", api_secret: secret(1), passphrase: "pp-both", address: ALICE };
const PLACE_ONLY: VenueCredentials = { api_key: "key-place", api_secret: secret(2), passphrase: "pp-place", address: BOB };
const CANCEL_ONLY: VenueCredentials = { api_key: "key-cancel", api_secret: secret(3), passphrase: "pp-cancel", address: CAROL };

let sim: VenueSim;
let venue: ClobVenue;
let market: Market; // the first market accepting orders (politics, tick 0.01)
let yes: string;
let no: string;

let salt = 1000;
const msg = (tokenId: string, signer: `0x${string}`, side: "buy" | "sell", price: string, shares: string): OrderMessage =>
  orderMessage(tokenId, signer, side, price, shares, { salt: ++salt, timestamp: Date.now() + salt });

async function delegated(creds: VenueCredentials, price: string, shares = "10", side: "buy" | "sell" = "buy", order_type: OrderType = "GTC", v = venue) {
  return v.placeDelegatedOrder({ credentials: creds, client_order_id: `ord_${salt}`, order: msg(yes, creds.address as `0x${string}`, side, price, shares), order_type, expiration: "0" });
}

async function faults(f: Record<string, number>) {
  const res = await fetch(`${sim.url}/_sim/faults`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(f) });
  expect(res.status).toBe(200);
}

async function stats(): Promise<{ requests: Record<string, number>; posts: Record<string, number>; cancels: Record<string, number> }> {
  return (await fetch(`${sim.url}/_sim/stats`)).json();
}

beforeAll(async () => {
  sim = startVenueSim({ port: 0, marketsFile: SIM_MARKETS_FILE, marketsPageSize: 4 });
  venue = new ClobVenue({ baseUrl: sim.url, timeoutMs: 2000 });
  await registerSimCredentials(sim, BOTH, ["order:place", "order:cancel"]);
  await registerSimCredentials(sim, PLACE_ONLY, ["order:place"]);
  await registerSimCredentials(sim, CANCEL_ONLY, ["order:cancel"]);
  const markets = await venue.listMarkets();
  market = markets.find((m) => m.accepting_orders && !m.closed && m.tick_size === "0.01")!;
  yes = market.tokens[0].token_id;
  no = market.tokens[1].token_id;
});

afterEach(async () => {
  const res = await fetch(`${sim.url}/_sim/reset`, { method: "POST" });
  expect(res.status).toBe(200);
});

afterAll(async () => {
  await sim?.stop();
});

describe("markets and books", () => {
  test("lists every market across pages, and resolves tokens", async () => {
    const markets = await venue.listMarkets();
    expect(markets).toHaveLength(6); // page size 4: two pages
    expect(new Set(markets.map((m) => m.category))).toEqual(new Set(["politics", "sports", "crypto", "economics"]));
    expect(markets.filter((m) => m.neg_risk)).toHaveLength(1);
    expect(markets.find((m) => m.tick_size === "0.001")).toBeDefined();
    expect(market.min_order_size).toBe("5");

    const fresh = new ClobVenue({ baseUrl: sim.url }); // no listing: goes through /markets-by-token
    const m = await fresh.getMarketByToken(no);
    expect(m).toEqual(market);
    // The wire round trip keeps every field of the markets file.
    expect(m).toEqual({ ...sim.state.venue.marketForToken(no)!, tokens: [...sim.state.venue.marketForToken(no)!.tokens] });
    expect(await fresh.getMarketByToken("12345")).toBeNull();
    expect(await venue.getMarketByToken("12345")).toBeNull();
  });

  test("books come back best first, equal to the engine's", async () => {
    const book = (await venue.getBook(yes))!;
    const engine = sim.state.venue.fullBook(yes)!;
    expect(book.bids).toEqual([...engine.bids]);
    expect(book.asks).toEqual([...engine.asks]);
    for (let i = 1; i < book.bids.length; i++) expect(Number(book.bids[i - 1].price)).toBeGreaterThan(Number(book.bids[i].price));
    for (let i = 1; i < book.asks.length; i++) expect(Number(book.asks[i - 1].price)).toBeLessThan(Number(book.asks[i].price));
    expect(Math.abs(book.timestamp_ms - Date.now())).toBeLessThan(5000);
    expect(book.last_trade_price).not.toBeNull();
    expect(await venue.getBook("12345")).toBeNull();
  });

  test("ping", async () => {
    expect(await venue.ping()).toBe(true);
    expect(await new ClobVenue({ baseUrl: "http://127.0.0.1:1", timeoutMs: 500 }).ping()).toBe(false);
  });
});

describe("credentials", () => {
  test("confirmCredentials is true for a registered key and false otherwise", async () => {
    expect(await venue.confirmCredentials(BOTH)).toBe(true);
    expect(await venue.confirmCredentials(PLACE_ONLY)).toBe(true);
    expect(await venue.confirmCredentials({ ...BOTH, api_secret: secret(9) })).toBe(false);
    expect(await venue.confirmCredentials({ ...BOTH, passphrase: "wrong" })).toBe(false);
    expect(await venue.confirmCredentials({ ...BOTH, api_key: "unknown" })).toBe(false);
    expect(await venue.confirmCredentials({ ...BOTH, api_key: "" })).toBe(false);
  });

  test("a bad or missing HMAC is refused with 401", async () => {
    const body = serializePostOrderBody({ order: msg(yes, ALICE, "buy", "0.40", "10"), signature: "", order_type: "GTC", expiration: "0", owner: BOTH.api_key });
    const headers = { ...l2Headers(BOTH, { method: "POST", path: "/order", body }), "Content-Type": "application/json" };
    const tampered = await fetch(`${sim.url}/order`, { method: "POST", headers, body: body.replace('"GTC"', '"GTD"') });
    expect(tampered.status).toBe(401);
    expect((await tampered.json()).error).toContain("Unauthorized");
    const missing = await fetch(`${sim.url}/order`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
    expect(missing.status).toBe(401);
    const wrongKey = await venue.placeDelegatedOrder({
      credentials: { ...BOTH, api_secret: secret(7) },
      client_order_id: "ord_x",
      order: msg(yes, ALICE, "buy", "0.40", "10"),
      order_type: "GTC",
      expiration: "0",
    });
    expect(wrongKey.ok).toBe(false);
    expect(!wrongKey.ok && wrongKey.error).toContain("Unauthorized");
    // The untampered request is accepted.
    const good = await fetch(`${sim.url}/order`, { method: "POST", headers, body });
    expect(good.status).toBe(200);
    const answer = await good.json();
    expect(answer).toMatchObject({ success: true, errorMsg: "", status: "live" });
    expect(await venue.cancelOrder({ venue_order_id: answer.orderID, credentials: BOTH })).toEqual({ ok: true });
  });
});

describe("orders", () => {
  test("a delegated order is placed, read and cancelled; a second cancel is done", async () => {
    const placed = await delegated(BOTH, "0.40");
    expect(placed).toMatchObject({ ok: true, status: "live", filled_usdc: "0" });
    if (!placed.ok) throw new Error(placed.error);
    const id = placed.venue_order_id;
    expect(id).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await venue.getOrder({ venue_order_id: id, credentials: BOTH })).toEqual({ venue_order_id: id, status: "live", filled_usdc: "0" });
    expect((await venue.getBook(yes))!.bids.find((l) => l.price === "0.4")).toEqual({ price: "0.4", size: "10" });

    expect(await venue.cancelOrder({ venue_order_id: id, credentials: BOTH })).toEqual({ ok: true });
    expect(await venue.getOrder({ venue_order_id: id, credentials: BOTH })).toEqual({ venue_order_id: id, status: "cancelled", filled_usdc: "0" });
    expect((await venue.getBook(yes))!.bids.find((l) => l.price === "0.4")).toBeUndefined();
    expect(await venue.cancelOrder({ venue_order_id: id, credentials: BOTH })).toEqual({ ok: true, already: true });

    expect(await stats()).toMatchObject({ posts: { [id]: 1 }, cancels: { [id]: 2 } });
    expect((await stats()).requests).toMatchObject({ "POST /order": 1, "DELETE /order": 2, "GET /data/order/{id}": 2 });
  });

  test("a marketable delegated order fills and reports the filled notional", async () => {
    const book = (await venue.getBook(yes))!;
    const best = book.asks[0];
    const r = await delegated(BOTH, best.price, "5", "buy", "FAK");
    expect(r).toMatchObject({ ok: true, status: "matched" });
    const expected = (toUnits(best.price, 6) * 5n).toString();
    expect(r.ok && toUnits(r.filled_usdc!, 6).toString()).toBe(expected);
    if (r.ok) expect((await venue.getOrder({ venue_order_id: r.venue_order_id, credentials: BOTH }))!.status).toBe("matched");
    // Cancelling a matched order counts as done.
    if (r.ok) expect(await venue.cancelOrder({ venue_order_id: r.venue_order_id, credentials: BOTH })).toEqual({ ok: true, already: true });
  });

  test("a signed order is posted with pass-through venue_auth over the documented body", async () => {
    const order = msg(yes, ALICE, "buy", "0.41", "12");
    const SIGNED = await signOrder(ALICE_KEY, order);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const body = serializePostOrderBody({ order, signature: SIGNED, order_type: "GTC", expiration: "0", owner: BOTH.api_key });
    const signature = buildL2Signature({ secret: BOTH.api_secret, timestamp, method: "POST", path: "/order", body });
    const auth = { address: ALICE, api_key: BOTH.api_key, passphrase: BOTH.passphrase!, timestamp, signature };
    const r = await venue.postSignedOrder({ order, signature: SIGNED, order_type: "GTC", expiration: "0", venue_auth: auth });
    expect(r).toMatchObject({ ok: true, status: "live" });
    expect(r.ok && r.venue_order_id).toBe(orderHash(order, { chainId: 137, negRisk: market.neg_risk }));

    // The same order again is refused with HTTP 200 success:false.
    const again = await venue.postSignedOrder({ order, signature: SIGNED, order_type: "GTC", expiration: "0", venue_auth: auth });
    expect(again).toEqual({ ok: false, error: "order already exists" });

    // An L2 signature computed over another body is refused.
    const next = msg(yes, ALICE, "buy", "0.41", "12");
    const other = await venue.postSignedOrder({ order: next, signature: await signOrder(ALICE_KEY, next), order_type: "GTC", expiration: "0", venue_auth: auth });
    expect(other.ok).toBe(false);
    expect(!other.ok && other.error).toContain("Unauthorized");
  });

  test("an order signed by someone else, or over other fields, is refused as invalid signature", async () => {
    const order = msg(yes, ALICE, "buy", "0.41", "12");
    const post = async (signature: `0x${string}`, o = order) => {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const body = serializePostOrderBody({ order: o, signature, order_type: "GTC", expiration: "0", owner: BOTH.api_key });
      const sig = buildL2Signature({ secret: BOTH.api_secret, timestamp, method: "POST", path: "/order", body });
      return venue.postSignedOrder({ order: o, signature, order_type: "GTC", expiration: "0", venue_auth: { address: ALICE, api_key: BOTH.api_key, passphrase: BOTH.passphrase!, timestamp, signature: sig } });
    };
    const byBob = await post(await signOrder(BOB_KEY, order));
    expect(!byBob.ok && byBob.error).toContain("invalid signature");
    const otherPrice = await post(await signOrder(ALICE_KEY, { ...order, makerAmount: String(BigInt(order.makerAmount) + 10000n) }));
    expect(!otherPrice.ok && otherPrice.error).toContain("invalid signature");
    expect(!(await post(SIG)).ok).toBe(true);
    expect(sim.state.venue.order(orderHash(order, { chainId: 137, negRisk: market.neg_risk }))).toBeUndefined();
  });

  test("venue refusals come back as ok:false", async () => {
    const offTick = await venue.placeDelegatedOrder({
      credentials: BOTH,
      client_order_id: "ord_t",
      order: msg(yes, ALICE, "buy", "0.405", "10"),
      order_type: "GTC",
      expiration: "0",
    });
    expect(offTick.ok).toBe(false);
    expect(!offTick.ok && offTick.error).toContain("tick size");
    const wrongSigner = await venue.placeDelegatedOrder({
      credentials: BOTH,
      client_order_id: "ord_s",
      order: msg(yes, BOB, "buy", "0.40", "10"),
      order_type: "GTC",
      expiration: "0",
    });
    expect(!wrongSigner.ok && wrongSigner.error).toContain("signer");
  });

  test("scopes: a place-only key cannot cancel; a cancel-only key cannot place; keys cancel only their own orders", async () => {
    const placed = await delegated(PLACE_ONLY, "0.39");
    expect(placed.ok).toBe(true);
    if (!placed.ok) return;
    const refused = await venue.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: PLACE_ONLY });
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.error).toContain("order:cancel");
    const notOwner = await venue.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH });
    expect(notOwner).toEqual({ ok: false, error: "not the owner of the order" });
    expect((await venue.getOrder({ venue_order_id: placed.venue_order_id, credentials: PLACE_ONLY }))!.status).toBe("live");

    const noPlace = await delegated(CANCEL_ONLY, "0.39");
    expect(noPlace.ok).toBe(false);
    expect(!noPlace.ok && noPlace.error).toContain("order:place");

    expect(await venue.cancelOrder({ venue_order_id: "0x" + "ee".repeat(32), credentials: BOTH })).toEqual({ ok: false, error: "order not found" });
  });

  test("batch cancel", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await delegated(BOTH, "0.3" + i);
      if (!r.ok) throw new Error(r.error);
      ids.push(r.venue_order_id);
    }
    await venue.cancelOrder({ venue_order_id: ids[0], credentials: BOTH });
    const out = await venue.cancelOrders({ venue_order_ids: [...ids, "0xabc"], credentials: BOTH });
    expect(out).toEqual({ [ids[0]]: { ok: true, already: true }, [ids[1]]: { ok: true }, [ids[2]]: { ok: true }, "0xabc": { ok: false, error: "order not found" } });
  });
});

describe("coalesced cancels", () => {
  test("cancels made together with the same credentials go out as one DELETE /orders; a lone one as DELETE /order", async () => {
    const batched = new ClobVenue({ baseUrl: sim.url, timeoutMs: 2000, coalesceCancels: true });
    const ids: string[] = [];
    for (const p of ["0.30", "0.31", "0.32"]) {
      const r = await delegated(BOTH, p);
      if (!r.ok) throw new Error(r.error);
      ids.push(r.venue_order_id);
    }
    const before = { batch: sim.state.routes.get("DELETE /orders") ?? 0, single: sim.state.routes.get("DELETE /order") ?? 0 };
    const signal = AbortSignal.timeout(2000);
    const results = await Promise.all([...ids, "0xabc"].map((id) => batched.cancelOrder({ venue_order_id: id, credentials: BOTH }, { signal })));
    expect(results).toEqual([{ ok: true }, { ok: true }, { ok: true }, { ok: false, error: "order not found" }]);
    expect((sim.state.routes.get("DELETE /orders") ?? 0) - before.batch).toBe(1);
    expect((sim.state.routes.get("DELETE /order") ?? 0) - before.single).toBe(0);
    const lone = await delegated(BOTH, "0.33");
    if (!lone.ok) throw new Error(lone.error);
    expect(await batched.cancelOrder({ venue_order_id: lone.venue_order_id, credentials: BOTH })).toEqual({ ok: true });
    expect((sim.state.routes.get("DELETE /order") ?? 0) - before.single).toBe(1);
  });

  test("a caller whose own signal aborts stops waiting; the others still get their answer", async () => {
    const batched = new ClobVenue({ baseUrl: sim.url, timeoutMs: 2000, coalesceCancels: true });
    const a = await delegated(BOTH, "0.30");
    const b = await delegated(BOTH, "0.31");
    if (!a.ok || !b.ok) throw new Error("placement failed");
    await faults({ cancel_latency_ms: 300 });
    const quick = AbortSignal.timeout(50);
    const [first, second] = await Promise.allSettled([
      batched.cancelOrder({ venue_order_id: a.venue_order_id, credentials: BOTH }, { signal: quick }),
      batched.cancelOrder({ venue_order_id: b.venue_order_id, credentials: BOTH }, { signal: AbortSignal.timeout(2000) }),
    ]);
    expect(first.status).toBe("rejected");
    expect(first.status === "rejected" && first.reason).toBeInstanceOf(VenueUnavailableError);
    expect(second).toEqual({ status: "fulfilled", value: { ok: true } });
  });
});

describe("faults", () => {
  test("error_ratio 1: posts fail with the venue's error and are counted", async () => {
    await faults({ error_ratio: 1 });
    const order = msg(yes, ALICE, "buy", "0.40", "10");
    const r = await venue.placeDelegatedOrder({ credentials: BOTH, client_order_id: "ord_e", order, order_type: "GTC", expiration: "0" });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toContain("simulated fault");
    const id = orderHash(order, { chainId: 137, negRisk: market.neg_risk });
    expect((await stats()).posts).toEqual({ [id]: 1 });
    expect(sim.state.venue.order(id)).toBeUndefined(); // never placed
  });

  test("latency beyond the client timeout throws VenueUnavailableError", async () => {
    await faults({ latency_ms: 1500 });
    const quick = new ClobVenue({ baseUrl: sim.url, timeoutMs: 200 });
    const t0 = performance.now();
    const err = await quick.getBook(yes).catch((e) => e);
    expect(err).toBeInstanceOf(VenueUnavailableError);
    expect(String(err.message)).toContain("no answer within 200 ms");
    expect(performance.now() - t0).toBeLessThan(1200);
    const post = await delegated(BOTH, "0.40", "10", "buy", "GTC", quick).catch((e) => e);
    expect(post).toBeInstanceOf(VenueUnavailableError);
  });

  test("a hung cancel is aborted promptly by the caller's signal", async () => {
    const placed = await delegated(BOTH, "0.38");
    if (!placed.ok) throw new Error(placed.error);
    await faults({ cancel_hang_ratio: 1 });
    const patient = new ClobVenue({ baseUrl: sim.url, timeoutMs: 30_000 });
    const t0 = performance.now();
    const err = await patient
      .cancelOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH }, { signal: AbortSignal.timeout(150) })
      .catch((e) => e);
    const elapsed = performance.now() - t0;
    expect(err).toBeInstanceOf(VenueUnavailableError);
    expect(String(err.message)).toContain("aborted by the caller");
    expect(elapsed).toBeLessThan(1000);
    expect((await stats()).cancels).toEqual({ [placed.venue_order_id]: 1 });
    // The held request is released once the client went away; the order was not cancelled.
    for (let i = 0; i < 50 && sim.state.hanging > 0; i++) await Bun.sleep(10);
    expect(sim.state.hanging).toBe(0);
    expect((await venue.getOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH }))!.status).toBe("live");
    await faults({ cancel_hang_ratio: 0 });
    expect(await venue.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH })).toEqual({ ok: true });
  });

  test("POST /_sim/reset answers a held cancel (503, nothing cancelled) as well as clearing the faults", async () => {
    const placed = await delegated(BOTH, "0.37");
    if (!placed.ok) throw new Error(placed.error);
    await faults({ cancel_hang_ratio: 1 });
    const patient = new ClobVenue({ baseUrl: sim.url, timeoutMs: 30_000 });
    const pending = patient.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH }).then(
      (r) => ({ r }),
      (e) => ({ e }),
    );
    for (let i = 0; i < 100 && sim.state.hanging === 0; i++) await Bun.sleep(5);
    expect(sim.state.hanging).toBe(1);
    const reset = await fetch(`${sim.url}/_sim/reset`, { method: "POST", body: "{}" });
    expect(reset.status).toBe(200);
    expect(sim.state.hanging).toBe(0);
    const outcome = (await pending) as { r?: unknown; e?: unknown };
    // The 503 of the release: never a confirmed cancel, and the order still rests.
    if ("r" in outcome) expect(outcome.r).not.toEqual({ ok: true });
    else expect(outcome.e).toBeInstanceOf(VenueUnavailableError);
    expect((await venue.getOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH }))!.status).toBe("live");
    // The faults are gone: the next cancel goes through.
    expect(await venue.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH })).toEqual({ ok: true });
  });

  test("cancel_error_ratio: cancels answer the configured status (429 with Retry-After), nothing is cancelled", async () => {
    const placed = await delegated(BOTH, "0.40");
    if (!placed.ok) throw new Error(placed.error);
    await faults({ cancel_error_ratio: 1, cancel_error_status: 429, cancel_retry_after_s: 2 });
    const limited = await venue.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH });
    expect(limited).toMatchObject({ ok: false, status: 429, retry_after_s: 2 });
    const batch = await venue.cancelOrders({ venue_order_ids: [placed.venue_order_id], credentials: BOTH });
    expect(batch[placed.venue_order_id]).toMatchObject({ ok: false, status: 429, retry_after_s: 2 });
    await faults({ cancel_error_status: 500 });
    const failed = await venue.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH });
    expect(failed).toEqual({ ok: false, error: "Internal server error (simulated fault)", status: 500 });
    expect(sim.state.venue.order(placed.venue_order_id)!.status).toBe("live");
    expect((await stats()).cancels[placed.venue_order_id]).toBe(3);
    await faults({ cancel_error_ratio: 0 });
    expect(await venue.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH })).toEqual({ ok: true });
  });

  test("cancel_error_ratio: cancels answer 500, or 429 with Retry-After; the order stays live and the error carries both", async () => {
    const placed = await delegated(BOTH, "0.37");
    if (!placed.ok) throw new Error(placed.error);
    await faults({ cancel_error_ratio: 1 });
    const five = await venue.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH });
    expect(five).toEqual({ ok: false, error: "Internal server error (simulated fault)", status: 500 });
    await faults({ cancel_error_status: 429, cancel_retry_after_s: 2 });
    const limited = await venue.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH });
    expect(limited).toEqual({ ok: false, error: "Too Many Requests (simulated fault)", status: 429, retry_after_s: 2 });
    const batch = await venue.cancelOrders({ venue_order_ids: [placed.venue_order_id], credentials: BOTH });
    expect(batch[placed.venue_order_id]).toEqual(limited);
    expect((await venue.getOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH }))!.status).toBe("live");
    expect((await stats()).cancels).toEqual({ [placed.venue_order_id]: 3 });
    await faults({ cancel_error_ratio: 0 });
    expect(await venue.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: BOTH })).toEqual({ ok: true });
  });

  test("fault settings are validated and reset", async () => {
    const bad = await fetch(`${sim.url}/_sim/faults`, { method: "POST", body: JSON.stringify({ error_ratio: 2 }) });
    expect(bad.status).toBe(400);
    const unknown = await fetch(`${sim.url}/_sim/faults`, { method: "POST", body: JSON.stringify({ jitter: 1 }) });
    expect(unknown.status).toBe(400);
    await faults({ latency_ms: 5, cancel_latency_ms: 7 });
    const none = { latency_ms: 0, cancel_latency_ms: 0, cancel_hang_ratio: 0, error_ratio: 0, cancel_error_ratio: 0, cancel_error_status: 500, cancel_retry_after_s: 1, ws_delay_ms: 0, ws_drop_ratio: 0, ws_refuse_ratio: 0, trade_mine_ms: 0, trade_fail_ratio: 0 };
    expect(await (await fetch(`${sim.url}/_sim/faults`)).json()).toEqual({ ...none, latency_ms: 5, cancel_latency_ms: 7 });
    const badStatus = await fetch(`${sim.url}/_sim/faults`, { method: "POST", body: JSON.stringify({ cancel_error_status: 404 }) });
    expect(badStatus.status).toBe(400);
    await fetch(`${sim.url}/_sim/reset`, { method: "POST" });
    expect(await (await fetch(`${sim.url}/_sim/faults`)).json()).toEqual(none);
  });
});

describe("load", () => {
  test("1,000 open orders, then 64 concurrent cancels with cancel latency", async () => {
    const before = sim.state.venue.restingCount();
    const ids: string[] = [];
    const prices = ["0.30", "0.31", "0.32", "0.33", "0.34", "0.35", "0.36", "0.37"];
    const batch = 100;
    for (let i = 0; i < 1000; i += batch) {
      const rs = await Promise.all(
        Array.from({ length: batch }, (_, j) => delegated(BOTH, prices[(i + j) % prices.length], "5")),
      );
      for (const r of rs) {
        if (!r.ok) throw new Error(r.error);
        ids.push(r.venue_order_id);
      }
    }
    expect(new Set(ids).size).toBe(1000);
    expect(sim.state.venue.restingCount()).toBe(before + 1000);

    await faults({ cancel_latency_ms: 50 });
    const t0 = performance.now();
    const results = await Promise.all(ids.slice(0, 64).map((id) => venue.cancelOrder({ venue_order_id: id, credentials: BOTH })));
    const elapsed = performance.now() - t0;
    expect(results.every((r) => r.ok)).toBe(true);
    expect(elapsed).toBeLessThan(1500); // concurrent: ~one cancel latency, not 64 of them
    expect(sim.state.venue.restingCount()).toBe(before + 936);
    const s = await stats();
    expect(Object.keys(s.cancels)).toHaveLength(64);
    expect(Object.values(s.cancels).every((n) => n === 1)).toBe(true);

    // Clean up the rest so the book is as the fixture left it.
    const rest = await venue.cancelOrders({ venue_order_ids: ids.slice(64), credentials: BOTH });
    expect(Object.values(rest).every((r) => r.ok)).toBe(true);
    expect(sim.state.venue.restingCount()).toBe(before);
  });
});

describe("lifecycle", () => {
  test("stop() returns promptly while a cancel is held open", async () => {
    const other = startVenueSim({ port: 0, marketsFile: SIM_MARKETS_FILE });
    const c = { api_key: "k", api_secret: secret(4), passphrase: "p", address: ALICE };
    await fetch(`${other.url}/_sim/credentials`, { method: "POST", body: JSON.stringify({ ...c, scopes: ["order:place", "order:cancel"] }) });
    const v = new ClobVenue({ baseUrl: other.url, timeoutMs: 20_000 });
    const placed = await delegated(c, "0.40", "10", "buy", "GTC", v);
    if (!placed.ok) throw new Error(placed.error);
    await fetch(`${other.url}/_sim/faults`, { method: "POST", body: JSON.stringify({ cancel_hang_ratio: 1 }) });
    const pending = v.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: c }).then(
      (r) => ({ r }),
      (e) => ({ e }),
    );
    for (let i = 0; i < 100 && other.state.hanging === 0; i++) await Bun.sleep(5);
    expect(other.state.hanging).toBe(1);
    const t0 = performance.now();
    await other.stop();
    expect(performance.now() - t0).toBeLessThan(1000);
    const outcome = (await pending) as { r?: unknown; e?: unknown };
    // Either the 503 release or the closed connection: never a confirmed cancel.
    if ("r" in outcome) expect(outcome.r).not.toEqual({ ok: true });
    else expect(outcome.e).toBeInstanceOf(VenueUnavailableError);
  });
});

describe("ClobVenue against Polymarket-shaped answers (stub fetch)", () => {
  type Seen = { url: string; method: string; headers: Record<string, string>; body?: string };
  const stub = (answer: (req: Seen) => Response | Promise<Response>) => {
    const seen: Seen[] = [];
    const f = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const req: Seen = {
        url: String(input),
        method: init?.method ?? "GET",
        headers: Object.fromEntries(new Headers(init?.headers).entries()),
        body: typeof init?.body === "string" ? init.body : undefined,
      };
      seen.push(req);
      return answer(req);
    }) as typeof fetch;
    return { venue: new ClobVenue({ baseUrl: "https://clob.example/", fetch: f }), seen };
  };
  const j = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
  const order: OrderMessage = {
    salt: "479249096354",
    maker: ALICE,
    signer: ALICE,
    tokenId: "71321045679252212594626385532706912750332728571942532289631379312455583992563",
    makerAmount: "5200000",
    takerAmount: "10000000",
    side: 0,
    signatureType: 0,
    timestamp: "1713398400000",
    metadata: ZERO32,
    builder: ZERO32,
  };

  test("the POST /order body is the documented serialization and venue_auth passes through", async () => {
    const { venue: v, seen } = stub(() => j({ success: true, errorMsg: "", orderID: "0xabc", status: "live", makingAmount: "0", takingAmount: "0" }));
    const auth = { address: ALICE, api_key: "uuid-key", passphrase: "pp", timestamp: "1713398400", signature: "c2ln" };
    const r = await v.postSignedOrder({ order, signature: SIG, order_type: "GTC", expiration: "0", venue_auth: auth });
    expect(r).toEqual({ ok: true, venue_order_id: "0xabc", status: "live", filled_usdc: "0", filled_shares: "0" });
    expect(seen[0].url).toBe("https://clob.example/order");
    expect(seen[0].method).toBe("POST");
    expect(seen[0].body).toBe(
      `{"deferExec":false,"postOnly":false,"order":{"salt":479249096354,"maker":"${ALICE}","signer":"${ALICE}","tokenId":"${order.tokenId}",` +
        `"makerAmount":"5200000","takerAmount":"10000000","side":"BUY","signatureType":0,"timestamp":"1713398400000","expiration":"0",` +
        `"metadata":"${ZERO32}","builder":"${ZERO32}","signature":"${SIG}"},"owner":"uuid-key","orderType":"GTC"}`,
    );
    // The official client's own serialization of the same order, byte for byte.
    const official = { ...order, side: "BUY", expiration: "0", signature: SIG } as any;
    expect(seen[0].body).toBe(JSON.stringify(orderToJsonV2(official, "uuid-key", OfficialOrderType.GTC)));
    expect(seen[0].body).toBe(serializePostOrderBody({ order, signature: SIG, order_type: "GTC", expiration: "0", owner: "uuid-key" }));
    expect(seen[0].headers).toMatchObject({
      poly_address: ALICE,
      poly_api_key: "uuid-key",
      poly_passphrase: "pp",
      poly_timestamp: "1713398400",
      poly_signature: "c2ln",
      "content-type": "application/json",
    });
  });

  test("delegated orders are signed here with L2 headers over the exact body", async () => {
    const { venue: v, seen } = stub(() => j({ success: true, errorMsg: "", orderID: "0xdef", status: "matched", makingAmount: "5.2", takingAmount: "10" }));
    const r = await v.placeDelegatedOrder({ credentials: BOTH, client_order_id: "ord_1", order, order_type: "FOK", expiration: "0" });
    // A buy's making amount is the USDC paid, its taking amount the shares bought.
    expect(r).toEqual({ ok: true, venue_order_id: "0xdef", status: "matched", filled_usdc: "5.2", filled_shares: "10" });
    const h = seen[0].headers;
    expect(JSON.parse(seen[0].body!).order.signature).toBe("");
    expect(h.poly_signature).toBe(buildL2Signature({ secret: BOTH.api_secret, timestamp: h.poly_timestamp, method: "POST", path: "/order", body: seen[0].body }));
    expect(h.poly_api_key).toBe(BOTH.api_key);
  });

  test("both failure shapes are refusals; gateway errors and non-JSON 5xx are unavailability", async () => {
    const answers = [
      j({ success: false, errorMsg: "not enough balance / allowance", orderID: "", status: "" }),
      j({ error: "invalid order payload" }, 400),
      j({ error: "Internal error" }, 500),
    ];
    let i = 0;
    const { venue: v } = stub(() => answers[i++]);
    const post = () => v.postSignedOrder({ order, signature: SIG, order_type: "GTC", expiration: "0" });
    expect(await post()).toEqual({ ok: false, error: "not enough balance / allowance" });
    expect(await post()).toEqual({ ok: false, error: "invalid order payload" });

    expect(await post()).toEqual({ ok: false, error: "Internal error" });
    for (const res of [new Response("upstream", { status: 502 }), j({ error: "busy" }, 503), new Response("<html>oops</html>", { status: 500 })]) {
      const { venue: w } = stub(() => res);
      await expect(w.postSignedOrder({ order, signature: SIG, order_type: "GTC", expiration: "0" })).rejects.toBeInstanceOf(VenueUnavailableError);
    }
    const { venue: down } = stub(() => {
      throw new TypeError("Unable to connect");
    });
    const err = await down.getBook("1").catch((e) => e);
    expect(err).toBeInstanceOf(VenueUnavailableError);
    expect(err.message).toContain("connection failed");
  });

  test("cancel answers: canceled, already canceled or matched (any case), other reasons", async () => {
    const answers = [
      j({ canceled: ["0x1"], not_canceled: {} }),
      j({ canceled: [], not_canceled: { "0x1": "Order can't be found - Already Canceled or Matched" } }),
      j({ canceled: [], not_canceled: { "0x1": "matched orders can't be canceled" } }),
      j({ canceled: [], not_canceled: { "0x1": "order is in cancel-only market" } }),
      j({ canceled: [], not_canceled: {} }),
      j({ error: "Unauthorized/Invalid api key" }, 401),
    ];
    let i = 0;
    const { venue: v, seen } = stub(() => answers[i++]);
    const cancel = () => v.cancelOrder({ venue_order_id: "0x1", credentials: BOTH });
    expect(await cancel()).toEqual({ ok: true });
    expect(await cancel()).toEqual({ ok: true, already: true });
    expect(await cancel()).toEqual({ ok: true, already: true });
    expect(await cancel()).toEqual({ ok: false, error: "order is in cancel-only market" });
    expect(await cancel()).toEqual({ ok: false, error: "the venue did not confirm the cancellation" });
    expect(await cancel()).toEqual({ ok: false, error: "Unauthorized/Invalid api key", status: 401 });
    expect(seen[0].method).toBe("DELETE");
    expect(seen[0].body).toBe('{"orderID":"0x1"}');
    expect(seen[0].headers.poly_signature).toBe(
      buildL2Signature({ secret: BOTH.api_secret, timestamp: seen[0].headers.poly_timestamp, method: "DELETE", path: "/order", body: '{"orderID":"0x1"}' }),
    );
  });

  test("books listed worst first are normalized best first", async () => {
    const { venue: v, seen } = stub(() =>
      j({
        market: "0xc",
        asset_id: "7",
        timestamp: "1713398400123",
        hash: "h",
        bids: [
          { price: "0.01", size: "100" },
          { price: "0.47", size: "20" },
          { price: "0.48", size: "10" },
        ],
        asks: [
          { price: "0.99", size: "100" },
          { price: "0.53", size: "30" },
          { price: "0.52", size: "15" },
        ],
        min_order_size: "5",
        tick_size: "0.01",
        neg_risk: false,
        last_trade_price: "0.500",
      }),
    );
    expect(await v.getBook("7")).toEqual({
      token_id: "7",
      bids: [
        { price: "0.48", size: "10" },
        { price: "0.47", size: "20" },
        { price: "0.01", size: "100" },
      ],
      asks: [
        { price: "0.52", size: "15" },
        { price: "0.53", size: "30" },
        { price: "0.99", size: "100" },
      ],
      last_trade_price: "0.500",
      timestamp_ms: 1713398400123,
    });
    expect(seen[0].url).toBe("https://clob.example/book?token_id=7");
  });

  test("orders read back with Polymarket statuses and decimal sizes; unexpected 4xx throws", async () => {
    const answers = [
      j({ id: "0x1", status: "ORDER_STATUS_LIVE", side: "BUY", original_size: "100.0000", size_matched: "25.0000", price: "0.5000" }),
      j({ id: "0x1", status: "CANCELED", side: "BUY", original_size: "100", size_matched: "0", price: "0.5" }),
      j({ error: "not found" }, 404),
      j({ error: "Unauthorized/Invalid api key" }, 401),
    ];
    let i = 0;
    const { venue: v, seen } = stub(() => answers[i++]);
    expect(await v.getOrder({ venue_order_id: "0x1", credentials: BOTH })).toEqual({ venue_order_id: "0x1", status: "live", filled_usdc: "12.5" });
    expect(await v.getOrder({ venue_order_id: "0x1", credentials: BOTH })).toEqual({ venue_order_id: "0x1", status: "cancelled", filled_usdc: "0" });
    expect(await v.getOrder({ venue_order_id: "0x1", credentials: BOTH })).toBeNull();
    await expect(v.getOrder({ venue_order_id: "0x1", credentials: BOTH })).rejects.toBeInstanceOf(VenueRequestError);
    expect(seen[0].url).toBe("https://clob.example/data/order/0x1");
    expect(seen[0].headers.poly_api_key).toBe(BOTH.api_key);
  });

  test("a market's version is its own, else the venue's GET /version (3: v2)", async () => {
    const market = (cid: string, version?: string) => ({
      condition_id: cid,
      question: "Q?",
      end_date_iso: "2028-01-01T00:00:00Z",
      active: true,
      closed: false,
      accepting_orders: true,
      neg_risk: false,
      minimum_order_size: 5,
      minimum_tick_size: 0.01,
      ...(version ? { version } : {}),
      tokens: [{ token_id: cid === "0xa" ? "1" : "2", outcome: "Yes", price: 0.5 }],
    });
    const { venue: v } = stub((req) =>
      req.url.endsWith("/version") ? j({ version: 3 }) : j({ limit: 2, count: 2, next_cursor: "LTE=", data: [market("0xa"), market("0xb", "v1")] }),
    );
    expect((await v.listMarkets()).map((m) => [m.condition_id, m.version])).toEqual([
      ["0xa", "v2"],
      ["0xb", "v1"],
    ]);
    expect(await v.orderVersion()).toBe(3);
  });

  test("markets are read page by page until next_cursor LTE=", async () => {
    const page = (cid: string, token: string, next: string) =>
      j({
        limit: 1,
        count: 1,
        next_cursor: next,
        data: [
          {
            condition_id: cid,
            question: "Q?",
            end_date_iso: "2028-01-01T00:00:00Z",
            active: true,
            closed: false,
            accepting_orders: true,
            neg_risk: false,
            minimum_order_size: 5,
            minimum_tick_size: 0.001,
            tags: ["All", "Crypto"],
            tokens: [{ token_id: token, outcome: "Yes", price: 0.5 }],
          },
        ],
      });
    const { venue: v, seen } = stub((req) => (req.url.endsWith("MA%3D%3D") ? page("0xa", "1", "MQ==") : page("0xb", "2", "LTE=")));
    const markets = await v.listMarkets();
    expect(markets.map((m) => [m.condition_id, m.category, m.tick_size, m.min_order_size])).toEqual([
      ["0xa", "crypto", "0.001", "5"],
      ["0xb", "crypto", "0.001", "5"],
    ]);
    expect(seen.map((s) => s.url)).toEqual([
      "https://clob.example/version",
      "https://clob.example/markets?next_cursor=MA%3D%3D",
      "https://clob.example/markets?next_cursor=MQ%3D%3D",
    ]);
    expect(markets.map((m) => m.version)).toEqual(["v1", "v1"]); // no version anywhere: v1
    // Cached: token lookups and a second listing make no more requests.
    expect((await v.getMarketByToken("2"))?.condition_id).toBe("0xb");
    expect(await v.getMarketByToken("3")).toBeNull();
    await v.listMarkets();
    expect(seen).toHaveLength(3);
  });
});
