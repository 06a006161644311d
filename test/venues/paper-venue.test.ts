import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { toUnits } from "../../src/domain/units.ts";
import { paperOrderMessage } from "./paper-order-message.ts";
import { loadMarketsFile, MarketsFileError, parseMarkets } from "../../src/venues/markets-file.ts";
import { orderHash, PaperVenue } from "../../src/venues/paper/paper-venue.ts";
import type { OrderMessage, OrderType, VenueCredentials } from "../../src/venues/venue.ts";
import { VECTOR_ORDER, VECTOR_ORDER_HASH } from "../support/vector-order.ts";

const ADDR = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" as const;
const SIG = `0x${"ab".repeat(65)}` as const;
const CREDS: VenueCredentials = { api_key: "k", api_secret: "s", passphrase: "p", address: ADDR };

const YES = "11111111111111111111111111111111111111111111111111111111111111111111111111111";
const NO = "22222222222222222222222222222222222222222222222222222222222222222222222222222";
const CLOSED_YES = "333";
const PAUSED_YES = "444";
const FINE_YES = "555";

function market(over: Record<string, unknown>, tokens: unknown[]) {
  return {
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
    ...over,
    tokens,
  };
}

const ENTRIES = [
  market({}, [
    {
      token_id: YES,
      outcome: "Yes",
      book: {
        bids: [
          { price: "0.48", size: "100" },
          { price: "0.47", size: "200" },
        ],
        asks: [
          { price: "0.53", size: "300" },
          { price: "0.50", size: "100" },
          { price: "0.51", size: "200" },
        ],
      },
      last_trade_price: "0.49",
    },
    {
      token_id: NO,
      outcome: "No",
      book: { bids: [{ price: "0.50", size: "100" }], asks: [{ price: "0.52", size: "100" }] },
      last_trade_price: "0.51",
    },
  ]),
  market({ condition_id: `0x${"0".repeat(63)}2`, closed: true, accepting_orders: false }, [{ token_id: CLOSED_YES, outcome: "Yes" }]),
  market({ condition_id: `0x${"0".repeat(63)}3`, accepting_orders: false }, [{ token_id: PAUSED_YES, outcome: "Yes" }]),
  market({ condition_id: `0x${"0".repeat(63)}4`, tick_size: "0.001", neg_risk: true }, [
    { token_id: FINE_YES, outcome: "Yes", book: { asks: [{ price: "0.315", size: "10" }] } },
  ]),
];

const msg = (tokenId: string, side: "buy" | "sell", price: string, shares: string): OrderMessage => paperOrderMessage(tokenId, side, price, shares);

let nowMs = 1_800_000_000_000;
let venue: PaperVenue;

async function place(tokenId: string, side: "buy" | "sell", price: string, shares: string, order_type: OrderType = "GTC", expiration = "0") {
  const r = await venue.postSignedOrder({ order: msg(tokenId, side, price, shares), signature: SIG, order_type, expiration });
  if (!r.ok) throw new Error(`refused: ${r.error}`);
  return r;
}

beforeEach(() => {
  nowMs = 1_800_000_000_000;
  venue = PaperVenue.fromEntries(ENTRIES, { now: () => nowMs });
});

