/**
 * Check 4, `daily_volume` (docs/api.md#risk-checks): `daily_volume_exceeded` when the
 * notional approved this UTC day (state.daily_used_usdc_units: still
 * reserved, open and filled orders, buys and sells alike) plus s exceeds
 * daily_volume_usdc. Exactly reaching the limit passes. limit
 * daily_volume_usdc, actual used + s. A size that is not a number throws
 * (reported as check_error by evaluateRisk).
 */
import * as R from "../../domain/ratio.ts";
import type { RiskFailure, RiskInput } from "../types.ts";

export function checkDailyVolume(input: RiskInput): RiskFailure[] {
  const { intent, limits, state } = input;
  const after = R.addBaseUnits(state.daily_used_usdc_units, R.fromDecimal(intent.size_usdc));
  const limit = R.fromDecimal(limits.daily_volume_usdc);
  if (R.lte(after, limit)) return [];
  const used = R.fromBaseUnits(state.daily_used_usdc_units);
  return [
    {
      check: "daily_volume",
      code: "daily_volume_exceeded",
      message: `${R.toDecimalString(used, 6)} USDC used today plus ${intent.size_usdc} exceeds daily_volume_usdc ${limits.daily_volume_usdc}`,
      limit: limits.daily_volume_usdc,
      actual: R.toNumber(after),
    },
  ];
}
