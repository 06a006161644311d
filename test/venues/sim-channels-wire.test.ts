/**
 * The simulator's channels on the wire (src/venues/sim/sim-channels.ts), read over raw WebSockets:
 * price_change entries carry the absolute size of each level the placements, cancels and expiries
 * touched (equal to GET /book), "0" for a level that emptied, best_bid/best_ask and an opaque 40-hex
 * hash; what one tick changed in a book goes out as one price_change; user-channel events stay one
 * object per frame.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { toUnits } from "../../src/domain/units.ts";
import { serializeCancelOrderBody, serializePostOrderBody, serializePostOrdersBody } from "../../src/venues/clob/clob-venue.ts";
import { l2Headers } from "../../src/venues/clob/l2-auth.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import type { OrderMessage, OrderType } from "../../src/venues/venue.ts";
import { orderMessage } from "../support/order-message.ts";
import { until } from "../support/until.ts";
import { openSimSocket, registerSimCredentials, SIM_MARKETS_FILE } from "../support/venue-sim.ts";

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" as const;
const CREDS = { api_key: "key-wire", api_secret: Buffer.alloc(32, 9).toString("base64url"), passphrase: "pp-wire", address: ALICE };

let sim: VenueSim;
let clock = Date.now();
let token: string;
let condition: string;
let bestBid: bigint;
let market: WebSocket;
let user: WebSocket;
const marketFrames: unknown[] = [];
const userFrames: unknown[] = [];

let salt = 9000;
const msg = (side: "buy" | "sell", price: string, shares: string): OrderMessage => orderMessage(token, ALICE, side, price, shares, { salt: ++salt, timestamp: clock + salt });

async function signed(method: string, path: string, body: string): Promise<any> {
  const headers = l2Headers(CREDS, { method, path, body, timestamp: Math.floor(clock / 1000) });
  const r = await fetch(`${sim.url}${path}`, { method, body, headers: { ...headers, "Content-Type": "application/json" } });
  expect(r.status).toBe(200);
  return r.json();
}

const place = (order: OrderMessage, order_type: OrderType = "GTC", expiration = "0") =>
  signed("POST", "/order", serializePostOrderBody({ order, signature: "", order_type, expiration, owner: CREDS.api_key }));

/** The price_change frames received from index `from` on. */
const priceChanges = (from: number) => marketFrames.slice(from).filter((f: any) => f?.event_type === "price_change") as any[];

async function bookLevel(side: "bids" | "asks", price: string): Promise<string | undefined> {
  const b = (await (await fetch(`${sim.url}/book?token_id=${token}`)).json()) as Record<"bids" | "asks", { price: string; size: string }[]>;
  return b[side].find((l) => toUnits(l.price, 6) === toUnits(price, 6))?.size;
}

const tickBelow = (n: number) => ((Number(bestBid) - n * 10_000) / 1e6).toFixed(2);

beforeAll(async () => {
  sim = startVenueSim({ port: 0, marketsFile: SIM_MARKETS_FILE, paper: { now: () => clock } });
  await registerSimCredentials(sim, CREDS);
  const markets = (await (await fetch(`${sim.url}/markets`)).json()) as { data: any[] };
  const m = markets.data.find((x) => x.accepting_orders && !x.closed && x.minimum_tick_size === 0.01 && !x.neg_risk)!;
  token = m.tokens[0].token_id;
  condition = m.condition_id;
  const book = (await (await fetch(`${sim.url}/book?token_id=${token}`)).json()) as { bids: { price: string }[] };
  bestBid = book.bids.map((l) => toUnits(l.price, 6)).reduce((a, b) => (a > b ? a : b));
  market = await openSimSocket(sim, "/ws/market", marketFrames, { first: { assets_ids: [token], type: "market" } });
  user = await openSimSocket(sim, "/ws/user", userFrames, { first: { auth: { apiKey: CREDS.api_key, secret: CREDS.api_secret, passphrase: CREDS.passphrase }, type: "user" } });
  await until("the book snapshot", () => marketFrames.length > 0);
});

afterAll(async () => {
  market?.close();
  user?.close();
  await sim?.stop();
});

