/**
 * Check 2, `market_filters` (docs/api.md#risk-checks). Codes, each reported at most once:
 * - `market_not_found`: the venue has no market for the token. The other
 *   filters need the market and are not evaluated, except `market_denied` on
 *   the token id itself. Every later check that needs market data passes
 *   vacuously in this case, so market_not_found is the single reported cause
 *   (the intent is rejected by it anyway).
 * - `market_closed`: closed, or not active.
 * - `market_not_accepting_orders`: accepting_orders is false.
 * - `market_ends_soon`: end_date − now < min_time_to_end_s (exactly
 *   min_time_to_end_s left passes; an end date already passed always fails,
 *   even with a limit of 0; an unreadable end date fails with actual null).
 *   limit/actual in seconds.
 * - `market_denied`: market_deny holds the token id or the market's condition
 *   id. Denying a condition id denies both of its outcome tokens; denying a
 *   token id denies that token only. Compared case-insensitively (hex ids).
 * - `category_denied`: the market's category is in category_deny, or
 *   category_allow is not empty and does not hold it. Compared trimmed and
 *   case-insensitively. A market without a category fails a non-empty allow list.
 */
import type { RiskFailure, RiskInput } from "../types.ts";

const norm = (s: string) => s.trim().toLowerCase();

const NONE: ReadonlySet<string> = new Set();
/** A list's normalized entries (the lists are usually empty: no set to build then). */
const normSet = (list: readonly string[]): ReadonlySet<string> => (list.length === 0 ? NONE : new Set(list.map(norm)));

/** Date.parse of the last end date read: every intent on a market reads the same text. */
let lastEnd = { text: "", ms: Number.NaN };
function endMsOf(text: string): number {
  if (text !== lastEnd.text || typeof text !== "string") lastEnd = { text, ms: Date.parse(text) };
  return lastEnd.ms;
}

export function checkMarketFilters(input: RiskInput): RiskFailure[] {
  const { intent, limits, market, now_ms } = input;
  const failures: RiskFailure[] = [];
  const fail = (code: string, message: string, limit: number | null = null, actual: number | null = null) =>
    failures.push({ check: "market_filters", code, message, limit, actual });

  const denied = normSet(limits.market_deny);

  if (!market) {
    fail("market_not_found", `no market holds token ${intent.market_id}`);
    if (denied.has(norm(intent.market_id))) fail("market_denied", `market ${intent.market_id} is in market_deny`);
    return failures;
  }

  if (market.closed || !market.active) {
    fail("market_closed", market.closed ? "the market is closed" : "the market is not active");
  }
  if (!market.accepting_orders) {
    fail("market_not_accepting_orders", "the market does not accept orders");
  }

  const endMs = endMsOf(market.end_date);
  if (!Number.isFinite(endMs)) {
    fail("market_ends_soon", `the market's end date is unreadable: ${JSON.stringify(market.end_date)}`, limits.min_time_to_end_s, null);
  } else {
    const leftMs = endMs - now_ms;
    if (leftMs < limits.min_time_to_end_s * 1000) {
      fail(
        "market_ends_soon",
        leftMs <= 0
          ? "the market's end date has passed"
          : `the market ends in ${leftMs / 1000} s, less than min_time_to_end_s ${limits.min_time_to_end_s} s`,
        limits.min_time_to_end_s,
        leftMs / 1000,
      );
    }
  }

  if (denied.size > 0 && (denied.has(norm(intent.market_id)) || denied.has(norm(market.condition_id)))) {
    const which = denied.has(norm(intent.market_id)) ? intent.market_id : market.condition_id;
    fail("market_denied", `market ${which} is in market_deny`);
  }

  const deny = normSet(limits.category_deny);
  const allow = normSet(limits.category_allow);
  if (deny.size === 0 && allow.size === 0) return failures;
  const category = norm(market.category ?? "");
  if (deny.has(category)) {
    fail("category_denied", `category ${JSON.stringify(market.category)} is in category_deny`);
  } else if (allow.size > 0 && !allow.has(category)) {
    fail("category_denied", `category ${JSON.stringify(market.category)} is not in category_allow`);
  }
  return failures;
}
