import { expect, test } from "bun:test";
import { fromUnits, toUnits, unitsToNumber } from "../../src/domain/units.ts";

test("unitsToNumber is the JSON number of the decimal text, for every scale and size", () => {
  const fixed = [0n, 1n, -1n, 5n, 999_999n, 1_000_000n, 1_500_000n, 123_456_789n, 2n ** 53n - 1n, -(2n ** 53n - 1n), 2n ** 53n, 2n ** 53n + 1n, -(2n ** 60n), 10n ** 30n + 7n];
  const random = Array.from({ length: 3000 }, (_, i) => {
    const digits = 1 + (i % 17);
    let s = "";
    for (let d = 0; d < digits; d++) s += Math.floor(Math.random() * 10);
    return BigInt(s) * (i % 3 === 0 ? -1n : 1n);
  });
  for (const units of [...fixed, ...random]) {
    for (const decimals of [0, 1, 2, 4, 6, 9, 12, 18, 22, 23, 30]) {
      expect(unitsToNumber(units, decimals)).toBe(Number(fromUnits(units, decimals)));
    }
  }
  expect(unitsToNumber(1_500_000n)).toBe(1.5);
  expect(unitsToNumber(1n)).toBe(0.000001);
});

test("toUnits reads integer and fraction digits as one integer", () => {
  expect(toUnits("0")).toBe(0n);
  expect(toUnits("5")).toBe(5_000_000n);
  expect(toUnits("-0.000001")).toBe(-1n);
  expect(toUnits("0012.5")).toBe(12_500_000n);
  expect(toUnits("1.23", 0, "floor")).toBe(1n);
  expect(toUnits("7", 0)).toBe(7n);
  expect(toUnits(0.1)).toBe(100_000n);
  expect(toUnits(1e21)).toBe(10n ** 27n);
  expect(toUnits("0.52", 4)).toBe(5200n);
  expect(() => toUnits("0.0000001")).toThrow();
  expect(toUnits("0.0000001", 6, "floor")).toBe(0n);
});
