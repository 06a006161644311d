import { describe, expect, test } from "bun:test";
import { checkKellyCap, kellyFraction } from "../../src/risk/checks/kelly-cap.ts";
import { fromDecimal, toDecimalString } from "../../src/domain/ratio.ts";
import { input } from "./fixtures.ts";
import type { RiskIntent } from "../../src/risk/types.ts";

const run = (intent: Partial<RiskIntent>, over: Parameters<typeof input>[0] = {}) =>
  checkKellyCap(input({ ...over, intent }));

describe("kellyFraction", () => {
  test("buy: (q − p) / (1 − p); sell: (p − q) / p, exactly", () => {
    const f = (side: "buy" | "sell", p: string, q: string) => kellyFraction(side, fromDecimal(p), fromDecimal(q));
    expect(toDecimalString(f("buy", "0.5", "0.6")!)).toBe("0.2");
    expect(toDecimalString(f("sell", "0.5", "0.4")!)).toBe("0.2");
    expect(f("buy", "0.55", "0.6")).toEqual({ num: 1n, den: 9n });
    expect(f("buy", "1", "0.6")).toBeNull();
    expect(f("sell", "0", "0.6")).toBeNull();
  });
});

describe("kelly_cap check without a probability (fallback 0.02 × 1000 = 20)", () => {
  test("exactly the fallback cap passes", () => {
    expect(run({ size_usdc: 20 })).toEqual([]);
  });

  test("one base unit over fails", () => {
    expect(run({ size_usdc: 20.000001 })).toEqual([
      { check: "kelly_cap", code: "kelly_cap_exceeded", message: expect.stringContaining("kelly_fallback_pct"), limit: 20, actual: 20.000001 },
    ]);
  });

  test("applies to sells too", () => {
    expect(run({ size_usdc: 20.000001, side: "sell" }).map((f) => f.code)).toEqual(["kelly_cap_exceeded"]);
  });
});

describe("kelly_cap check with a probability", () => {
  // buy p 0.5 q 0.6: f* = 0.2, cap = 0.25 × 0.2 × 1000 = 50
  test("a buy exactly at the cap passes", () => {
    expect(run({ side: "buy", price: 0.5, probability: 0.6, size_usdc: 50 })).toEqual([]);
  });

  test("a buy one base unit over the cap fails", () => {
    expect(run({ side: "buy", price: 0.5, probability: 0.6, size_usdc: 50.000001 })).toEqual([
      { check: "kelly_cap", code: "kelly_cap_exceeded", message: expect.stringContaining("f* 0.2"), limit: 50, actual: 50.000001 },
    ]);
  });

  // sell p 0.5 q 0.4: f* = 0.2, cap 50
  test("a sell exactly at the cap passes, one base unit over fails", () => {
    expect(run({ side: "sell", price: 0.5, probability: 0.4, size_usdc: 50 })).toEqual([]);
    expect(run({ side: "sell", price: 0.5, probability: 0.4, size_usdc: 50.000001 })).toEqual([
      expect.objectContaining({ code: "kelly_cap_exceeded", limit: 50, actual: 50.000001 }),
    ]);
  });

  test("the probability replaces the fallback (50 > 20 passes)", () => {
    expect(run({ price: 0.5, probability: 0.6, size_usdc: 40 })).toEqual([]);
  });

  test("no_edge when f* is 0", () => {
    expect(run({ side: "buy", price: 0.5, probability: 0.5, size_usdc: 1 })).toEqual([
      { check: "kelly_cap", code: "no_edge", message: expect.any(String), limit: 0, actual: 0 },
    ]);
  });

  test("no_edge when f* is negative, for buys and sells", () => {
    expect(run({ side: "buy", price: 0.5, probability: 0.4, size_usdc: 1 })).toEqual([
      expect.objectContaining({ code: "no_edge", limit: 0, actual: -0.2 }),
    ]);
    expect(run({ side: "sell", price: 0.5, probability: 0.6, size_usdc: 1 })).toEqual([
      expect.objectContaining({ code: "no_edge", limit: 0, actual: -0.2 }),
    ]);
  });

  test("the smallest edge passes a small order", () => {
    // buy p 0.5 q 0.51: f* = 0.02, cap = 5
    expect(run({ price: 0.5, probability: 0.51, size_usdc: 5 })).toEqual([]);
    expect(run({ price: 0.5, probability: 0.51, size_usdc: 5.000001 }).map((f) => f.code)).toEqual(["kelly_cap_exceeded"]);
  });

  test("a cap that is not a terminating decimal is exact, reported floored to 6 decimals", () => {
    // buy p 0.55 q 0.6: f* = 1/9, cap = 0.25 × 1/9 × 1000 = 27.777…
    expect(run({ price: 0.55, probability: 0.6, size_usdc: 27.777777 })).toEqual([]);
    expect(run({ price: 0.55, probability: 0.6, size_usdc: 27.777778 })).toEqual([
      expect.objectContaining({ code: "kelly_cap_exceeded", limit: 27.777777, actual: 27.777778 }),
    ]);
  });

  test("a buy at p = 1 or a sell at p = 0 has no edge and does not throw", () => {
    expect(run({ side: "buy", price: 1, probability: 0.9, size_usdc: 1 })).toEqual([
      expect.objectContaining({ code: "no_edge", limit: 0, actual: null }),
    ]);
    expect(run({ side: "sell", price: 0, probability: 0.1, size_usdc: 1 })).toEqual([
      expect.objectContaining({ code: "no_edge", actual: null }),
    ]);
  });
});
