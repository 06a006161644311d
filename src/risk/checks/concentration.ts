/**
 * Check 5, `concentration` (docs/api.md#risk-checks): `concentration_exceeded` when, on a
 * buy, the agent's exposure in this market's condition (state.
 * market_exposure_usdc_units: both outcome tokens, the positions at cost plus
 * open buys' unfilled notional; the actor keeps it, see actors/order-counts.ts
 * exposureOf) plus s exceeds max_market_exposure_pct × capital_usdc. Exactly
 * reaching the cap passes. limit the cap in USDC, actual exposure + s.
 * - A sell always passes: on the CLOB a sell can only hand over shares the
 *   agent holds, so it lowers the exposure and can never raise it.
 * - A negative net exposure (sells of shares acquired outside the service) is
 *   counted as 0: it never makes room for buys beyond the cap.
 */
import * as R from "../../domain/ratio.ts";
import type { RiskFailure, RiskInput } from "../types.ts";

/** max_market_exposure_pct × capital_usdc, remembered for the last limits. */
const capOf = R.memo2(R.mul);

export function checkConcentration(input: RiskInput): RiskFailure[] {
  const { intent, limits, state } = input;
  if (intent.side === "sell") return [];
  const exposureUnits = state.market_exposure_usdc_units < 0n ? 0n : state.market_exposure_usdc_units;
  const after = R.addBaseUnits(exposureUnits, R.fromDecimal(intent.size_usdc));
  const cap = capOf(R.fromDecimal(limits.max_market_exposure_pct), R.fromDecimal(limits.capital_usdc));
  if (R.lte(after, cap)) return [];
  const exposure = R.fromBaseUnits(exposureUnits);
  return [
    {
      check: "concentration",
      code: "concentration_exceeded",
      message:
        `exposure ${R.toDecimalString(exposure, 6)} USDC in this market plus ${intent.size_usdc} exceeds ` +
        `max_market_exposure_pct ${limits.max_market_exposure_pct} × capital_usdc ${limits.capital_usdc} = ${R.toDecimalString(cap, 6, "floor")}`,
      limit: R.toNumber(R.floorTo(cap, 6)),
      actual: R.toNumber(after),
    },
  ];
}
