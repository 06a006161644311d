import { describe, expect, test } from "bun:test";
import { checkConcentration } from "../../src/risk/checks/concentration.ts";
import { input } from "./fixtures.ts";

const run = (exposureUnits: bigint, size_usdc: number, over: Parameters<typeof input>[0] = {}) =>
  checkConcentration(
    input({ ...over, intent: { size_usdc, ...over.intent }, state: { market_exposure_usdc_units: exposureUnits } }),
  );

describe("concentration check (cap 0.20 × 1000 = 200 USDC)", () => {
  test("a buy under the cap passes", () => {
    expect(run(0n, 10)).toEqual([]);
  });

  test("a buy exactly reaching the cap passes", () => {
    expect(run(190_000_000n, 10)).toEqual([]);
  });

  test("a buy one base unit over fails with limit and actual", () => {
    expect(run(190_000_000n, 10.000001)).toEqual([
      {
        check: "concentration",
        code: "concentration_exceeded",
        message: expect.stringContaining("max_market_exposure_pct 0.2"),
        limit: 200,
        actual: 200.000001,
      },
    ]);
  });

  test("a sell never fails: it lowers the exposure", () => {
    expect(run(10_000_000_000n, 50, { intent: { side: "sell" } })).toEqual([]);
  });

  test("a negative net exposure counts as 0", () => {
    expect(run(-100_000_000n, 200, { limits: { max_order_usdc: 1000 } })).toEqual([]);
    expect(run(-100_000_000n, 200.01)).toEqual([expect.objectContaining({ code: "concentration_exceeded", actual: 200.01 })]);
  });

  test("decimals are exact: cap 0.1 × 3 = 0.3 with 0.1 held and 0.2 asked passes", () => {
    const limits = { max_market_exposure_pct: 0.1, capital_usdc: 3 };
    expect(run(100_000n, 0.2, { limits })).toEqual([]);
    expect(run(100_000n, 0.200001, { limits })).toEqual([expect.objectContaining({ limit: 0.3, actual: 0.300001 })]);
  });

  test("a cap with more than 6 decimals is reported floored to 6", () => {
    // 0.3333333 × 3 = 0.9999999 → 0.999999
    const limits = { max_market_exposure_pct: 0.3333333, capital_usdc: 3 };
    expect(run(0n, 0.999999, { limits })).toEqual([]);
    expect(run(0n, 1, { limits })).toEqual([expect.objectContaining({ limit: 0.999999, actual: 1 })]);
  });
});
