/**
 * Check 1, `breaker` (docs/api.md#risk-checks): fails with `breaker_tripped` while the
 * agent's breaker is tripped (kill switch, manual, venue errors, runaway or heartbeat). The
 * cooldown close of a venue-errors breaker is resolved by the caller before it
 * builds RiskInput.state; this check only reads `tripped`.
 *
 * The runaway guards act here too (docs/api.md#runaway-guards), so the eight checks stay eight:
 * - `order_rate_exceeded`: `max_orders_per_minute` intents were already approved in the last 60 s;
 * - `open_orders_exceeded`: `max_open_orders` orders are already open, awaiting or pending;
 * - `duplicate_order`: the same market, side, size and price was approved less than
 *   `duplicate_window_s` ago (at exactly the window it is accepted again).
 * Tripping the breaker after `runaway_trip_count` such refusals is the actor's part: it owns the state.
 */
import type { RiskFailure, RiskInput } from "../types.ts";

/** The failure codes of the runaway guards. */
export const RUNAWAY_CODES: ReadonlySet<string> = new Set(["order_rate_exceeded", "open_orders_exceeded", "duplicate_order"]);

export function checkBreaker(input: RiskInput): RiskFailure[] {
  const failures: RiskFailure[] = [];
  const { breaker, runaway } = input.state;
  if (breaker.tripped) {
    const reason = breaker.reason ? ` (reason: ${breaker.reason})` : "";
    failures.push({
      check: "breaker",
      code: "breaker_tripped",
      message: `the agent's breaker is tripped${reason}; no new orders until it closes`,
      limit: null,
      actual: null,
    });
  }
  if (!runaway) return failures;
  const { max_orders_per_minute: perMinute, max_open_orders: maxOpen, duplicate_window_s: windowS } = input.limits;
  if (runaway.approved_last_minute >= perMinute) {
    failures.push({
      check: "breaker",
      code: "order_rate_exceeded",
      message: `${runaway.approved_last_minute} intents were approved in the last 60 s; max_orders_per_minute is ${perMinute}`,
      limit: perMinute,
      actual: runaway.approved_last_minute + 1,
    });
  }
  if (runaway.open_orders >= maxOpen) {
    failures.push({
      check: "breaker",
      code: "open_orders_exceeded",
      message: `${runaway.open_orders} orders are open or awaiting; max_open_orders is ${maxOpen}`,
      limit: maxOpen,
      actual: runaway.open_orders + 1,
    });
  }
  if (windowS > 0 && runaway.duplicate_age_ms !== null && runaway.duplicate_age_ms < windowS * 1000) {
    failures.push({
      check: "breaker",
      code: "duplicate_order",
      message: `the same market, side, size and price was approved ${runaway.duplicate_age_ms / 1000} s ago, within duplicate_window_s ${windowS}`,
      limit: windowS,
      actual: runaway.duplicate_age_ms / 1000,
    });
  }
  return failures;
}