describe("PaperVenue matching", () => {
  test("a crossing buy fills against asks at price-time priority, at the resting price", async () => {
    // Two more asks at 0.50 behind the seeded 100 shares.
    const a = await place(YES, "sell", "0.50", "50");
    const b = await place(YES, "sell", "0.50", "50");
    expect(a.status).toBe("live");
    const taker = await place(YES, "buy", "0.52", "120");
    expect(taker.status).toBe("matched");
    expect(taker.filled_usdc).toBe("60"); // 100 seeded + 20 of A, all at 0.50
    expect(await venue.getOrder({ venue_order_id: a.venue_order_id })).toEqual({ venue_order_id: a.venue_order_id, status: "live", filled_usdc: "10" });
    expect(await venue.getOrder({ venue_order_id: b.venue_order_id })).toEqual({ venue_order_id: b.venue_order_id, status: "live", filled_usdc: "0" });
    const book = (await venue.getBook(YES))!;
    expect(book.asks[0]).toEqual({ price: "0.5", size: "80" });
    expect(book.last_trade_price).toBe("0.5");
    expect(venue.fills.map((f) => [f.maker_order_id === a.venue_order_id, f.size])).toEqual([
      [false, 100_000_000n],
      [true, 20_000_000n],
    ]);
  });

  test("a buy walks several levels up to its limit", async () => {
    const r = await place(YES, "buy", "0.51", "150");
    expect(r).toMatchObject({ ok: true, status: "matched", filled_usdc: "75.5" }); // 100×0.50 + 50×0.51
    const book = (await venue.getBook(YES))!;
    expect(book.asks).toEqual([
      { price: "0.51", size: "150" },
      { price: "0.53", size: "300" },
    ]);
  });

  test("a partial fill rests the remainder, which a later order can match", async () => {
    const r = await place(YES, "buy", "0.50", "150");
    expect(r).toMatchObject({ status: "live", filled_usdc: "50" });
    let book = (await venue.getBook(YES))!;
    expect(book.bids[0]).toEqual({ price: "0.5", size: "50" });
    expect(book.asks[0]).toEqual({ price: "0.51", size: "200" });

    // A sell at 0.49 crosses our bid and trades at our price, 0.50.
    const s = await place(YES, "sell", "0.49", "50");
    expect(s).toMatchObject({ status: "matched", filled_usdc: "25" });
    expect(await venue.getOrder({ venue_order_id: r.venue_order_id })).toMatchObject({ status: "matched", filled_usdc: "75" });
    book = (await venue.getBook(YES))!;
    expect(book.bids[0]).toEqual({ price: "0.48", size: "100" });
  });

  test("FOK fills all or nothing", async () => {
    const before = (await venue.getBook(YES))!;
    const killed = await place(YES, "buy", "0.51", "301", "FOK"); // only 300 available up to 0.51
    expect(killed).toMatchObject({ ok: true, status: "unmatched", filled_usdc: "0" });
    expect((await venue.getBook(YES))!.asks).toEqual(before.asks);
    expect((await venue.getOrder({ venue_order_id: killed.venue_order_id }))!.status).toBe("unmatched");

    const filled = await place(YES, "buy", "0.51", "300", "FOK");
    expect(filled).toMatchObject({ status: "matched", filled_usdc: "152" }); // 50 + 102
    expect((await venue.getBook(YES))!.asks).toEqual([{ price: "0.53", size: "300" }]);
  });

  test("FAK fills what it can and cancels the rest", async () => {
    const r = await place(YES, "buy", "0.50", "150", "FAK");
    expect(r).toMatchObject({ status: "matched", filled_usdc: "50" });
    const book = (await venue.getBook(YES))!;
    expect(book.bids[0]).toEqual({ price: "0.48", size: "100" }); // nothing rested
    const none = await place(YES, "buy", "0.49", "10", "FAK");
    expect(none).toMatchObject({ status: "unmatched", filled_usdc: "0" });
    expect(venue.cancels.filter((c) => c.reason === "killed").map((c) => c.remaining)).toEqual([50_000_000n, 10_000_000n]);
  });

  test("the sell side fills against bids best first", async () => {
    const r = await place(YES, "sell", "0.47", "150");
    expect(r).toMatchObject({ status: "matched", filled_usdc: "71.5" }); // 100×0.48 + 50×0.47
    const book = (await venue.getBook(YES))!;
    expect(book.bids).toEqual([{ price: "0.47", size: "150" }]);
    const rest = await place(YES, "sell", "0.52", "10");
    expect(rest.status).toBe("live");
    expect((await venue.getBook(YES))!.asks.slice(0, 3)).toEqual([
      { price: "0.5", size: "100" },
      { price: "0.51", size: "200" },
      { price: "0.52", size: "10" },
    ]);
  });

  test("books of the two outcomes are independent", async () => {
    await place(YES, "buy", "0.50", "100");
    const no = (await venue.getBook(NO))!;
    expect(no.bids).toEqual([{ price: "0.5", size: "100" }]);
    expect(no.asks).toEqual([{ price: "0.52", size: "100" }]);
  });
});

