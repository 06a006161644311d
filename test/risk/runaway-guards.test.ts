/** The runaway guards of check 1 (src/risk/checks/breaker.ts), as pure functions of the state and limits. */
import { describe, expect, test } from "bun:test";
import { checkBreaker } from "../../src/risk/checks/breaker.ts";
import { evaluateRisk } from "../../src/risk/evaluate-risk.ts";
import type { RunawayState } from "../../src/risk/types.ts";
import { input } from "./fixtures.ts";

const calm: RunawayState = { approved_last_minute: 0, open_orders: 0, duplicate_age_ms: null };
const run = (runaway: Partial<RunawayState> | undefined, limits = {}, tripped = false) =>
  checkBreaker(input({ limits, state: { breaker: { tripped, reason: tripped ? "kill" : null }, ...(runaway ? { runaway: { ...calm, ...runaway } } : {}) } }));
const codes = (f: { code: string }[]) => f.map((x) => x.code);

describe("runaway guards in the breaker check", () => {
  test("without runaway state they are not evaluated", () => {
    expect(run(undefined, { max_open_orders: 1 })).toEqual([]);
  });

  test("order rate: at max_orders_per_minute approvals the next is refused, below it passes", () => {
    expect(run({ approved_last_minute: 59 })).toEqual([]);
    expect(run({ approved_last_minute: 60 })).toEqual([
      expect.objectContaining({ check: "breaker", code: "order_rate_exceeded", limit: 60, actual: 61 }),
    ]);
    expect(codes(run({ approved_last_minute: 2 }, { max_orders_per_minute: 2 }))).toEqual(["order_rate_exceeded"]);
  });

  test("open orders: at max_open_orders the next is refused", () => {
    expect(run({ open_orders: 99 })).toEqual([]);
    expect(run({ open_orders: 100 })).toEqual([expect.objectContaining({ code: "open_orders_exceeded", limit: 100, actual: 101 })]);
  });

  test("duplicate: refused below the window, accepted at it; window 0 is off", () => {
    expect(run({ duplicate_age_ms: 0 })).toEqual([expect.objectContaining({ code: "duplicate_order", limit: 5, actual: 0 })]);
    expect(run({ duplicate_age_ms: 4_999 })).toEqual([expect.objectContaining({ code: "duplicate_order", limit: 5, actual: 4.999 })]);
    expect(run({ duplicate_age_ms: 5_000 })).toEqual([]);
    expect(run({ duplicate_age_ms: 0 }, { duplicate_window_s: 0 })).toEqual([]);
    expect(run({ duplicate_age_ms: 59_999 }, { duplicate_window_s: 60 })).toHaveLength(1);
  });

  test("every failure is collected, after breaker_tripped, and the verdict keeps eight checks", () => {
    const all = run({ approved_last_minute: 60, open_orders: 100, duplicate_age_ms: 1 }, {}, true);
    expect(codes(all)).toEqual(["breaker_tripped", "order_rate_exceeded", "open_orders_exceeded", "duplicate_order"]);
    const verdict = evaluateRisk(input({ state: { breaker: { tripped: false, reason: null }, daily_used_usdc_units: 0n, market_exposure_usdc_units: 0n, runaway: { ...calm, open_orders: 100 } } }));
    expect(verdict.approved).toBe(false);
    expect(verdict.checks).toHaveLength(8);
    expect(verdict.checks.filter((c) => !c.passed).map((c) => c.check)).toEqual(["breaker"]);
  });
});
