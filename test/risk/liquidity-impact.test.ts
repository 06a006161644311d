import { describe, expect, test } from "bun:test";
import { checkLiquidityImpact, walkBook } from "../../src/risk/checks/liquidity-impact.ts";
import { parseLevels } from "../../src/risk/checks/price-sanity.ts";
import { fromDecimal, toDecimalString } from "../../src/domain/ratio.ts";
import { book, input, levels, NOW_MS } from "./fixtures.ts";
import type { OrderBook } from "../../src/venues/venue.ts";
import type { RiskIntent } from "../../src/risk/types.ts";

type Over = Parameters<typeof input>[0];
const run = (intent: Partial<RiskIntent>, b: OrderBook | null, over: Over = {}) =>
  checkLiquidityImpact(input({ ...over, intent, book: b }));
const codes = (intent: Partial<RiskIntent>, b: OrderBook | null, over: Over = {}) => run(intent, b, over).map((f) => f.code);
/** Isolates slippage from depth: the order may take the whole window. */
const allDepth: Over = { limits: { max_depth_share: 1 } };

describe("walkBook", () => {
  const asks = parseLevels(levels(["0.53", "100"], ["0.52", "50"], ["0.60", "1000"]), "asks");

  test("takes asks from the lowest up to the limit, for at most the order's shares", () => {
    const fill = walkBook("buy", fromDecimal("120"), fromDecimal("0.53"), asks);
    expect(toDecimalString(fill.shares)).toBe("120");
    expect(toDecimalString(fill.notional)).toBe("63.1"); // 50 × 0.52 + 70 × 0.53
    expect(toDecimalString(fill.best!)).toBe("0.52");
  });

  test("stops at the limit price: the rest would rest", () => {
    const fill = walkBook("buy", fromDecimal("500"), fromDecimal("0.53"), asks);
    expect(toDecimalString(fill.shares)).toBe("150");
  });

  test("a sell takes bids from the highest down to the limit", () => {
    const bids = parseLevels(levels(["0.46", "100"], ["0.50", "100"]), "bids");
    const fill = walkBook("sell", fromDecimal("150"), fromDecimal("0.46"), bids);
    expect(toDecimalString(fill.notional)).toBe("73"); // 100 × 0.50 + 50 × 0.46
  });

  test("an empty side fills nothing", () => {
    const fill = walkBook("buy", fromDecimal("10"), fromDecimal("0.99"), []);
    expect(toDecimalString(fill.shares)).toBe("0");
    expect(fill.best).toBeNull();
  });
});

