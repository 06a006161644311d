/**
 * PaperVenue.restore: a new venue (a restarted service) is handed the orders that rested on the old
 * one, as plain records, and holds them again: same remaining sizes, same time priority, same owner,
 * no trade on restore, and fills afterwards reported as before.
 */
import { beforeEach, describe, expect, test } from "bun:test";
import { toUnits } from "../../src/domain/units.ts";
import { paperOrderMessage } from "./paper-order-message.ts";
import { PaperVenue, type RestingOrderRecord } from "../../src/venues/paper/paper-venue.ts";
import type { OrderMessage, OrderType } from "../../src/venues/venue.ts";

const ADDR = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" as const;
const OTHER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" as const;
const SIG = `0x${"ab".repeat(65)}` as const;
const YES = "11111111111111111111111111111111111111111111111111111111111111111111111111111";

const ENTRIES = [
  {
    condition_id: `0x${"0".repeat(63)}1`,
    question: "Test market?",
    category: "politics",
    end_date: "2028-01-01T00:00:00Z",
    active: true,
    closed: false,
    accepting_orders: true,
    neg_risk: false,
    tick_size: "0.01",
    min_order_size: "5",
    tokens: [
      {
        token_id: YES,
        outcome: "Yes",
        book: {
          bids: [
            { price: "0.48", size: "100" },
            { price: "0.47", size: "200" },
          ],
          asks: [
            { price: "0.50", size: "100" },
            { price: "0.51", size: "200" },
          ],
        },
      },
    ],
  },
];

const msg = (side: "buy" | "sell", price: string, shares: string, signer: `0x${string}` = ADDR): OrderMessage => paperOrderMessage(YES, side, price, shares, signer);

let nowMs = 1_800_000_000_000;
const clock = { now: () => nowMs };

async function post(venue: PaperVenue, order: OrderMessage, order_type: OrderType = "GTC", expiration = "0") {
  const r = await venue.postSignedOrder({ order, signature: SIG, order_type, expiration });
  if (!r.ok) throw new Error(`refused: ${r.error}`);
  return r.venue_order_id;
}

/** What the service would hand back for an order resting on `venue`: its message and what filled. */
async function recordOf(venue: PaperVenue, id: string, order: OrderMessage, order_type: OrderType = "GTC", expiration = "0"): Promise<RestingOrderRecord> {
  const state = (await venue.getOrder({ venue_order_id: id }))!;
  const rec = venue.order(id)!;
  return { venue_order_id: id, order, order_type, expiration, filled_usdc: toUnits(state.filled_usdc, 6), owner: rec.owner, created_at: rec.created_at };
}

beforeEach(() => {
  nowMs = 1_800_000_000_000;
});

