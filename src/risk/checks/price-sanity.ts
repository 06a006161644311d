/**
 * Check 7, `price_sanity` (docs/api.md#risk-checks), with the tick from the market's
 * tick_size. Codes (several may be reported together):
 * - `price_out_of_bounds`: not tick ≤ p ≤ 1 − tick; limit the bound crossed,
 *   actual p (null when p is not a number).
 * - `price_off_tick`: p is not a whole multiple of the tick; limit tick, actual p.
 * - `price_far_from_mid`: |p − ref| > price_band; limit price_band, actual
 *   |p − ref|. Exactly price_band away passes.
 * - `no_reference_price`: no reference price. The reference is the mid
 *   (best bid + best ask) / 2 when both sides have a level; otherwise the
 *   book's last trade price; otherwise there is none. A missing book counts
 *   as an empty book.
 * Book levels with a size of 0 or less are ignored; best prices are the
 * highest bid and the lowest ask whatever the order of the levels.
 * When the market is not found, the check passes vacuously (no tick to check
 * against; market_filters reports market_not_found and rejects the intent).
 */
import * as R from "../../domain/ratio.ts";
import type { BookLevel, OrderBook } from "../../domain/market.ts";
import type { RiskFailure, RiskInput } from "../types.ts";

export interface ParsedLevel {
  price: R.Ratio;
  size: R.Ratio;
}

/**
 * The levels with a positive size, parsed exactly, best first: bids highest
 * first, asks lowest first. Throws on a level that is not a decimal.
 */
export function parseLevels(levels: readonly BookLevel[], side: "bids" | "asks"): readonly ParsedLevel[] {
  // Venues hand out the same snapshot arrays until a book changes, and several
  // checks read the same sides: parse each array once. Keyed by the array
  // itself, so a changed book (a new array) is always parsed afresh.
  const cache = side === "bids" ? parsedBids : parsedAsks;
  const hit = cache.get(levels);
  if (hit) return hit;
  const parsed = levels
    .map((l) => ({ price: R.fromDecimal(l.price), size: R.fromDecimal(l.size) }))
    .filter((l) => R.sign(l.size) > 0);
  parsed.sort((a, b) => (side === "bids" ? R.compare(b.price, a.price) : R.compare(a.price, b.price)));
  const frozen = Object.freeze(parsed.map((l) => Object.freeze(l)));
  cache.set(levels, frozen);
  return frozen;
}

const parsedBids = new WeakMap<readonly BookLevel[], readonly ParsedLevel[]>();
const parsedAsks = new WeakMap<readonly BookLevel[], readonly ParsedLevel[]>();

const TWO = R.ratio(2n);
/** (bid + ask) / 2, remembered for the last best prices (a book's levels are parsed once, so they repeat). */
const midOf = R.memo2((bid: R.Ratio, ask: R.Ratio) => R.div(R.add(bid, ask), TWO));
/** |p − ref|, remembered for the last price and reference (both repeat while a book stands). */
const distanceOf = R.memo2((p: R.Ratio, ref: R.Ratio) => R.abs(R.sub(p, ref)));
/** 1 − tick, remembered for the last tick. */
const oneMinus = R.memo2(R.sub);

/** The mid when both sides have a level, else the last trade price, else null. */
export function referencePrice(book: OrderBook | null): { price: R.Ratio; source: "mid" | "last_trade" } | null {
  if (!book) return null;
  const bid = parseLevels(book.bids, "bids")[0];
  const ask = parseLevels(book.asks, "asks")[0];
  if (bid && ask) return { price: midOf(bid.price, ask.price), source: "mid" };
  if (book.last_trade_price !== null && book.last_trade_price !== undefined && book.last_trade_price.trim() !== "") {
    return { price: R.fromDecimal(book.last_trade_price), source: "last_trade" };
  }
  return null;
}

export function checkPriceSanity(input: RiskInput): RiskFailure[] {
  const { intent, limits, market, book } = input;
  if (!market) return [];
  const failures: RiskFailure[] = [];
  const fail = (code: string, message: string, limit: number | null, actual: number | null) =>
    failures.push({ check: "price_sanity", code, message, limit, actual });

  const tick = R.fromDecimal(market.tick_size);
  const p = R.tryFromDecimal(intent.price);
  const high = oneMinus(R.ONE, tick);

  if (!p) {
    fail("price_out_of_bounds", "price is not a number", R.toNumber(tick), null);
  } else {
    if (R.lt(p, tick)) {
      fail("price_out_of_bounds", `price ${intent.price} is below the tick ${market.tick_size}`, R.toNumber(tick), R.toNumber(p));
    } else if (R.gt(p, high)) {
      fail("price_out_of_bounds", `price ${intent.price} is above 1 − tick = ${R.toDecimalString(high)}`, R.toNumber(high), R.toNumber(p));
    }
    if (R.sign(tick) > 0 && !R.isMultipleOf(p, tick)) {
      fail("price_off_tick", `price ${intent.price} is not a multiple of the tick ${market.tick_size}`, R.toNumber(tick), R.toNumber(p));
    }
  }

  const ref = referencePrice(book);
  if (!ref) {
    fail("no_reference_price", "the book has no mid (a side is empty) and no last trade price", null, null);
  } else if (p) {
    const distance = distanceOf(p, ref.price);
    const band = R.fromDecimal(limits.price_band);
    if (R.gt(distance, band)) {
      const what = ref.source === "mid" ? "mid" : "last trade price";
      fail(
        "price_far_from_mid",
        `price ${intent.price} is ${R.toDecimalString(distance)} from the ${what} ${R.toDecimalString(ref.price)}, more than price_band ${limits.price_band}`,
        limits.price_band,
        R.toNumber(distance),
      );
    }
  }
  return failures;
}
