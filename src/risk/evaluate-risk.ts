/**
 * The risk engine (docs/api.md#risk-checks): runs the eight checks in their fixed order,
 * evaluates every one of them, and collects every failure in that order. It
 * never throws: a check that throws becomes a failure with code `check_error`
 * for that check (never a silent pass), and a limit or actual that is not a
 * finite number is reported as null.
 */
import { checkBreaker } from "./checks/breaker.ts";
import { checkConcentration } from "./checks/concentration.ts";
import { checkDailyVolume } from "./checks/daily-volume.ts";
import { checkKellyCap } from "./checks/kelly-cap.ts";
import { checkLiquidityImpact } from "./checks/liquidity-impact.ts";
import { checkMarketFilters } from "./checks/market-filters.ts";
import { checkOrderSize } from "./checks/order-size.ts";
import { checkPriceSanity } from "./checks/price-sanity.ts";
import type { CheckName, CheckResult, RiskCheck, RiskFailure, RiskInput, RiskResult } from "./types.ts";

/** The checks in the fixed order of docs/api.md#risk-checks. */
export const RISK_CHECKS: readonly (readonly [CheckName, RiskCheck])[] = [
  ["breaker", checkBreaker],
  ["market_filters", checkMarketFilters],
  ["order_size", checkOrderSize],
  ["daily_volume", checkDailyVolume],
  ["concentration", checkConcentration],
  ["kelly_cap", checkKellyCap],
  ["price_sanity", checkPriceSanity],
  ["liquidity_impact", checkLiquidityImpact],
];

const finiteOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

const NO_FAILURES = Object.freeze([]) as unknown as RiskFailure[];

function runCheck(name: CheckName, check: RiskCheck, input: RiskInput): RiskFailure[] {
  try {
    const out = check(input);
    if (!Array.isArray(out)) throw new Error("the check returned no failure list");
    if (out.length === 0) return NO_FAILURES;
    return out.map((f) => ({
      check: name,
      code: String(f.code),
      message: String(f.message),
      limit: finiteOrNull(f.limit),
      actual: finiteOrNull(f.actual),
    }));
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return [
      {
        check: name,
        code: "check_error",
        message: `the ${name} check could not be evaluated: ${reason}`,
        limit: null,
        actual: null,
      },
    ];
  }
}

export function evaluateRisk(input: RiskInput): RiskResult {
  const checks: CheckResult[] = [];
  const failures: RiskFailure[] = [];
  for (const [name, check] of RISK_CHECKS) {
    const found = runCheck(name, check, input);
    checks.push({ check: name, passed: found.length === 0 });
    for (let i = 0; i < found.length; i++) failures.push(found[i]);
  }
  return { approved: failures.length === 0, checks, failures };
}
