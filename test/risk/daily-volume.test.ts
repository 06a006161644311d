import { describe, expect, test } from "bun:test";
import { checkDailyVolume } from "../../src/risk/checks/daily-volume.ts";
import { input } from "./fixtures.ts";

const run = (usedUnits: bigint, size_usdc: number, over: Parameters<typeof input>[0] = {}) =>
  checkDailyVolume(input({ ...over, intent: { size_usdc, ...over.intent }, state: { daily_used_usdc_units: usedUnits } }));

describe("daily_volume check", () => {
  test("passes well under the limit", () => {
    expect(run(0n, 10)).toEqual([]);
  });

  test("exactly reaching the limit passes", () => {
    expect(run(990_000_000n, 10)).toEqual([]);
  });

  test("one base unit over fails with limit and actual", () => {
    expect(run(990_000_000n, 10.000001)).toEqual([
      {
        check: "daily_volume",
        code: "daily_volume_exceeded",
        message: expect.stringContaining("990 USDC used today"),
        limit: 1000,
        actual: 1000.000001,
      },
    ]);
  });

  test("one base unit already used over fails", () => {
    expect(run(990_000_001n, 10).map((f) => f.actual)).toEqual([1000.000001]);
  });

  test("decimals are exact: limit 0.3 with 0.1 used and 0.2 asked passes", () => {
    expect(run(100_000n, 0.2, { limits: { daily_volume_usdc: 0.3 } })).toEqual([]);
    expect(run(100_000n, 0.200001, { limits: { daily_volume_usdc: 0.3 } })).toEqual([
      expect.objectContaining({ code: "daily_volume_exceeded", limit: 0.3, actual: 0.300001 }),
    ]);
  });

  test("sells count against the daily volume too", () => {
    expect(run(995_000_000n, 5.5, { intent: { side: "sell" } }).map((f) => f.code)).toEqual(["daily_volume_exceeded"]);
    expect(run(995_000_000n, 5, { intent: { side: "sell" } })).toEqual([]);
  });

  test("a limit of 0 refuses everything", () => {
    expect(run(0n, 0.000001, { limits: { daily_volume_usdc: 0 } }).map((f) => f.code)).toEqual(["daily_volume_exceeded"]);
  });
});
