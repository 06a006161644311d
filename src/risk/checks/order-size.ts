/**
 * Check 3, `order_size` (docs/api.md#risk-checks).
 * - `order_too_small` (USDC): s < min_order_usdc; limit min_order_usdc, actual s.
 * - `order_too_small` (shares): floor₂(s/p) < the market's min_order_size;
 *   limit min_order_size, actual the share count. Reported as a second
 *   failure with the same code when both apply. When the price is 0, negative
 *   or not a number the share count cannot be computed: it fails here with
 *   actual null (no division by zero). Skipped when the market is not found
 *   (market_filters reports market_not_found).
 * - `order_too_large`: s > max_order_usdc; limit max_order_usdc, actual s.
 * - `insufficient_position`: a sell of more shares (floor₂(s/p)) than the agent holds less those already
 *   offered in its open sells (state.position, when the caller counts it); limit the shares available,
 *   actual the shares of the sell.
 * A size that is not a finite number fails order_too_small with actual null.
 * Exactly at a limit passes.
 */
import * as R from "../../domain/ratio.ts";
import type { RiskFailure, RiskInput } from "../types.ts";

/**
 * The order's share count, floor₂(s / p) (docs/api.md#the-unsigned-order), or null when it cannot
 * be computed (size or price not a number, price ≤ 0, size < 0).
 */
export function orderShares(size_usdc: number, price: number): R.Ratio | null {
  // order_size and liquidity_impact both ask, for the same intent: remember the last answer.
  if (size_usdc === lastShares.size && price === lastShares.price) return lastShares.shares;
  const s = R.tryFromDecimal(size_usdc);
  const p = R.tryFromDecimal(price);
  const shares = !s || !p || R.sign(p) <= 0 || R.sign(s) < 0 ? null : R.divFloorTo(s, p, 2);
  lastShares = { size: size_usdc, price, shares };
  return shares;
}

/** The last orderShares answer (ratios are immutable, so handing it out again is safe). */
let lastShares: { size: unknown; price: unknown; shares: R.Ratio | null } = { size: undefined, price: undefined, shares: null };

export function checkOrderSize(input: RiskInput): RiskFailure[] {
  const { intent, limits, market } = input;
  const failures: RiskFailure[] = [];
  const fail = (code: string, message: string, limit: number | null, actual: number | null) =>
    failures.push({ check: "order_size", code, message, limit, actual });

  const s = R.tryFromDecimal(intent.size_usdc);
  const minUsdc = R.fromDecimal(limits.min_order_usdc);
  const maxUsdc = R.fromDecimal(limits.max_order_usdc);

  if (!s) {
    fail("order_too_small", "size_usdc is not a number", limits.min_order_usdc, null);
  } else {
    if (R.lt(s, minUsdc)) {
      fail("order_too_small", `size ${intent.size_usdc} USDC is below min_order_usdc ${limits.min_order_usdc}`, limits.min_order_usdc, R.toNumber(s));
    }
    if (R.gt(s, maxUsdc)) {
      fail("order_too_large", `size ${intent.size_usdc} USDC is above max_order_usdc ${limits.max_order_usdc}`, limits.max_order_usdc, R.toNumber(s));
    }
  }

  if (market) {
    const minShares = R.fromDecimal(market.min_order_size);
    const shares = s ? orderShares(intent.size_usdc, intent.price) : null;
    if (s && !shares) {
      fail("order_too_small", `the share count cannot be computed from size ${intent.size_usdc} and price ${intent.price}`, R.toNumber(minShares), null);
    } else if (shares && R.lt(shares, minShares)) {
      fail(
        "order_too_small",
        `${R.toDecimalString(shares, 2)} shares is below the market's min_order_size ${market.min_order_size}`,
        R.toNumber(minShares),
        R.toNumber(shares),
      );
    }
  }
  const pos = input.state.position;
  if (intent.side === "sell" && pos) {
    const shares = s ? orderShares(intent.size_usdc, intent.price) : null;
    const free = pos.held_shares_units - pos.offered_shares_units;
    const available = R.fromBaseUnits(free < 0n ? 0n : free);
    if (shares && R.gt(shares, available)) {
      fail(
        "insufficient_position",
        `a sell of ${R.toDecimalString(shares, 2)} shares is more than the ${R.toDecimalString(available, 6)} held and not already offered in open sells`,
        R.toNumber(available),
        R.toNumber(shares),
      );
    }
  }
  return failures;
}
