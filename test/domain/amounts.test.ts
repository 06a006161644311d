import { describe, expect, test } from "bun:test";
import {
  AmountError,
  isOnTick,
  notionalFor,
  orderAmounts,
  priceToUnits,
  sharesFor,
} from "../../src/domain/amounts.ts";
import { toUnits } from "../../src/domain/units.ts";

const usdc = (s: string) => toUnits(s, 6);

describe("orderAmounts", () => {
  test("contract example: buy 5.2 at 0.52", () => {
    const a = orderAmounts({ side: "buy", sizeUnits: usdc("5.2"), price: "0.52" });
    expect(a.sharesUnits).toBe(10_000_000n);
    expect(a.notionalUnits).toBe(5_200_000n);
    expect(a.makerAmount).toBe(5_200_000n);
    expect(a.takerAmount).toBe(10_000_000n);
  });

  test("sell swaps maker and taker amounts", () => {
    const a = orderAmounts({ side: "sell", sizeUnits: usdc("5.2"), price: "0.52" });
    expect(a.makerAmount).toBe(10_000_000n);
    expect(a.takerAmount).toBe(5_200_000n);
  });

  // size, price, expected shares (2 decimals, floored), expected notional.
  const cases: Array<[string, string, string, string]> = [
    // tick 0.1
    ["1", "0.3", "3.33", "0.999"],
    ["10", "0.7", "14.28", "9.996"],
    ["0.5", "0.5", "1", "0.5"],
    // tick 0.01
    ["5.2", "0.52", "10", "5.2"],
    ["1", "0.33", "3.03", "0.9999"],
    ["100", "0.99", "101.01", "99.9999"],
    ["7.123456", "0.01", "712.34", "7.1234"],
    // tick 0.001
    ["1", "0.333", "3", "0.999"],
    ["25", "0.123", "203.25", "24.99975"],
    ["0.01", "0.001", "10", "0.01"],
    // tick 0.0001
    ["1", "0.3333", "3", "0.9999"],
    ["3", "0.0007", "4285.71", "2.999997"],
    ["1000000", "0.9999", "1000100.01", "999999.999999"],
  ];

  for (const [size, price, shares, notional] of cases) {
    for (const side of ["buy", "sell"] as const) {
      test(`${side} ${size} USDC at ${price} → ${shares} shares, ${notional} USDC`, () => {
        const a = orderAmounts({ side, sizeUnits: usdc(size), price });
        expect(a.sharesUnits).toBe(usdc(shares));
        expect(a.notionalUnits).toBe(usdc(notional));
        if (side === "buy") {
          expect(a.makerAmount).toBe(a.notionalUnits);
          expect(a.takerAmount).toBe(a.sharesUnits);
        } else {
          expect(a.makerAmount).toBe(a.sharesUnits);
          expect(a.takerAmount).toBe(a.notionalUnits);
        }
      });
    }
  }

  test("floors, exactness and never exceeds the size (randomized, every tick size)", () => {
    const ticks = [1000n, 100n, 10n, 1n]; // 0.1, 0.01, 0.001, 0.0001 in 1e-4 units
    for (let i = 0; i < 4000; i++) {
      const tick = ticks[i % 4];
      const maxSteps = 10_000n / tick - 1n;
      const p = tick * (1n + BigInt(Math.floor(Math.random() * Number(maxSteps))));
      const price = `0.${p.toString().padStart(4, "0")}`;
      const sizeUnits = BigInt(Math.floor(Math.random() * 1e12)) + p; // at least one 0.01 share
      const side = i % 2 === 0 ? "buy" : "sell";
      const a = orderAmounts({ side, sizeUnits, price });
      // Two decimals of shares.
      expect(a.sharesUnits % 10_000n).toBe(0n);
      // notional = shares × price exactly: notional·10⁴ = shares·p (both in 6-decimal units).
      expect(a.notionalUnits * 10_000n).toBe(a.sharesUnits * p);
      // Floor: notional ≤ size, and one more 0.01 share (p more units of notional) would exceed it.
      expect(a.notionalUnits <= sizeUnits).toBe(true);
      expect(a.notionalUnits + p > sizeUnits).toBe(true);
      expect(sharesFor(sizeUnits, price)).toBe(a.sharesUnits);
      expect(notionalFor(a.sharesUnits, price)).toBe(a.notionalUnits);
    }
  });

  test("rejects prices with more than 4 decimals", () => {
    expect(() => orderAmounts({ side: "buy", sizeUnits: usdc("1"), price: "0.12345" })).toThrow(AmountError);
    expect(() => orderAmounts({ side: "sell", sizeUnits: usdc("1"), price: "0.00001" })).toThrow(AmountError);
    expect(() => sharesFor(usdc("1"), "0.50001")).toThrow(AmountError);
    // Trailing zeros past the 4th decimal do not change the value and are accepted.
    expect(orderAmounts({ side: "buy", sizeUnits: usdc("1"), price: "0.500000" }).sharesUnits).toBe(usdc("2"));
  });

  test("rejects prices out of (0, 1) and malformed prices", () => {
    for (const price of ["0", "0.0", "1", "1.0", "1.5", "-0.5", "", "abc", "0.5.1", "1e-2", " "]) {
      expect(() => orderAmounts({ side: "buy", sizeUnits: usdc("1"), price })).toThrow(AmountError);
    }
  });

  test("rejects negative sizes, sizes below one 0.01 share and bad sides", () => {
    expect(() => orderAmounts({ side: "buy", sizeUnits: -1n, price: "0.5" })).toThrow(AmountError);
    expect(() => orderAmounts({ side: "buy", sizeUnits: 0n, price: "0.5" })).toThrow(AmountError);
    // 0.004999 USDC at 0.5 is 0.009998 share → floors to 0.
    expect(() => orderAmounts({ side: "sell", sizeUnits: 4_999n, price: "0.5" })).toThrow(AmountError);
    expect(orderAmounts({ side: "sell", sizeUnits: 5_000n, price: "0.5" }).sharesUnits).toBe(10_000n);
    expect(() => orderAmounts({ side: "hold" as "buy", sizeUnits: 1n, price: "0.5" })).toThrow(AmountError);
  });
});

