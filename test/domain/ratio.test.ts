import { describe, expect, test } from "bun:test";
import * as R from "../../src/domain/ratio.ts";

const r = (v: string | number) => R.fromDecimal(v);

describe("ratio construction", () => {
  test("reduces and keeps the denominator positive", () => {
    expect(R.ratio(6n, 4n)).toEqual({ num: 3n, den: 2n });
    expect(R.ratio(3n, -6n)).toEqual({ num: -1n, den: 2n });
    expect(R.ratio(0n, 7n)).toEqual({ num: 0n, den: 1n });
  });

  test("a zero denominator throws", () => {
    expect(() => R.ratio(1n, 0n)).toThrow(R.RatioError);
  });

  test("reads decimal strings exactly", () => {
    expect(r("0.52")).toEqual({ num: 13n, den: 25n });
    expect(r("-1.5")).toEqual({ num: -3n, den: 2n });
    expect(r(".5")).toEqual({ num: 1n, den: 2n });
    expect(r("+2")).toEqual({ num: 2n, den: 1n });
    expect(r(" 0.010 ")).toEqual({ num: 1n, den: 100n });
    expect(R.fromDecimal(7n)).toEqual({ num: 7n, den: 1n });
  });

  test("reads JSON numbers through their shortest decimal text", () => {
    expect(r(0.1)).toEqual({ num: 1n, den: 10n });
    expect(r(0.57)).toEqual({ num: 57n, den: 100n });
    expect(r(1e-7)).toEqual({ num: 1n, den: 10_000_000n });
    expect(r(1e21)).toEqual({ num: 10n ** 21n, den: 1n });
  });

  test("rejects what is not a plain decimal", () => {
    for (const bad of ["", ".", "5.", "abc", "1e5", "0x10", "1,5", "--1"]) {
      expect(() => R.fromDecimal(bad)).toThrow(R.RatioError);
    }
    expect(() => R.fromDecimal(Number.NaN)).toThrow(R.RatioError);
    expect(() => R.fromDecimal(Number.POSITIVE_INFINITY)).toThrow(R.RatioError);
  });

  test("tryFromDecimal answers null instead of throwing", () => {
    expect(R.tryFromDecimal("abc")).toBeNull();
    expect(R.tryFromDecimal(Number.NaN)).toBeNull();
    expect(R.tryFromDecimal(undefined)).toBeNull();
    expect(R.tryFromDecimal(null)).toBeNull();
    expect(R.tryFromDecimal({})).toBeNull();
    expect(R.tryFromDecimal("0.25")).toEqual({ num: 1n, den: 4n });
  });

  test("fromBaseUnits reads 6-decimal USDC units", () => {
    expect(R.fromBaseUnits(1_500_000n)).toEqual({ num: 3n, den: 2n });
    expect(R.fromBaseUnits(1n)).toEqual({ num: 1n, den: 1_000_000n });
    expect(R.fromBaseUnits(123n, 2)).toEqual({ num: 123n, den: 100n });
  });
});

