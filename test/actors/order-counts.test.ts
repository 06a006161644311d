import { expect, test } from "bun:test";
import { utcDay } from "../../actors/order-counts.ts";

test("utcDay is the UTC date of the instant, also across day boundaries and back", () => {
  const midnight = Date.UTC(2026, 10, 24);
  const instants = [midnight - 1, midnight, midnight + 1, midnight + 86_399_999, midnight + 86_400_000, midnight - 1, 0, -1, Date.UTC(2024, 1, 29, 12), midnight];
  for (const ms of instants) expect(utcDay(ms)).toBe(new Date(ms).toISOString().slice(0, 10));
  expect(() => utcDay(Number.NaN)).toThrow(RangeError);
  expect(utcDay(midnight)).toBe("2026-11-24");
});

import { exposureOf } from "../../actors/order-counts.ts";
import { coveredBy } from "../../src/domain/fill-links.ts";

test("exposureOf: a buy counts what its fills (the position) do not; a sell counts nothing", () => {
  const buy = { side: "buy" as const, notionalUnits: 10_000_000n };
  // Open, nothing filled: its whole notional. Partly filled (4 paid, in the position): the other 6.
  expect(exposureOf({ ...buy, status: "open", filledUnits: 0n, fillsUsdcUnits: 0n })).toBe(10_000_000n);
  expect(exposureOf({ ...buy, status: "open", filledUnits: 4_000_000n, fillsUsdcUnits: 4_000_000n })).toBe(6_000_000n);
  // Filled with its fills: nothing beyond the position (counted once). Filled at a better price (9.5
  // paid): its notional still (never less than before positions, as the daily volume counts it).
  expect(exposureOf({ ...buy, status: "filled", filledUnits: 10_000_000n, fillsUsdcUnits: 10_000_000n })).toBe(0n);
  expect(exposureOf({ ...buy, status: "filled", filledUnits: 9_500_000n, fillsUsdcUnits: 9_500_000n })).toBe(500_000n);
  // Filled as a venue read said, with no fill row (the kill found it matched): the whole notional.
  expect(exposureOf({ ...buy, status: "filled", filledUnits: 0n, fillsUsdcUnits: 0n })).toBe(10_000_000n);
  // Cancelled after 3 filled, known from the venue's read only: those 3; with their fill rows: nothing more.
  expect(exposureOf({ ...buy, status: "cancelled", filledUnits: 3_000_000n, fillsUsdcUnits: 0n })).toBe(3_000_000n);
  expect(exposureOf({ ...buy, status: "cancelled", filledUnits: 3_000_000n, fillsUsdcUnits: 3_000_000n })).toBe(0n);
  // Unresolved or failed (a kill could not confirm): the notional less what is in the position.
  expect(exposureOf({ ...buy, status: "unknown", filledUnits: 0n, fillsUsdcUnits: 2_000_000n })).toBe(8_000_000n);
  expect(exposureOf({ ...buy, status: "failed", filledUnits: 0n })).toBe(10_000_000n);
  expect(exposureOf({ side: "sell", status: "open", notionalUnits: 5_000_000n, filledUnits: 2_000_000n, fillsUsdcUnits: 2_000_000n })).toBe(0n);
});

test("coveredBy: a source's fill is one of a placement answer's matches by name, not when a name of its kind differs, taken as one when nothing compares", () => {
  const both = ["trade:T1", "tx:0xaa"];
  expect(coveredBy(both, { tradeId: "T1", txHash: null })).toBe("named");
  expect(coveredBy(both, { tradeId: null, txHash: "0xAA" })).toBe("named");
  expect(coveredBy(both, { tradeId: "T2", txHash: null })).toBe(false);
  expect(coveredBy(both, { tradeId: null, txHash: "0xbb" })).toBe(false);
  // Polymarket's answers name trades only: the chain's log (a transaction, no trade id) cannot be told apart.
  expect(coveredBy(["trade:T1"], { tradeId: null, txHash: "0xbb" })).toBe("unnamed");
  expect(coveredBy(["trade:T1"], { tradeId: "T9", txHash: "0xbb" })).toBe(false);
  expect(coveredBy([], { tradeId: "T9", txHash: null })).toBe("unnamed");
});