describe("PaperVenue cancel and getOrder", () => {
  test("cancel removes a resting order; cancelling twice or a filled order is ok, flagged as already done", async () => {
    const r = await place(YES, "buy", "0.45", "10");
    expect((await venue.getBook(YES))!.bids.map((l) => l.price)).toEqual(["0.48", "0.47", "0.45"]);
    expect(await venue.cancelOrder({ venue_order_id: r.venue_order_id })).toEqual({ ok: true });
    expect((await venue.getBook(YES))!.bids.map((l) => l.price)).toEqual(["0.48", "0.47"]);
    expect(await venue.getOrder({ venue_order_id: r.venue_order_id })).toEqual({ venue_order_id: r.venue_order_id, status: "cancelled", filled_usdc: "0" });
    expect(await venue.cancelOrder({ venue_order_id: r.venue_order_id })).toEqual({ ok: true, already: true });
    expect(venue.cancels.filter((c) => c.order_id === r.venue_order_id)).toHaveLength(1);

    const filled = await place(YES, "buy", "0.50", "10");
    expect(filled.status).toBe("matched");
    expect(await venue.cancelOrder({ venue_order_id: filled.venue_order_id })).toEqual({ ok: true, already: true });
    expect((await venue.getOrder({ venue_order_id: filled.venue_order_id }))!.status).toBe("matched");
  });

  test("a cancelled partial fill keeps its filled amount and leaves the book", async () => {
    const r = await place(YES, "buy", "0.50", "120");
    expect(await venue.cancelOrder({ venue_order_id: r.venue_order_id })).toEqual({ ok: true });
    expect(await venue.getOrder({ venue_order_id: r.venue_order_id })).toMatchObject({ status: "cancelled", filled_usdc: "50" });
    expect((await venue.getBook(YES))!.bids[0].price).toBe("0.48");
  });

  test("unknown orders", async () => {
    expect(await venue.getOrder({ venue_order_id: "0xdead" })).toBeNull();
    expect(await venue.cancelOrder({ venue_order_id: "0xdead" })).toEqual({ ok: false, error: "order not found" });
  });

  test("venue order ids are the EIP-712 order hashes and unique", async () => {
    const m = msg(YES, "buy", "0.40", "10");
    const r = await venue.postSignedOrder({ order: m, signature: SIG, order_type: "GTC", expiration: "0" });
    expect(r.ok && r.venue_order_id).toBe(orderHash(m, { chainId: 137, negRisk: false }));
    expect(await venue.postSignedOrder({ order: m, signature: SIG, order_type: "GTC", expiration: "0" })).toEqual({ ok: false, error: "order already exists" });
    const fine = msg(FINE_YES, "buy", "0.301", "10");
    const f = await venue.postSignedOrder({ order: fine, signature: SIG, order_type: "GTC", expiration: "0" });
    expect(f.ok && f.venue_order_id).toBe(orderHash(fine, { chainId: 137, negRisk: true }));
  });

  test("orderHash matches the CONTRACT 6 vector", () => {
    expect(orderHash(VECTOR_ORDER, { chainId: 137, negRisk: false })).toBe(VECTOR_ORDER_HASH);
  });

  test("GTD orders expire at their expiration", async () => {
    const exp = String(Math.floor(nowMs / 1000) + 60);
    const r = await place(YES, "buy", "0.45", "10", "GTD", exp);
    expect(r.status).toBe("live");
    nowMs += 59_000;
    expect((await venue.getOrder({ venue_order_id: r.venue_order_id }))!.status).toBe("live");
    nowMs += 1_000;
    expect((await venue.getOrder({ venue_order_id: r.venue_order_id }))!.status).toBe("cancelled");
    expect((await venue.getBook(YES))!.bids.map((l) => l.price)).toEqual(["0.48", "0.47"]);
    const past = await venue.postSignedOrder({ order: msg(YES, "buy", "0.45", "10"), signature: SIG, order_type: "GTD", expiration: "1" });
    expect(past.ok).toBe(false);
  });
});

describe("PaperVenue refusals and credentials", () => {
  const refusal = async (order: OrderMessage, order_type: OrderType = "GTC") => {
    const r = await venue.postSignedOrder({ order, signature: SIG, order_type, expiration: "0" });
    expect(r.ok).toBe(false);
    return r.ok ? "" : r.error;
  };

  test("orders the venue refuses", async () => {
    expect(await refusal(msg(YES, "buy", "0.505", "10"))).toContain("tick size");
    expect(await refusal(msg(YES, "buy", "0.50", "4.99"))).toContain("minimum");
    expect(await refusal(msg(YES, "buy", "0.995", "10"))).toContain("outside");
    expect(await refusal(msg(CLOSED_YES, "buy", "0.50", "10"))).toBe("market is closed");
    expect(await refusal(msg(PAUSED_YES, "buy", "0.50", "10"))).toBe("market is not accepting orders");
    expect(await refusal(msg("999", "buy", "0.50", "10"))).toContain("no market");
    expect(await refusal({ ...msg(YES, "buy", "0.50", "10"), makerAmount: "-1" })).toContain("makerAmount");
    const bad = await venue.postSignedOrder({ order: msg(YES, "buy", "0.50", "10"), signature: "0x12" as `0x${string}`, order_type: "GTC", expiration: "0" });
    expect(bad).toEqual({ ok: false, error: "invalid order signature" });
    // Nothing reached the book.
    expect((await venue.getBook(YES))!.bids[0]).toEqual({ price: "0.48", size: "100" });
  });

  test("delegated orders need non-empty credentials", async () => {
    const order = msg(YES, "buy", "0.45", "10");
    const refused = await venue.placeDelegatedOrder({ credentials: { ...CREDS, api_secret: "" }, client_order_id: "ord_1", order, order_type: "GTC", expiration: "0" });
    expect(refused).toEqual({ ok: false, error: "invalid credentials" });
    const ok = await venue.placeDelegatedOrder({ credentials: CREDS, client_order_id: "ord_1", order, order_type: "GTC", expiration: "0" });
    expect(ok).toMatchObject({ ok: true, status: "live" });
    expect(await venue.confirmCredentials(CREDS)).toBe(true);
    expect(await venue.confirmCredentials({ ...CREDS, api_key: " " })).toBe(false);
    expect(await venue.cancelOrder({ venue_order_id: ok.ok ? ok.venue_order_id : "", credentials: { ...CREDS, api_key: "" } })).toEqual({ ok: false, error: "invalid credentials" });
  });

  test("an aborted signal makes calls unavailable", async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(venue.getBook(YES, { signal: ac.signal })).rejects.toThrow("aborted");
  });
});