describe("helpers", () => {
  test("priceToUnits", () => {
    expect(priceToUnits("0.52")).toBe(5200n);
    expect(priceToUnits("0.0001")).toBe(1n);
    expect(priceToUnits("0.9999")).toBe(9999n);
    expect(priceToUnits("0.5000")).toBe(5000n);
    expect(() => priceToUnits(".5")).toThrow(AmountError);
  });

  test("sharesFor floors and returns 0 below one step", () => {
    expect(sharesFor(usdc("1"), "0.3")).toBe(usdc("3.33"));
    expect(sharesFor(0n, "0.3")).toBe(0n);
    expect(sharesFor(2_999n, "0.3")).toBe(0n);
    expect(sharesFor(3_000n, "0.3")).toBe(10_000n);
  });

  test("notionalFor: exact by default, floor and ceil on request", () => {
    expect(notionalFor(usdc("10"), "0.52")).toBe(usdc("5.2"));
    expect(() => notionalFor(1n, "0.52")).toThrow(AmountError);
    expect(notionalFor(1n, "0.52", "floor")).toBe(0n);
    expect(notionalFor(1n, "0.52", "ceil")).toBe(1n);
    expect(notionalFor(usdc("1.234567"), "0.5", "floor")).toBe(617_283n);
    expect(notionalFor(usdc("1.234567"), "0.5", "ceil")).toBe(617_284n);
  });

  test("isOnTick", () => {
    expect(isOnTick("0.52", "0.01")).toBe(true);
    expect(isOnTick("0.525", "0.01")).toBe(false);
    expect(isOnTick("0.525", "0.001")).toBe(true);
    expect(isOnTick("0.5", "0.1")).toBe(true);
    expect(isOnTick("0.55", "0.1")).toBe(false);
    expect(isOnTick("0.0001", "0.0001")).toBe(true);
    expect(isOnTick("1", "0.01")).toBe(false);
    expect(isOnTick("0", "0.01")).toBe(false);
    expect(isOnTick("0.52", "bad")).toBe(false);
  });
});

test("priceToUnits answers the same when asked again, and a bad price always throws", () => {
  expect(priceToUnits("0.52")).toBe(5200n);
  expect(priceToUnits("0.52")).toBe(5200n);
  expect(() => priceToUnits("1.5")).toThrow();
  expect(() => priceToUnits("1.5")).toThrow();
  expect(priceToUnits("0.52")).toBe(5200n);
  expect(priceToUnits("0.0001")).toBe(1n);
});