describe("the simulator's channels on the wire", () => {
  test("a resting order: one price_change with the level's absolute size (as GET /book), best prices and a 40-hex hash; its PLACEMENT is one object", async () => {
    const price = tickBelow(3);
    const from = marketFrames.length;
    const fromUser = userFrames.length;
    const a = await place(msg("buy", price, "7"));
    expect(a.success).toBe(true);
    const [pc] = await until("the price_change", () => (priceChanges(from).length ? priceChanges(from) : null));
    expect(pc.market).toBe(condition);
    expect(pc.timestamp).toMatch(/^[0-9]+$/);
    expect(pc.price_changes).toHaveLength(1);
    const e = pc.price_changes[0];
    expect(e).toMatchObject({ asset_id: token, side: "BUY", size: await bookLevel("bids", price) });
    expect(toUnits(e.price, 6)).toBe(toUnits(price, 6));
    expect(toUnits(e.best_bid, 6)).toBe(bestBid);
    expect(e.hash).toMatch(/^[0-9a-f]{40}$/);
    const placement = await until("the PLACEMENT", () => userFrames.slice(fromUser).find((f: any) => f?.type === "PLACEMENT") as any);
    expect(Array.isArray(placement)).toBe(false);
    expect(placement).toMatchObject({ event_type: "order", id: a.orderID, status: "LIVE", original_size: "7", size_matched: "0" });
  });

  test("what one request changed goes out as one price_change, bids best first; a cancel sets the level back, 0 when it empties", async () => {
    const [p1, p2] = [tickBelow(5), tickBelow(4)];
    const from = marketFrames.length;
    const body = serializePostOrdersBody([
      { order: msg("buy", p1, "6"), signature: "", order_type: "GTC", expiration: "0", owner: CREDS.api_key },
      { order: msg("buy", p2, "5"), signature: "", order_type: "GTC", expiration: "0", owner: CREDS.api_key },
    ]);
    const out = (await signed("POST", "/orders", body)) as { success: boolean; orderID: string }[];
    expect(out.map((o) => o.success)).toEqual([true, true]);
    const [pc] = await until("the price_change", () => (priceChanges(from).length ? priceChanges(from) : null));
    await Bun.sleep(50);
    expect(priceChanges(from)).toHaveLength(1);
    expect(pc.price_changes.map((e: any) => [toUnits(e.price, 6), e.size, e.side])).toEqual([
      [toUnits(p2, 6), await bookLevel("bids", p2), "BUY"],
      [toUnits(p1, 6), await bookLevel("bids", p1), "BUY"],
    ]);
    expect(new Set(pc.price_changes.map((e: any) => e.hash)).size).toBe(2);

    // Cancelling the order alone at p2: that level leaves the book, told as size "0".
    const before = marketFrames.length;
    expect(await bookLevel("bids", p2)).toBe("5");
    const c = await signed("DELETE", "/order", serializeCancelOrderBody(out[1].orderID));
    expect(c.canceled).toEqual([out[1].orderID]);
    const [gone] = await until("the cancel's price_change", () => (priceChanges(before).length ? priceChanges(before) : null));
    expect(gone.price_changes.map((e: any) => [toUnits(e.price, 6), e.size, e.side])).toEqual([[toUnits(p2, 6), "0", "BUY"]]);
    expect(await bookLevel("bids", p2)).toBeUndefined();
  });

  test("a GTD order's expiry: its level's price_change (size 0 when it was alone) and a CANCELLATION", async () => {
    const price = tickBelow(7);
    const from = marketFrames.length;
    const fromUser = userFrames.length;
    const a = await place(msg("buy", price, "8"), "GTD", String(Math.floor(clock / 1000) + 60));
    expect(a.success).toBe(true);
    await until("the level", () => priceChanges(from).some((f) => f.price_changes.some((e: any) => toUnits(e.price, 6) === toUnits(price, 6) && e.size === "8")));
    const afterPlacement = marketFrames.length;
    clock += 61_000; // past its expiration: the sweep (every 100 ms) takes it off
    const [pc] = await until("the expiry's price_change", () => (priceChanges(afterPlacement).length ? priceChanges(afterPlacement) : null));
    expect(pc.price_changes.map((e: any) => [toUnits(e.price, 6), e.size, e.side])).toEqual([[toUnits(price, 6), "0", "BUY"]]);
    const cancellation = await until("the CANCELLATION", () => userFrames.slice(fromUser).find((f: any) => f?.type === "CANCELLATION" && f.id === a.orderID) as any);
    expect(cancellation.status).toBe("CANCELED");
    expect(await bookLevel("bids", price)).toBeUndefined();
  });
});
