/**
 * The CLOB adapter's live books from the simulator's market channel (/ws/market) over a real WebSocket:
 * a token is subscribed on first use, its book then follows placements, cancels and trades without
 * GET /book; a dropped connection makes its books stale (GET /book again) until the resubscription's
 * snapshot; at most N tokens per connection; idle tokens are dropped; PING is answered PONG.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { toUnits } from "../../src/domain/units.ts";
import { ClobVenue } from "../../src/venues/clob/clob-venue.ts";
import { MarketChannel } from "../../src/venues/clob/market-channel.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import type { Market, OrderMessage, VenueCredentials } from "../../src/venues/venue.ts";
import { orderMessage } from "../support/order-message.ts";
import { until } from "../support/until.ts";
import { openSimSocket, registerSimCredentials, SIM_MARKETS_FILE } from "../support/venue-sim.ts";

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" as const;
const CREDS: VenueCredentials = { api_key: "key-mc", api_secret: Buffer.alloc(32, 7).toString("base64url"), passphrase: "pp-mc", address: ALICE };

let sim: VenueSim;
let venue: ClobVenue;
let markets: Market[];
let yes: string;

let salt = 5000;
const msg = (tokenId: string, side: "buy" | "sell", price: string, shares: string): OrderMessage =>
  orderMessage(tokenId, ALICE, side, price, shares, { salt: ++salt, timestamp: Date.now() + salt });

const requests = async (route: string): Promise<number> => ((await (await fetch(`${sim.url}/_sim/stats`)).json()) as { requests: Record<string, number> }).requests[route] ?? 0;
const post = (path: string, body: unknown) => fetch(`${sim.url}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

beforeAll(async () => {
  sim = startVenueSim({ port: 0, marketsFile: SIM_MARKETS_FILE });
  venue = new ClobVenue({ baseUrl: sim.url, timeoutMs: 2000, marketWsUrl: `${sim.wsUrl}/ws/market`, marketChannel: { backoffMinMs: 20, backoffMaxMs: 100 } });
  await registerSimCredentials(sim, CREDS);
  markets = await venue.listMarkets();
  const m = markets.find((x) => x.accepting_orders && !x.closed && x.tick_size === "0.01")!;
  yes = m.tokens[0].token_id;
});

afterAll(async () => {
  await venue?.close();
  await sim?.stop();
});

describe("live books from /ws/market", () => {
  test("first use subscribes; then the stream's book is served and follows placements, cancels and trades with no GET /book", async () => {
    const rest = await venue.getBook(yes); // first use: no stream book yet, GET /book
    expect(rest).not.toBeNull();
    const ch = venue.marketChannel!;
    await until("the snapshot", () => ch.isSynced(yes));
    const before = await requests("GET /book");
    const live = (await venue.getBook(yes))!;
    expect(live.bids).toEqual(rest!.bids);
    expect(live.asks).toEqual(rest!.asks);

    // A resting bid one tick under the best bid: a price_change adds the level.
    const bestBid = toUnits(live.bids[0].price, 6);
    const price = (Number(bestBid - 10_000n) / 1e6).toFixed(2);
    const placed = await venue.placeDelegatedOrder({ credentials: CREDS, client_order_id: "o1", order: msg(yes, "buy", price, "7"), order_type: "GTC", expiration: "0" });
    expect(placed.ok).toBe(true);
    const at = (b: { bids: { price: string; size: string }[] } | null) => b?.bids.find((l) => toUnits(l.price, 6) === toUnits(price, 6));
    await until("the placement on the stream", async () => !!at(await venue.getBook(yes)));
    const restNow = await (await fetch(`${sim.url}/book?token_id=${yes}`)).json();
    const restLevel = restNow.bids.find((l: { price: string }) => toUnits(l.price, 6) === toUnits(price, 6));
    expect(at(await venue.getBook(yes))!.size).toBe(restLevel.size);

    // Cancelled: the level goes (size "0" removes it).
    if (!placed.ok) throw new Error("unreachable");
    expect((await venue.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: CREDS })).ok).toBe(true);
    await until("the cancel on the stream", async () => at(await venue.getBook(yes))?.size !== restLevel.size);

    // A trade: a sell crossing the best bid; the book after it equals the venue's.
    const best = (await venue.getBook(yes))!.bids[0];
    const sold = await venue.placeDelegatedOrder({ credentials: CREDS, client_order_id: "o2", order: msg(yes, "sell", best.price, "5"), order_type: "FAK", expiration: "0" });
    expect(sold.ok).toBe(true);
    const after = await (await fetch(`${sim.url}/book?token_id=${yes}`)).json();
    const want = after.bids.map((l: { price: string; size: string }) => l.size).reverse();
    await until("the trade on the stream", async () => JSON.stringify((await venue.getBook(yes))!.bids.map((l) => l.size)) === JSON.stringify(want));
    expect((await venue.getBook(yes))!.last_trade_price).toBe(best.price);
    // Four direct GET /book reads above were the test's own; the adapter made none.
    expect((await requests("GET /book")) - before).toBe(2);
  });

  test("a dropped connection makes its books stale until the resubscription's snapshot", async () => {
    const ch = venue.marketChannel!;
    await venue.getBook(yes);
    await until("the snapshot", () => ch.isSynced(yes));
    expect((await post("/_sim/faults", { ws_refuse_ratio: 1 })).status).toBe(200);
    expect(((await (await post("/_sim/ws/drop", { channel: "market" })).json()) as { dropped: number }).dropped).toBeGreaterThanOrEqual(1);
    await until("the books to go stale", () => !ch.isSynced(yes));
    const b0 = await requests("GET /book");
    expect(await venue.getBook(yes)).not.toBeNull(); // served from GET /book while stale
    expect(await venue.getBook(yes)).not.toBeNull();
    expect((await requests("GET /book")) - b0).toBe(2);
    const upgrades = await requests("GET /ws/market");
    await until("reconnect attempts", async () => (await requests("GET /ws/market")) > upgrades + 1); // refused, retried with backoff
    expect((await post("/_sim/faults", { ws_refuse_ratio: 0 })).status).toBe(200);
    await until("the resubscription's snapshot", () => ch.isSynced(yes));
    const b1 = await requests("GET /book");
    for (let i = 0; i < 20; i++) expect(await venue.getBook(yes)).not.toBeNull();
    expect(await requests("GET /book")).toBe(b1);
    expect(ch.stats().reconnects).toBeGreaterThanOrEqual(1);
  });

  test("faults: delayed messages arrive late; dropped ones leave the book behind until a resubscription", async () => {
    const ch = venue.marketChannel!;
    await venue.getBook(yes);
    await until("synced", () => ch.isSynced(yes));
    // The stream's own book (never GET /book).
    const level = async (price: string) => ch.book(yes)?.bids.find((l) => toUnits(l.price, 6) === toUnits(price, 6))?.size;
    expect((await post("/_sim/faults", { ws_delay_ms: 300 })).status).toBe(200);
    const t0 = Date.now();
    const a = await venue.placeDelegatedOrder({ credentials: CREDS, client_order_id: "d1", order: msg(yes, "buy", "0.21", "6"), order_type: "GTC", expiration: "0" });
    expect(a.ok).toBe(true);
    await Bun.sleep(100);
    expect(await level("0.21")).toBeUndefined(); // not yet
    await until("the delayed price_change", async () => (await level("0.21")) !== undefined);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    expect((await post("/_sim/faults", { ws_delay_ms: 0, ws_drop_ratio: 1 })).status).toBe(200);
    const b = await venue.placeDelegatedOrder({ credentials: CREDS, client_order_id: "d2", order: msg(yes, "buy", "0.22", "6"), order_type: "GTC", expiration: "0" });
    expect(b.ok).toBe(true);
    await Bun.sleep(200);
    expect(await level("0.22")).toBeUndefined(); // lost: no sequence number tells the client
    expect((await post("/_sim/faults", { ws_drop_ratio: 0 })).status).toBe(200);
    await post("/_sim/ws/drop", { channel: "market" }); // the resubscription's snapshot repairs the book
    await until("the snapshot after reconnecting", async () => ch.isSynced(yes) && (await level("0.22")) !== undefined);
    for (const r of [a, b]) if (r.ok) await venue.cancelOrder({ venue_order_id: r.venue_order_id, credentials: CREDS });
  });

  test("at most N tokens per connection, idle tokens dropped", async () => {
    const tokens = markets.flatMap((m) => m.tokens.map((t) => t.token_id));
    let now = Date.now();
    const ch = new MarketChannel({ url: `${sim.wsUrl}/ws/market`, maxTokensPerConnection: 3, idleMs: 1000, clock: { now: () => now } });
    try {
      for (const t of tokens) ch.book(t);
      expect(ch.connectionSizes()).toEqual([3, 3, 3, 3].slice(0, Math.ceil(tokens.length / 3)).map((n, i, a) => (i === a.length - 1 ? tokens.length - 3 * (a.length - 1) : n)));
      await until("every snapshot", () => tokens.every((t) => ch.isSynced(t)));
      expect(ch.stats().connections).toBe(Math.ceil(tokens.length / 3));
      now += 5000;
      ch.book(tokens[0]); // read: stays
      await until("idle tokens dropped", () => ch.stats().tokens === 1, 3000);
      expect(ch.isSynced(tokens[0])).toBe(true);
      expect(ch.stats().connections).toBe(1);
    } finally {
      ch.close();
    }
  });

  test("PING is answered PONG once subscribed; a PING before any subscription closes with 1008", async () => {
    const early = await openSimSocket(sim, "/ws/market", [], { read: String });
    const closed = new Promise<number>((r) => (early.onclose = (e) => r(e.code)));
    early.send("PING");
    expect(await closed).toBe(1008);

    const got: string[] = [];
    const ws = await openSimSocket(sim, "/ws/market", got, { read: String, first: { assets_ids: [yes], type: "market" } });
    ws.send("PING");
    await until("PONG", () => got.includes("PONG"));
    const snap = JSON.parse(got[0]);
    expect(Array.isArray(snap) && snap[0].event_type === "book" && snap[0].asset_id === yes).toBe(true);
    ws.send(JSON.stringify({ assets_ids: [yes], type: "market" }));
    await until("INVALID OPERATION", () => got.includes("INVALID OPERATION"));
    ws.close();
  });
});
