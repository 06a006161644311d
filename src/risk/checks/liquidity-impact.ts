/**
 * Check 8, `liquidity_impact` (docs/api.md#risk-checks). The order (floor₂(s/p) shares at
 * limit p) is walked against the opposite side of the book: a buy takes asks
 * from the lowest up to p, a sell takes bids from the highest down to p, for
 * at most the order's shares. What fills is the marketable part; the rest
 * would rest on the book and does not count. An empty opposite side, or no
 * level crossing p, means nothing is marketable and neither slippage nor depth
 * can fail. Codes (several may be reported together):
 * - `slippage_exceeded`: the marketable part's average price is worse than
 *   the best opposite price by more than max_slippage (buy: avg − best ask;
 *   sell: best bid − avg); limit max_slippage, actual that difference.
 * - `depth_share_exceeded`: the marketable notional is more than
 *   max_depth_share × the opposite side's notional (Σ size × price) at prices
 *   within [ref − 0.05, ref + 0.05], inclusive. ref is the mid; when a side is
 *   empty, the last trade price; without one, the best opposite price. limit
 *   that allowed notional in USDC (floored to 6 decimals), actual the
 *   marketable notional.
 * - `book_stale`: now − book.timestamp_ms > book_max_age_s × 1000 (exactly
 *   book_max_age_s old passes); limit book_max_age_s, actual the age in seconds.
 * - `book_unavailable` (not in the contract's table): the market exists but
 *   the venue gave no book, so the impact cannot be judged. Fails rather than
 *   passes.
 * Book levels with a size ≤ 0 are ignored. When the market is not found the
 * check passes vacuously (market_filters reports market_not_found). When the
 * share count cannot be computed (price ≤ 0 or not a number; order_size
 * reports it) nothing is walked; staleness is still checked.
 */
import * as R from "../../domain/ratio.ts";
import type { RiskFailure, RiskInput } from "../types.ts";
import { orderShares } from "./order-size.ts";
import { parseLevels, referencePrice } from "./price-sanity.ts";

/** Half-width of the window around the mid in which depth is measured. */
export const DEPTH_WINDOW = R.fromDecimal("0.05");

export interface MarketableFill {
  /** Shares that would fill at once. */
  shares: R.Ratio;
  /** Σ filled shares × level price, in USDC. */
  notional: R.Ratio;
  /** The best opposite price, or null when the opposite side is empty. */
  best: R.Ratio | null;
}

/** Walks the opposite side of the book for an order of `shares` at limit `price`. */
export function walkBook(
  side: "buy" | "sell",
  shares: R.Ratio,
  price: R.Ratio,
  opposite: readonly { readonly price: R.Ratio; readonly size: R.Ratio }[],
): MarketableFill {
  let remaining = shares;
  let filled = R.ZERO;
  let notional = R.ZERO;
  for (const level of opposite) {
    if (R.sign(remaining) <= 0) break;
    const crosses = side === "buy" ? R.lte(level.price, price) : R.gte(level.price, price);
    if (!crosses) break;
    const take = R.min(remaining, level.size);
    filled = R.add(filled, take);
    notional = R.add(notional, R.mul(take, level.price));
    remaining = R.sub(remaining, take);
  }
  return { shares: filled, notional, best: opposite[0]?.price ?? null };
}

export function checkLiquidityImpact(input: RiskInput): RiskFailure[] {
  const { intent, limits, market, book, now_ms } = input;
  if (!market) return [];
  const failures: RiskFailure[] = [];
  const fail = (code: string, message: string, limit: number | null, actual: number | null) =>
    failures.push({ check: "liquidity_impact", code, message, limit, actual });

  if (!book) {
    fail("book_unavailable", `the venue has no order book for token ${intent.market_id}`, null, null);
    return failures;
  }

  const side = intent.side === "sell" ? "sell" : "buy";
  const shares = orderShares(intent.size_usdc, intent.price);
  const p = R.tryFromDecimal(intent.price);
  if (shares && p) {
    const opposite = parseLevels(side === "buy" ? book.asks : book.bids, side === "buy" ? "asks" : "bids");
    const fill = walkBook(side, shares, p, opposite);
    if (fill.best && R.sign(fill.shares) > 0) {
      const avg = R.div(fill.notional, fill.shares);
      const slippage = side === "buy" ? R.sub(avg, fill.best) : R.sub(fill.best, avg);
      if (R.gt(slippage, R.fromDecimal(limits.max_slippage))) {
        fail(
          "slippage_exceeded",
          `the marketable part's average price ${R.toDecimalString(avg, 6)} is ${R.toDecimalString(slippage, 6)} worse than the best price ${R.toDecimalString(fill.best)}, more than max_slippage ${limits.max_slippage}`,
          limits.max_slippage,
          R.toNumber(slippage),
        );
      }

      const ref = referencePrice(book)?.price ?? fill.best;
      const lo = R.sub(ref, DEPTH_WINDOW);
      const hi = R.add(ref, DEPTH_WINDOW);
      let depth = R.ZERO;
      for (const level of opposite) {
        if (R.gte(level.price, lo) && R.lte(level.price, hi)) depth = R.add(depth, R.mul(level.size, level.price));
      }
      const allowed = R.mul(R.fromDecimal(limits.max_depth_share), depth);
      if (R.gt(fill.notional, allowed)) {
        fail(
          "depth_share_exceeded",
          `the marketable notional ${R.toDecimalString(fill.notional, 6)} USDC is more than max_depth_share ${limits.max_depth_share} of the ${R.toDecimalString(depth, 6)} USDC on the opposite side within 0.05 of ${R.toDecimalString(ref)}`,
          R.toNumber(R.floorTo(allowed, 6)),
          R.toNumber(fill.notional),
        );
      }
    }
  }

  const ageMs = now_ms - book.timestamp_ms;
  if (!Number.isFinite(ageMs)) {
    fail("book_stale", "the book snapshot has no valid timestamp", limits.book_max_age_s, null);
  } else if (ageMs > limits.book_max_age_s * 1000) {
    fail(
      "book_stale",
      `the book snapshot is ${ageMs / 1000} s old, older than book_max_age_s ${limits.book_max_age_s}`,
      limits.book_max_age_s,
      ageMs / 1000,
    );
  }
  return failures;
}