describe("PaperVenue markets and books", () => {
  test("markets are indexed by token and books are best first with timestamp = now", async () => {
    const m = await venue.getMarketByToken(NO);
    expect(m?.tokens.map((t) => t.outcome)).toEqual(["Yes", "No"]);
    expect(await venue.getMarketByToken("1")).toBeNull();
    expect(await venue.getBook("1")).toBeNull();
    expect((await venue.listMarkets()).length).toBe(4);
    const book = (await venue.getBook(YES))!;
    expect(book).toEqual({
      token_id: YES,
      bids: [
        { price: "0.48", size: "100" },
        { price: "0.47", size: "200" },
      ],
      asks: [
        { price: "0.5", size: "100" },
        { price: "0.51", size: "200" },
        { price: "0.53", size: "300" },
      ],
      last_trade_price: "0.49",
      timestamp_ms: nowMs,
    });
    nowMs += 5;
    expect((await venue.getBook(YES))!.timestamp_ms).toBe(nowMs);
  });

  test("the snapshot is limited to the configured depth", async () => {
    const shallow = PaperVenue.fromEntries(ENTRIES, { bookDepth: 1 });
    const b = (await shallow.getBook(YES))!;
    expect(b.bids).toHaveLength(1);
    expect(b.asks).toEqual([{ price: "0.5", size: "100" }]);
  });

  test("the repository fixture loads and its Yes/No books mirror each other", () => {
    const { markets, books } = loadMarketsFile(resolve(import.meta.dir, "../../fixtures/markets.json"));
    expect(markets.length).toBeGreaterThanOrEqual(6);
    expect(new Set(markets.map((m) => m.category))).toEqual(new Set(["politics", "sports", "crypto", "economics"]));
    expect(markets.filter((m) => m.neg_risk)).toHaveLength(1);
    expect(markets.filter((m) => m.closed)).toHaveLength(1);
    expect(markets.filter((m) => !m.closed && !m.accepting_orders)).toHaveLength(1);
    expect(new Set(markets.map((m) => m.tick_size))).toEqual(new Set(["0.01", "0.001"]));
    for (const m of markets) {
      expect(m.tokens.map((t) => t.outcome)).toEqual(["Yes", "No"]);
      expect(m.min_order_size).toBe("5");
      const [yes, no] = m.tokens.map((t) => books.get(t.token_id)!);
      expect(yes.bids.length).toBeGreaterThanOrEqual(2);
      const one = 1_000_000n;
      const mirror = (levels: { price: string; size: string }[]) =>
        levels.map((l) => `${one - toUnits(l.price, 6)}@${l.size}`).sort();
      const plain = (levels: { price: string; size: string }[]) => levels.map((l) => `${toUnits(l.price, 6)}@${l.size}`).sort();
      expect(plain(no.asks)).toEqual(mirror(yes.bids));
      expect(plain(no.bids)).toEqual(mirror(yes.asks));
      expect(toUnits(yes.last_trade_price!, 6) + toUnits(no.last_trade_price!, 6)).toBe(one);
    }
    const v = PaperVenue.fromFile(resolve(import.meta.dir, "../../fixtures/markets.json"));
    expect(v.restingCount()).toBeGreaterThan(40);
  });
});