describe("liquidity_impact check", () => {
  test("a resting buy below the best ask passes", () => {
    expect(run({ price: 0.5, size_usdc: 10 }, book())).toEqual([]);
  });

  test("a small marketable buy passes", () => {
    expect(run({ price: 0.52, size_usdc: 5.2 }, book())).toEqual([]);
  });

  describe("slippage_exceeded", () => {
    // asks 0.50 × 100 and 0.54 × 100: 200 shares average 0.52, 0.02 worse than 0.50
    const buyBook = (second: string) => book({ bids: levels(["0.49", "1000"]), asks: levels(["0.50", "100"], [second, "100"]) });

    test("a buy exactly max_slippage worse passes", () => {
      expect(run({ price: 0.54, size_usdc: 108 }, buyBook("0.54"), allDepth)).toEqual([]);
    });

    test("a buy beyond max_slippage fails with limit and actual", () => {
      // 200 shares at 0.541 limit: 100 × 0.50 + 100 × 0.541, average 0.5205
      expect(run({ price: 0.541, size_usdc: 108.2 }, buyBook("0.541"), allDepth)).toEqual([
        { check: "liquidity_impact", code: "slippage_exceeded", message: expect.any(String), limit: 0.02, actual: 0.0205 },
      ]);
    });

    const sellBook = (second: string) => book({ bids: levels(["0.50", "100"], [second, "100"]), asks: levels(["0.51", "1000"]) });

    test("a sell exactly max_slippage worse passes", () => {
      // 200 shares: 100 × 0.50 + 100 × 0.46, average 0.48
      expect(run({ side: "sell", price: 0.46, size_usdc: 92 }, sellBook("0.46"), allDepth)).toEqual([]);
    });

    test("a sell beyond max_slippage fails", () => {
      expect(run({ side: "sell", price: 0.459, size_usdc: 91.8 }, sellBook("0.459"), allDepth)).toEqual([
        expect.objectContaining({ code: "slippage_exceeded", limit: 0.02, actual: 0.0205 }),
      ]);
    });

    test("the part that rests does not count", () => {
      const b = book({ bids: levels(["0.48", "1000"]), asks: levels(["0.50", "10"], ["0.56", "1000"]) });
      // 1000 shares at 0.50: only 10 fill, the rest rests
      expect(codes({ price: 0.5, size_usdc: 500 }, b, allDepth)).toEqual([]);
      // the same shares at 0.56 take the second level too
      expect(codes({ price: 0.56, size_usdc: 560 }, b, allDepth)).toContain("slippage_exceeded");
    });
  });

  describe("depth_share_exceeded", () => {
    // bids 0.40 × 100, asks 0.50 × 400: mid 0.45, window [0.40, 0.50], ask depth 200 USDC, 0.25 → 50
    const b = book({ bids: levels(["0.40", "100"]), asks: levels(["0.50", "400"]) });

    test("a buy taking exactly max_depth_share passes", () => {
      expect(run({ price: 0.5, size_usdc: 50 }, b)).toEqual([]);
    });

    test("a buy taking more fails with the allowed and the marketable notional", () => {
      expect(run({ price: 0.5, size_usdc: 50.01 }, b)).toEqual([
        { check: "liquidity_impact", code: "depth_share_exceeded", message: expect.any(String), limit: 50, actual: 50.01 },
      ]);
    });

    test("only opposite levels within 0.05 of the mid count", () => {
      // mid 0.50: window [0.45, 0.55]; asks 0.55 × 100 count (55), 0.56 × 1000 does not
      const edge = book({ bids: levels(["0.45", "1000"]), asks: levels(["0.55", "100"], ["0.56", "1000"]) });
      // 25 shares at 0.55 = 13.75 = 0.25 × 55
      expect(codes({ price: 0.55, size_usdc: 13.75 }, edge)).toEqual([]);
      expect(run({ price: 0.55, size_usdc: 14.3 }, edge)).toEqual([
        expect.objectContaining({ code: "depth_share_exceeded", limit: 13.75, actual: 14.3 }),
      ]);
    });

    test("a sell measures the bids", () => {
      // bids 0.50 × 400, asks 0.60 × 100: mid 0.55, window [0.50, 0.60], bid depth 200, allowed 50
      const s = book({ bids: levels(["0.50", "400"]), asks: levels(["0.60", "100"]) });
      expect(codes({ side: "sell", price: 0.5, size_usdc: 50 }, s)).toEqual([]);
      expect(run({ side: "sell", price: 0.5, size_usdc: 50.01 }, s)).toEqual([
        expect.objectContaining({ code: "depth_share_exceeded", limit: 50, actual: 50.01 }),
      ]);
    });

    test("without a mid the window is around the last trade", () => {
      const noBids = book({ bids: [], last_trade_price: "0.50", asks: levels(["0.52", "100"], ["0.70", "100"]) });
      // window [0.45, 0.55]: depth 52, allowed 13; 25 shares × 0.52 = 13
      expect(codes({ price: 0.52, size_usdc: 13 }, noBids)).toEqual([]);
      expect(run({ price: 0.52, size_usdc: 13.52 }, noBids)).toEqual([
        expect.objectContaining({ code: "depth_share_exceeded", limit: 13, actual: 13.52 }),
      ]);
    });

    test("without a mid or last trade the window is around the best opposite price", () => {
      const bare = book({ bids: [], last_trade_price: null, asks: levels(["0.52", "100"], ["0.58", "100"]) });
      // window [0.47, 0.57]: depth 52, allowed 13
      expect(codes({ price: 0.52, size_usdc: 13 }, bare)).toEqual([]);
      expect(codes({ price: 0.52, size_usdc: 13.52 }, bare)).toEqual(["depth_share_exceeded"]);
    });

    test("the part that rests does not count", () => {
      // asks 0.52 × 20: depth 10.4, allowed 2.6; a buy at 0.51 crosses nothing
      const thin = book({ asks: levels(["0.52", "20"]) });
      expect(codes({ price: 0.51, size_usdc: 100 }, thin)).toEqual([]);
      expect(codes({ price: 0.52, size_usdc: 100 }, thin)).toEqual(["depth_share_exceeded"]);
    });
  });

  test("an empty opposite side: nothing is marketable", () => {
    expect(run({ price: 0.99, size_usdc: 100 }, book({ asks: [] }))).toEqual([]);
    expect(run({ side: "sell", price: 0.01, size_usdc: 100 }, book({ bids: [] }))).toEqual([]);
  });

  describe("book_stale (book_max_age_s 60)", () => {
    test("exactly 60 s old passes", () => {
      expect(run({}, book({ timestamp_ms: NOW_MS - 60_000 }))).toEqual([]);
    });

    test("one millisecond older fails, limit and actual in seconds", () => {
      expect(run({}, book({ timestamp_ms: NOW_MS - 60_001 }))).toEqual([
        { check: "liquidity_impact", code: "book_stale", message: expect.any(String), limit: 60, actual: 60.001 },
      ]);
    });

    test("an invalid timestamp is stale", () => {
      expect(run({}, book({ timestamp_ms: Number.NaN }))).toEqual([
        expect.objectContaining({ code: "book_stale", actual: null }),
      ]);
    });
  });

  test("slippage, depth and staleness are all reported, in that order", () => {
    const b = book({ bids: levels(["0.49", "1000"]), asks: levels(["0.50", "100"], ["0.541", "100"]), timestamp_ms: NOW_MS - 120_000 });
    expect(codes({ price: 0.541, size_usdc: 108.2 }, b)).toEqual(["slippage_exceeded", "depth_share_exceeded", "book_stale"]);
  });

  test("a missing book fails with book_unavailable", () => {
    expect(run({}, null)).toEqual([
      { check: "liquidity_impact", code: "book_unavailable", message: expect.any(String), limit: null, actual: null },
    ]);
  });

  test("passes vacuously when the market is not found", () => {
    expect(run({}, book({ timestamp_ms: 0 }), { market: null })).toEqual([]);
    expect(run({}, null, { market: null })).toEqual([]);
  });

  test("a price of 0 walks nothing and does not throw", () => {
    expect(run({ price: 0, size_usdc: 10 }, book())).toEqual([]);
  });
});