describe("ratio arithmetic", () => {
  test("0.1 + 0.2 is exactly 0.3", () => {
    expect(R.eq(R.add(r(0.1), r(0.2)), r(0.3))).toBe(true);
    expect(R.compare(R.add(r(0.1), r(0.2)), r(0.3))).toBe(0);
  });

  test("sub, mul, div, neg, abs", () => {
    expect(R.sub(r("0.3"), r("0.1"))).toEqual(r("0.2"));
    expect(R.mul(r("0.52"), r("10"))).toEqual(r("5.2"));
    expect(R.div(r("5.2"), r("0.52"))).toEqual(r("10"));
    expect(R.div(r("1"), r("3"))).toEqual({ num: 1n, den: 3n });
    expect(R.neg(r("0.5"))).toEqual(r("-0.5"));
    expect(R.abs(r("-0.25"))).toEqual(r("0.25"));
    expect(R.abs(r("0.25"))).toEqual(r("0.25"));
  });

  test("division by zero throws", () => {
    expect(() => R.div(R.ONE, R.ZERO)).toThrow(R.RatioError);
  });

  test("compare and the comparison helpers", () => {
    const third = R.div(R.ONE, r(3));
    expect(R.compare(third, r("0.333333"))).toBe(1);
    expect(R.compare(r("0.333333"), third)).toBe(-1);
    expect(R.lt(r("-1"), R.ZERO)).toBe(true);
    expect(R.lte(r("2"), r("2.0"))).toBe(true);
    expect(R.gt(r("2.000001"), r("2"))).toBe(true);
    expect(R.gte(r("2"), r("2.000001"))).toBe(false);
    expect(R.min(r("1"), r("2"))).toEqual(r("1"));
    expect(R.max(r("1"), r("2"))).toEqual(r("2"));
    expect(R.sign(r("-0.1"))).toBe(-1);
    expect(R.sign(R.ZERO)).toBe(0);
    expect(R.isZero(r("0.000"))).toBe(true);
    expect(R.isInteger(R.div(r("0.57"), r("0.01")))).toBe(true);
    expect(R.isInteger(R.div(r("0.505"), r("0.01")))).toBe(false);
  });

  test("floor rounds toward minus infinity", () => {
    expect(R.floor(r("2.7"))).toBe(2n);
    expect(R.floor(r("-2.1"))).toBe(-3n);
    expect(R.floor(r("-2"))).toBe(-2n);
    expect(R.floor(r("0"))).toBe(0n);
  });

  test("floorTo keeps a number of decimals, rounding down", () => {
    expect(R.floorTo(R.div(r(10), r(3)), 2)).toEqual(r("3.33"));
    expect(R.floorTo(R.div(r("2.4995"), r("0.5")), 2)).toEqual(r("4.99"));
    expect(R.floorTo(r("-0.001"), 2)).toEqual(r("-0.01"));
    expect(R.floorTo(r("5.2"), 2)).toEqual(r("5.2"));
  });

  test("divFloorTo is floorTo(div(a, b)) without the reduced quotient", () => {
    const pairs: [string, string][] = [["10", "3"], ["2.4995", "0.5"], ["-0.001", "1"], ["5", "0.47"], ["5", "-0.47"], ["0", "0.3"], ["123456789.123456", "0.0001"]];
    for (const [a, b] of pairs) {
      for (const d of [0, 2, 6]) expect(R.divFloorTo(r(a), r(b), d)).toEqual(R.floorTo(R.div(r(a), r(b)), d));
    }
    expect(() => R.divFloorTo(R.ONE, R.ZERO, 2)).toThrow(R.RatioError);
  });

  test("addBaseUnits is add(fromBaseUnits(units), b)", () => {
    for (const units of [0n, 1n, -1n, 1_500_000n, 190_000_000n, -100_000_000n, 123_456_789_012n]) {
      for (const b of ["0", "5", "0.000001", "-2.5", "10.000001", "1000000000"]) {
        expect(R.addBaseUnits(units, r(b))).toEqual(R.add(R.fromBaseUnits(units), r(b)));
        expect(R.addBaseUnits(units, r(b), 2)).toEqual(R.add(R.fromBaseUnits(units, 2), r(b)));
      }
    }
  });

  test("isMultipleOf is isInteger(div(a, b))", () => {
    for (const [a, b] of [["0.52", "0.01"], ["0.525", "0.01"], ["0.5", "0.25"], ["-0.75", "0.25"], ["0", "0.1"], ["1", "3"], ["1", "-0.5"]]) {
      expect(R.isMultipleOf(r(a), r(b))).toBe(R.isInteger(R.div(r(a), r(b))));
    }
    expect(() => R.isMultipleOf(R.ONE, R.ZERO)).toThrow(R.RatioError);
  });

  test("large values past 2^53 reduce exactly too", () => {
    const big = 2n ** 80n * 3n;
    expect(R.ratio(big, 2n ** 70n * 9n)).toEqual({ num: 2n ** 10n, den: 3n });
    expect(R.ratio(9_007_199_254_740_993n * 6n, 4n)).toEqual({ num: 9_007_199_254_740_993n * 3n, den: 2n });
  });

  test("memo2 answers again for the same arguments and recomputes for others", () => {
    let calls = 0;
    const mul = R.memo2((a: R.Ratio, b: R.Ratio) => {
      calls++;
      return R.mul(a, b);
    });
    const a = r("0.2");
    const b = r("1000");
    expect(mul(a, b)).toEqual(r("200"));
    expect(mul(a, b)).toEqual(r("200"));
    expect(calls).toBe(1);
    expect(mul(b, a)).toEqual(r("200"));
    expect(mul(a, r("10"))).toEqual(r("2"));
    expect(calls).toBe(3);
  });
});

describe("ratio output", () => {
  test("toDecimalString rounds half away from zero or floors", () => {
    expect(R.toDecimalString(R.div(r(2), r(3)), 6)).toBe("0.666667");
    expect(R.toDecimalString(R.div(r(2), r(3)), 6, "floor")).toBe("0.666666");
    expect(R.toDecimalString(R.div(r(-2), r(3)), 6)).toBe("-0.666667");
    expect(R.toDecimalString(r("0.125"), 2)).toBe("0.13");
    expect(R.toDecimalString(r("-0.125"), 2)).toBe("-0.13");
    expect(R.toDecimalString(r("1.50"))).toBe("1.5");
    expect(R.toDecimalString(r("7"), 0)).toBe("7");
  });

  test("toNumber gives plain JSON numbers", () => {
    expect(R.toNumber(R.add(r(0.1), r(0.2)))).toBe(0.3);
    expect(R.toNumber(R.div(R.ONE, r(3)))).toBe(0.333333333333);
    expect(R.toNumber(r("100.000001"))).toBe(100.000001);
    expect(R.toNumber(r("-0.2"))).toBe(-0.2);
    expect(typeof R.toNumber(R.ZERO)).toBe("number");
  });
});