describe("PaperVenue.restore", () => {
  test("a new venue given the resting orders holds the same book, and trades and cancels them as the old one would", async () => {
    const before = PaperVenue.fromEntries(ENTRIES, { now: clock.now });
    const a = msg("buy", "0.49", "50");
    const b = msg("buy", "0.49", "30", OTHER);
    const c = msg("sell", "0.52", "20");
    const ids = { a: await post(before, a), b: "", c: "" };
    nowMs += 1000;
    ids.b = await post(before, b);
    nowMs += 1000;
    ids.c = await post(before, c);
    // A fills 10 of its 50 shares: 4.9 USDC.
    nowMs += 1000;
    await post(before, msg("sell", "0.49", "10", OTHER), "FAK");
    const records = [await recordOf(before, ids.c, c), await recordOf(before, ids.b, b), await recordOf(before, ids.a, a)];
    expect(records.map((r) => r.filled_usdc)).toEqual([0n, 0n, 4_900_000n]);

    // Restart: a venue with the seeded book only, then the records (in any order).
    const after = PaperVenue.fromEntries(ENTRIES, { now: clock.now });
    expect(await after.getOrder({ venue_order_id: ids.a })).toBeNull();
    const report = after.restore(records);
    expect(report).toEqual({ restored: [ids.a, ids.b, ids.c], skipped: [], withdrawn: 0 });
    expect(after.fills).toEqual([]);
    const levels = async (v: PaperVenue) => {
      const { bids, asks } = (await v.getBook(YES))!;
      return { bids, asks };
    };
    expect(await levels(after)).toEqual(await levels(before));
    expect((await after.getBook(YES))!.bids[0]).toEqual({ price: "0.49", size: "70" });
    for (const id of [ids.a, ids.b, ids.c]) {
      expect(await after.getOrder({ venue_order_id: id })).toEqual((await before.getOrder({ venue_order_id: id }))!);
      expect(after.order(id)).toMatchObject({ owner: before.order(id)!.owner, created_at: before.order(id)!.created_at, status: "live" });
    }

    // The same crossing order on both venues: A first (its time priority), then B; both sides reported.
    for (const v of [before, after]) {
      const taker = await v.postSignedOrder({ order: msg("sell", "0.49", "50", OTHER), signature: SIG, order_type: "GTC", expiration: "0" });
      expect(taker).toMatchObject({ ok: true, status: "matched", filled_usdc: "24.5" });
      expect(await v.getOrder({ venue_order_id: ids.a })).toEqual({ venue_order_id: ids.a, status: "matched", filled_usdc: "24.5" });
      expect(await v.getOrder({ venue_order_id: ids.b })).toEqual({ venue_order_id: ids.b, status: "live", filled_usdc: "4.9" });
      expect(v.fills.slice(-2).map((f) => [f.maker_order_id, f.size])).toEqual([
        [ids.a, 40_000_000n],
        [ids.b, 10_000_000n],
      ]);
    }
    // A cancel of a restored order is answered as it was before the restart.
    expect(await after.cancelOrder({ venue_order_id: ids.c })).toEqual({ ok: true });
    expect(await after.cancelOrder({ venue_order_id: ids.c })).toEqual({ ok: true, already: true });
    expect(await after.cancelOrder({ venue_order_id: ids.a })).toEqual({ ok: true, already: true });
    expect((await after.getBook(YES))!.asks.map((l) => l.price)).toEqual(["0.5", "0.51"]);
  });

  test("restored orders do not trade on restore: a seeded level they cross leaves the book, a restored order they cross is not restored", async () => {
    const venue = PaperVenue.fromEntries(ENTRIES, { now: clock.now });
    const bid = msg("buy", "0.50", "10");
    const ask = msg("sell", "0.50", "10");
    const rec = (order: OrderMessage, id: string, at: number): RestingOrderRecord => ({ venue_order_id: id, order, order_type: "GTC", expiration: "0", filled_usdc: 0n, owner: ADDR, created_at: at });
    const report = venue.restore([rec(ask, "0xask", nowMs - 1000), rec(bid, "0xbid", nowMs - 2000)]);
    expect(report).toEqual({ restored: ["0xbid"], skipped: [{ venue_order_id: "0xask", reason: "crosses an order restored before it" }], withdrawn: 1 });
    expect(venue.fills).toEqual([]);
    const book = (await venue.getBook(YES))!;
    expect(book.bids[0]).toEqual({ price: "0.5", size: "10" });
    expect(book.asks).toEqual([{ price: "0.51", size: "200" }]);
    expect(await venue.getOrder({ venue_order_id: "0xask" })).toBeNull();
  });

  test("what filled is taken off (shares rounded up), a fully filled record is matched, an expired GTD expires; records that cannot rest are skipped", async () => {
    const venue = PaperVenue.fromEntries(ENTRIES, { now: clock.now });
    const base = { order_type: "GTC" as OrderType, expiration: "0", owner: ADDR, created_at: nowMs - 5000 };
    const nowS = Math.floor(nowMs / 1000);
    const report = venue.restore([
      // 2.5 USDC at 0.45 is 5.555… shares: 5.555556 filled, 4.444444 left.
      { ...base, venue_order_id: "0xpart", order: msg("buy", "0.45", "10"), filled_usdc: 2_500_000n },
      { ...base, venue_order_id: "0xfull", order: msg("buy", "0.44", "10"), filled_usdc: 4_400_000n },
      { ...base, venue_order_id: "0xgtd", order: msg("buy", "0.43", "10"), order_type: "GTD", expiration: String(nowS - 1), filled_usdc: 0n },
      { ...base, venue_order_id: "0xlater", order: msg("buy", "0.42", "10"), order_type: "GTD", expiration: String(nowS + 60), filled_usdc: 0n },
      { ...base, venue_order_id: "0xfok", order: msg("buy", "0.41", "10"), order_type: "FOK", filled_usdc: 0n },
      { ...base, venue_order_id: "0xtoken", order: { ...msg("buy", "0.41", "10"), tokenId: "999" }, filled_usdc: 0n },
      { ...base, venue_order_id: "0xbad", order: { ...msg("buy", "0.41", "10"), maker: "0xnope" }, filled_usdc: 0n },
    ]);
    expect(report.restored).toEqual(["0xpart", "0xfull", "0xgtd", "0xlater"]);
    expect(report.skipped.map((s) => s.venue_order_id)).toEqual(["0xfok", "0xtoken", "0xbad"]);
    expect(venue.order("0xpart")).toMatchObject({ status: "live", filled_size: 5_555_556n, filled_usdc: 2_500_000n, original_size: 10_000_000n });
    expect(await venue.getOrder({ venue_order_id: "0xfull" })).toEqual({ venue_order_id: "0xfull", status: "matched", filled_usdc: "4.4" });
    expect(await venue.getOrder({ venue_order_id: "0xgtd" })).toMatchObject({ status: "cancelled" });
    expect(venue.cancels).toEqual([{ order_id: "0xgtd", reason: "expired", remaining: 10_000_000n, at: nowMs }]);
    expect((await venue.getBook(YES))!.bids.slice(2)).toEqual([
      { price: "0.45", size: "4.444444" },
      { price: "0.42", size: "10" },
    ]);
    // Restoring again changes nothing: the ids are known.
    expect(venue.restore([{ ...base, venue_order_id: "0xpart", order: msg("buy", "0.45", "10"), filled_usdc: 0n }]).skipped).toEqual([
      { venue_order_id: "0xpart", reason: "already known" },
    ]);
  });
});