describe("markets file validation", () => {
  const dir = mkdtempSync(join(tmpdir(), "markets-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, content: unknown) => {
    const p = join(dir, name);
    writeFileSync(p, typeof content === "string" ? content : JSON.stringify(content));
    return p;
  };
  const errorOf = (fn: () => unknown): MarketsFileError => {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(MarketsFileError);
      return err as MarketsFileError;
    }
    throw new Error("expected a MarketsFileError");
  };
  const withToken = (tok: Record<string, unknown>, over: Record<string, unknown> = {}) => [market(over, [{ token_id: YES, outcome: "Yes", ...tok }])];

  test("names the file for unreadable and non-JSON files", () => {
    const missing = join(dir, "nope.json");
    expect(errorOf(() => loadMarketsFile(missing)).message).toContain(`markets file ${missing}: cannot be read`);
    const p = write("bad.json", "[{");
    expect(errorOf(() => loadMarketsFile(p)).message).toContain(`markets file ${p}: not valid JSON`);
    const q = write("obj.json", { markets: [] });
    expect(errorOf(() => loadMarketsFile(q)).message).toBe(`markets file ${q}: must be a JSON array of markets`);
  });

  test("names the bad entry", () => {
    const p = write("price.json", withToken({ book: { bids: [{ price: "0.48", size: "1" }, { price: "1.2", size: "1" }] } }));
    const e = errorOf(() => loadMarketsFile(p));
    expect(e.message).toContain(p);
    expect(e.message).toContain(`market[0] (0x${"0".repeat(63)}1) tokens[0].book.bids[1].price`);
    expect(e.message).toContain("strictly between 0 and 1");
  });

  test("rejects each kind of bad entry", () => {
    const cases: Array<[unknown, string]> = [
      [[market({ condition_id: "0x12" }, [{ token_id: YES, outcome: "Yes" }])], "condition_id: must be 0x followed by 64 hex digits"],
      [withToken({}, { end_date: "soon" }), "end_date: not an ISO 8601 date"],
      [withToken({}, { active: "yes" }), "active: must be true or false"],
      [withToken({}, { tick_size: "0" }), "tick_size: must be between 0 and 1"],
      [withToken({}, { min_order_size: "five" }), "min_order_size: not a decimal"],
      [withToken({}, { category: "" }), "category: must be a non-empty string"],
      [[market({}, [])], "tokens: must be a non-empty array"],
      [withToken({ token_id: "0x12" }), "tokens[0].token_id: must be a decimal uint256 string"],
      [withToken({ token_id: (1n << 256n).toString() }), "tokens[0].token_id: must be a decimal uint256 string"],
      [withToken({ outcome: 7 }), "tokens[0].outcome: must be a non-empty string"],
      [withToken({ book: { asks: [{ price: "0.505", size: "1" }] } }), "is not a multiple of the tick size 0.01"],
      [withToken({ book: { asks: [{ price: "0.50", size: "0" }] } }), "book.asks[0].size: must be positive"],
      [withToken({ book: { asks: [{ price: "0.50", size: "1.0000001" }] } }), "book.asks[0].size: more than 6 decimal places"],
      [withToken({ book: { asks: [{ price: "0.50", size: "1" }, { price: "0.50", size: "2" }] } }), "duplicate price level"],
      [withToken({ book: { bids: [{ price: "0.52", size: "1" }], asks: [{ price: "0.50", size: "1" }] } }), "crossed book"],
      [withToken({ book: { bids: "none" } }), "book.bids: must be an array"],
      [withToken({ last_trade_price: "1.5" }), "last_trade_price: must be between 0 and 1"],
      [[...withToken({}), ...withToken({}, { condition_id: `0x${"0".repeat(63)}9` })], `market[1] (0x${"0".repeat(63)}9) tokens[0].token_id: duplicate token_id`],
      [[...withToken({}), ...withToken({ token_id: "7" })], "market[1] (0x" + "0".repeat(63) + "1) condition_id: duplicate condition_id"],
    ];
    for (const [json, fragment] of cases) {
      const e = errorOf(() => parseMarkets(json, "test.json"));
      expect(e.message.startsWith("markets file test.json: ")).toBe(true);
      expect(e.message).toContain(fragment);
    }
  });

  test("accepts numbers for prices and sizes and normalizes them", () => {
    const { books, markets } = parseMarkets(withToken({ book: { bids: [{ price: 0.4, size: 10 }], asks: [{ price: "0.600", size: "1.50" }] }, last_trade_price: 0.5 }), "x");
    expect(books.get(YES)).toEqual({ bids: [{ price: "0.4", size: "10" }], asks: [{ price: "0.6", size: "1.5" }], last_trade_price: "0.5" });
    expect(markets[0].tokens).toEqual([{ token_id: YES, outcome: "Yes" }]);
  });
});
