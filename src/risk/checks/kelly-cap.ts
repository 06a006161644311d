/**
 * Check 6, `kelly_cap` (docs/api.md#risk-checks), in exact rational arithmetic.
 * With q (intent.probability):
 *   buy  f* = (q − p) / (1 − p);  sell f* = (p − q) / p.
 *   - `no_edge` when f* ≤ 0; limit 0, actual f*. A buy at p ≥ 1 or a sell at
 *     p ≤ 0 can never gain (f* is undefined there): no_edge with actual null.
 *   - `kelly_cap_exceeded` when s > kelly_fraction × f* × capital_usdc;
 *     limit the cap floored to 6 decimals (the largest USDC size that
 *     passes), actual s. Exactly at the cap passes.
 * Without q: `kelly_cap_exceeded` when s > kelly_fallback_pct × capital_usdc.
 * A probability of null is treated as absent. q outside (0, 1) is not
 * rejected here (the intent schema does that); the formula is applied as is.
 */
import * as R from "../../domain/ratio.ts";
import type { RiskFailure, RiskInput } from "../types.ts";

/** f* for the intent, or null when it is undefined (buy at p ≥ 1, sell at p ≤ 0). */
export function kellyFraction(side: "buy" | "sell", p: R.Ratio, q: R.Ratio): R.Ratio | null {
  if (side === "sell") {
    if (R.sign(p) <= 0) return null;
    return R.div(R.sub(p, q), p);
  }
  const oneMinusP = R.sub(R.ONE, p);
  if (R.sign(oneMinusP) <= 0) return null;
  return R.div(R.sub(q, p), oneMinusP);
}

/** kelly_fallback_pct × capital_usdc, remembered for the last limits. */
const fallbackCapOf = R.memo2(R.mul);

export function checkKellyCap(input: RiskInput): RiskFailure[] {
  const { intent, limits } = input;
  const s = R.fromDecimal(intent.size_usdc);
  const capital = R.fromDecimal(limits.capital_usdc);
  const fail = (code: string, message: string, limit: number | null, actual: number | null): RiskFailure[] => [
    { check: "kelly_cap", code, message, limit, actual },
  ];

  if (intent.probability === undefined || intent.probability === null) {
    const cap = fallbackCapOf(R.fromDecimal(limits.kelly_fallback_pct), capital);
    if (R.lte(s, cap)) return [];
    return fail(
      "kelly_cap_exceeded",
      `without a probability the size is capped at kelly_fallback_pct ${limits.kelly_fallback_pct} × capital_usdc ${limits.capital_usdc}; ${intent.size_usdc} USDC exceeds it`,
      R.toNumber(R.floorTo(cap, 6)),
      R.toNumber(s),
    );
  }

  const p = R.fromDecimal(intent.price);
  const q = R.fromDecimal(intent.probability);
  const f = kellyFraction(intent.side === "sell" ? "sell" : "buy", p, q);
  if (!f) {
    return fail("no_edge", `a ${intent.side} at price ${intent.price} has no edge`, 0, null);
  }
  if (R.sign(f) <= 0) {
    return fail(
      "no_edge",
      `no edge: a ${intent.side} at price ${intent.price} with probability ${intent.probability} gives Kelly fraction ${R.toDecimalString(f, 6)}`,
      0,
      R.toNumber(f),
    );
  }
  const cap = R.mul(R.mul(R.fromDecimal(limits.kelly_fraction), f), capital);
  if (R.lte(s, cap)) return [];
  return fail(
    "kelly_cap_exceeded",
    `size ${intent.size_usdc} USDC exceeds kelly_fraction ${limits.kelly_fraction} × f* ${R.toDecimalString(f, 6)} × capital_usdc ${limits.capital_usdc} = ${R.toDecimalString(cap, 6, "floor")}`,
    R.toNumber(R.floorTo(cap, 6)),
    R.toNumber(s),
  );
}
