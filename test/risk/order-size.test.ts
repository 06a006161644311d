import { describe, expect, test } from "bun:test";
import { checkOrderSize, orderShares } from "../../src/risk/checks/order-size.ts";
import { toDecimalString } from "../../src/domain/ratio.ts";
import { input, market } from "./fixtures.ts";

const run = (size_usdc: number, price = 0.5, over: Parameters<typeof input>[0] = {}) =>
  checkOrderSize(input({ ...over, intent: { size_usdc, price, ...over.intent } }));

describe("orderShares", () => {
  test("is floor₂(s / p)", () => {
    expect(toDecimalString(orderShares(5.2, 0.52)!)).toBe("10");
    expect(toDecimalString(orderShares(10, 0.3)!)).toBe("33.33");
    expect(toDecimalString(orderShares(2.4995, 0.5)!)).toBe("4.99");
  });

  test("is null without dividing by zero", () => {
    expect(orderShares(10, 0)).toBeNull();
    expect(orderShares(10, -0.5)).toBeNull();
    expect(orderShares(10, Number.NaN)).toBeNull();
    expect(orderShares(Number.NaN, 0.5)).toBeNull();
  });

  test("answers the same when asked again, whatever was asked in between", () => {
    expect(toDecimalString(orderShares(10, 0.3)!)).toBe("33.33");
    expect(toDecimalString(orderShares(10, 0.3)!)).toBe("33.33");
    expect(orderShares(10, 0)).toBeNull();
    expect(toDecimalString(orderShares(10, 0.3)!)).toBe("33.33");
    expect(toDecimalString(orderShares(10, 0.5)!)).toBe("20");
    expect(toDecimalString(orderShares(7, 0.5)!)).toBe("14");
  });
});

describe("order_size check", () => {
  test("passes within the limits", () => {
    expect(run(10)).toEqual([]);
  });

  describe("min_order_usdc", () => {
    test("exactly the minimum passes", () => {
      expect(run(1, 0.1)).toEqual([]); // 10 shares
    });

    test("one base unit below fails", () => {
      expect(run(0.999999, 0.1)).toEqual([
        { check: "order_size", code: "order_too_small", message: expect.any(String), limit: 1, actual: 0.999999 },
      ]);
    });
  });

  describe("max_order_usdc", () => {
    test("exactly the maximum passes", () => {
      expect(run(100)).toEqual([]);
    });

    test("one base unit above fails", () => {
      expect(run(100.000001)).toEqual([
        { check: "order_size", code: "order_too_large", message: expect.any(String), limit: 100, actual: 100.000001 },
      ]);
    });
  });

  describe("the market's min_order_size in shares", () => {
    test("exactly min_order_size shares passes", () => {
      expect(run(2.5, 0.5)).toEqual([]); // 5 shares
    });

    test("below fails with shares as limit and actual", () => {
      expect(run(2.49, 0.5)).toEqual([
        { check: "order_size", code: "order_too_small", message: expect.stringContaining("4.98 shares"), limit: 5, actual: 4.98 },
      ]);
    });

    test("the share count is floored, not rounded", () => {
      // 2.4995 / 0.5 = 4.999 → 4.99 shares
      expect(run(2.4995, 0.5)).toEqual([expect.objectContaining({ code: "order_too_small", actual: 4.99, limit: 5 })]);
    });

    test("uses the market's min_order_size", () => {
      expect(run(2.5, 0.5, { market: market({ min_order_size: "15" }) })).toEqual([
        expect.objectContaining({ code: "order_too_small", limit: 15, actual: 5 }),
      ]);
    });

    test("is skipped when the market is not found", () => {
      expect(run(2.49, 0.5, { market: null })).toEqual([]);
    });
  });

  test("too small in USDC and in shares are both reported", () => {
    const failures = run(0.5, 0.5);
    expect(failures.map((f) => [f.code, f.limit, f.actual])).toEqual([
      ["order_too_small", 1, 0.5],
      ["order_too_small", 5, 1],
    ]);
  });

  test("too large and too few shares together", () => {
    const failures = run(150, 0.5, { market: market({ min_order_size: "1000" }) });
    expect(failures.map((f) => f.code)).toEqual(["order_too_large", "order_too_small"]);
  });

  test("a price of 0 fails order_too_small without dividing by zero", () => {
    expect(run(10, 0)).toEqual([expect.objectContaining({ code: "order_too_small", limit: 5, actual: null })]);
  });

  test("a price that is not a number fails order_too_small", () => {
    expect(run(10, Number.NaN)).toEqual([expect.objectContaining({ code: "order_too_small", actual: null })]);
  });

  test("a size that is not a number fails order_too_small", () => {
    expect(run(Number.NaN, 0.5)).toEqual([expect.objectContaining({ code: "order_too_small", limit: 1, actual: null })]);
  });

  test("sells are judged the same way", () => {
    expect(run(100.000001, 0.5, { intent: { side: "sell" } }).map((f) => f.code)).toEqual(["order_too_large"]);
    expect(run(100, 0.5, { intent: { side: "sell" } })).toEqual([]);
  });
});

describe("insufficient_position (a sell of more shares than held, less those already offered)", () => {
  const sell = (size_usdc: number, price: number, held: bigint, offered: bigint) =>
    checkOrderSize(input({ intent: { side: "sell", size_usdc, price }, state: { position: { held_shares_units: held, offered_shares_units: offered } } as any }));

  test("exactly what is free passes; a hundredth of a share more fails", () => {
    // 10 USDC at 0.5: 20 shares; 25 held, 5 offered: 20 free.
    expect(sell(10, 0.5, 25_000_000n, 5_000_000n)).toEqual([]);
    expect(sell(10, 0.5, 24_990_000n, 5_000_000n)).toEqual([
      { check: "order_size", code: "insufficient_position", message: expect.stringContaining("20 shares"), limit: 19.99, actual: 20 },
    ]);
  });

  test("more offered than held counts as nothing free; buys and a state without a position are not checked", () => {
    expect(sell(10, 0.5, 5_000_000n, 9_000_000n)[0]).toMatchObject({ code: "insufficient_position", limit: 0, actual: 20 });
    expect(checkOrderSize(input({ intent: { side: "buy", size_usdc: 10, price: 0.5 }, state: { position: { held_shares_units: 0n, offered_shares_units: 0n } } as any }))).toEqual([]);
    expect(run(10, 0.5, { intent: { side: "sell" } as any })).toEqual([]);
  });
});
