import { describe, expect, test } from "bun:test";
import { checkPriceSanity, referencePrice } from "../../src/risk/checks/price-sanity.ts";
import { toDecimalString } from "../../src/domain/ratio.ts";
import { book, input, levels, market } from "./fixtures.ts";

type Over = Parameters<typeof input>[0];
const run = (price: number, over: Over = {}) => checkPriceSanity(input({ ...over, intent: { price, ...over.intent } }));
const codes = (price: number, over: Over = {}) => run(price, over).map((f) => f.code);
/** A wide band, to test bounds and ticks without the mid getting in the way. */
const wide: Over = { limits: { price_band: 1 } };

describe("referencePrice", () => {
  test("is the mid when both sides have a level", () => {
    const ref = referencePrice(book())!;
    expect(ref.source).toBe("mid");
    expect(toDecimalString(ref.price)).toBe("0.5");
  });

  test("uses the best levels whatever their order, ignoring empty levels", () => {
    const b = book({ bids: levels(["0.40", "10"], ["0.47", "0"], ["0.46", "10"]), asks: levels(["0.60", "5"], ["0.50", "5"]) });
    expect(toDecimalString(referencePrice(b)!.price)).toBe("0.48");
  });

  test("falls back to the last trade when a side is empty, else none", () => {
    expect(referencePrice(book({ bids: [], last_trade_price: "0.3" }))).toEqual({
      price: { num: 3n, den: 10n },
      source: "last_trade",
    });
    expect(referencePrice(book({ asks: [], last_trade_price: null }))).toBeNull();
    expect(referencePrice(null)).toBeNull();
  });
});

describe("price_sanity check", () => {
  test("passes on the tick, inside the bounds, near the mid", () => {
    expect(run(0.5)).toEqual([]);
  });

  describe("price_out_of_bounds: tick ≤ p ≤ 1 − tick", () => {
    test("the bounds themselves pass", () => {
      expect(codes(0.01, wide)).toEqual([]);
      expect(codes(0.99, wide)).toEqual([]);
    });

    test("below the tick fails", () => {
      expect(run(0, wide)).toEqual([
        { check: "price_sanity", code: "price_out_of_bounds", message: expect.any(String), limit: 0.01, actual: 0 },
      ]);
    });

    test("above 1 − tick fails", () => {
      expect(run(1, wide)).toEqual([expect.objectContaining({ code: "price_out_of_bounds", limit: 0.99, actual: 1 })]);
    });

    test("one unit of a finer tick beyond the bound fails", () => {
      const fine: Over = { ...wide, market: market({ tick_size: "0.001" }) };
      expect(codes(0.001, fine)).toEqual([]);
      expect(codes(0.999, fine)).toEqual([]);
      expect(run(0.9991, fine).map((f) => [f.code, f.limit, f.actual])).toEqual([
        ["price_out_of_bounds", 0.999, 0.9991],
        ["price_off_tick", 0.001, 0.9991],
      ]);
    });

    test("a price that is not a number fails without throwing", () => {
      expect(run(Number.NaN, wide)).toEqual([expect.objectContaining({ code: "price_out_of_bounds", actual: null })]);
    });
  });

  describe("price_off_tick", () => {
    test("a price between ticks fails", () => {
      expect(run(0.505)).toEqual([
        { check: "price_sanity", code: "price_off_tick", message: expect.any(String), limit: 0.01, actual: 0.505 },
      ]);
    });

    test("is exact for prices whose doubles are not (0.57, 0.29, 0.07)", () => {
      expect(codes(0.57)).toEqual([]);
      expect(codes(0.29, { book: book({ last_trade_price: "0.3", bids: [] }) })).toEqual([]);
      expect(codes(0.07, wide)).toEqual([]);
    });

    test("the same price passes on a finer tick", () => {
      expect(codes(0.505, { market: market({ tick_size: "0.001" }) })).toEqual([]);
    });

    test("out of bounds and off tick are both reported", () => {
      expect(codes(0.995, wide)).toEqual(["price_out_of_bounds", "price_off_tick"]);
    });
  });

  describe("price_far_from_mid (mid 0.50, band 0.10)", () => {
    test("exactly the band away passes, on both sides", () => {
      expect(codes(0.6)).toEqual([]);
      expect(codes(0.4)).toEqual([]);
    });

    test("one tick beyond the band fails", () => {
      expect(run(0.61)).toEqual([
        { check: "price_sanity", code: "price_far_from_mid", message: expect.stringContaining("mid 0.5"), limit: 0.1, actual: 0.11 },
      ]);
      expect(run(0.39)).toEqual([expect.objectContaining({ code: "price_far_from_mid", actual: 0.11 })]);
    });

    test("one unit of a finer tick beyond the band fails", () => {
      const fine: Over = { market: market({ tick_size: "0.001" }) };
      expect(codes(0.6, fine)).toEqual([]);
      expect(run(0.601, fine)).toEqual([expect.objectContaining({ code: "price_far_from_mid", actual: 0.101 })]);
    });

    test("uses the last trade when a side of the book is empty", () => {
      const noBids: Over = { book: book({ bids: [], last_trade_price: "0.3" }) };
      expect(codes(0.4, noBids)).toEqual([]);
      expect(run(0.41, noBids)).toEqual([
        expect.objectContaining({ code: "price_far_from_mid", message: expect.stringContaining("last trade price 0.3"), actual: 0.11 }),
      ]);
    });

    test("applies to sells the same way", () => {
      expect(codes(0.61, { intent: { side: "sell" } })).toEqual(["price_far_from_mid"]);
    });
  });

  describe("no_reference_price", () => {
    test("an empty side and no last trade fails", () => {
      expect(run(0.5, { book: book({ asks: [], last_trade_price: null }) })).toEqual([
        { check: "price_sanity", code: "no_reference_price", message: expect.any(String), limit: null, actual: null },
      ]);
    });

    test("levels of size 0 count as empty", () => {
      expect(codes(0.5, { book: book({ asks: levels(["0.52", "0"]), last_trade_price: null }) })).toEqual(["no_reference_price"]);
    });

    test("a missing book fails the same way", () => {
      expect(codes(0.5, { book: null })).toEqual(["no_reference_price"]);
    });

    test("bounds and tick are still judged", () => {
      expect(codes(0.505, { book: null })).toEqual(["price_off_tick", "no_reference_price"]);
    });
  });

  test("passes vacuously when the market is not found", () => {
    expect(run(0.505, { market: null })).toEqual([]);
  });

  test("a malformed book price throws (evaluateRisk reports check_error)", () => {
    expect(() => run(0.5, { book: book({ bids: levels(["abc", "10"]) }) })).toThrow();
  });
});
