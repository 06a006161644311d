import { expect, test } from "bun:test";
import { utcDay } from "../../actors/order-counts.ts";

test("utcDay is the UTC date of the instant, also across day boundaries and back", () => {
  const midnight = Date.UTC(2026, 10, 24);
  const instants = [midnight - 1, midnight, midnight + 1, midnight + 86_399_999, midnight + 86_400_000, midnight - 1, 0, -1, Date.UTC(2024, 1, 29, 12), midnight];
  for (const ms of instants) expect(utcDay(ms)).toBe(new Date(ms).toISOString().slice(0, 10));
  expect(() => utcDay(Number.NaN)).toThrow(RangeError);
  expect(utcDay(midnight)).toBe("2026-11-24");
});
