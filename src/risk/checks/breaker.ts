/**
 * Check 1, `breaker` (docs/api.md#risk-checks): fails with `breaker_tripped` while the
 * agent's breaker is tripped (kill switch, manual, or venue errors). The
 * cooldown close of a venue-errors breaker is resolved by the caller before it
 * builds RiskInput.state; this check only reads `tripped`.
 */
import type { RiskFailure, RiskInput } from "../types.ts";

export function checkBreaker(input: RiskInput): RiskFailure[] {
  const { breaker } = input.state;
  if (!breaker.tripped) return [];
  const reason = breaker.reason ? ` (reason: ${breaker.reason})` : "";
  return [
    {
      check: "breaker",
      code: "breaker_tripped",
      message: `the agent's breaker is tripped${reason}; no new orders until it closes`,
      limit: null,
      actual: null,
    },
  ];
}
