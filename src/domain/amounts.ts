/**
 * Order amounts of docs/api.md#the-unsigned-order, in exact bigint arithmetic (never floats).
 *
 * All amounts are bigints of 6-decimal base units (USDC and shares alike, as the
 * CTF Exchange counts them). Prices are decimal strings with at most 4 decimals
 * (tick sizes 0.1, 0.01, 0.001, 0.0001), strictly between 0 and 1.
 *
 *   shares   = floor₂(size / price)      (two decimals)
 *   notional = shares × price            (exact at 6 decimals)
 *   buy:  makerAmount = notional, takerAmount = shares
 *   sell: makerAmount = shares,   takerAmount = notional
 */

import { DecimalError, toUnits } from "./units.ts";

export type OrderSide = "buy" | "sell";

/** Decimals a price may carry (the smallest tick is 0.0001). */
export const PRICE_DECIMALS = 4;
/** Price × PRICE_SCALE is an integer. */
export const PRICE_SCALE = 10_000n;
/** Decimals a share amount carries in an order. */
export const SHARE_DECIMALS = 2;
/** One share step (0.01 share) in 6-decimal base units. */
export const SHARE_STEP_UNITS = 10_000n;

/** Thrown for a price or size that cannot make an exact order. */
export class AmountError extends Error {
  override name = "AmountError";
}

/**
 * Parses a price into integer units of 0.0001 ("0.52" → 5200n). Throws
 * AmountError when it is not a plain decimal, carries a nonzero digit past the
 * 4th decimal, or is not strictly between 0 and 1.
 */
export function priceToUnits(price: string): bigint {
  // The same price is read several times per order, and repeats from one order to the next.
  if (price === lastPrice.text) return lastPrice.units;
  const units = parsePrice(price);
  lastPrice = { text: price, units };
  return units;
}

/** The last valid price read (a price that throws is never remembered). */
let lastPrice: { text: string | undefined; units: bigint } = { text: undefined, units: 0n };

function parsePrice(price: string): bigint {
  if (typeof price !== "string") throw new AmountError("price must be a decimal string");
  let units: bigint;
  try {
    units = toUnits(price, PRICE_DECIMALS, "exact");
  } catch (err) {
    if (err instanceof DecimalError) {
      throw new AmountError(`price must be a decimal with at most ${PRICE_DECIMALS} decimals`);
    }
    throw err;
  }
  if (units <= 0n || units >= PRICE_SCALE) throw new AmountError("price must be strictly between 0 and 1");
  return units;
}

function assertSize(sizeUnits: bigint): void {
  if (typeof sizeUnits !== "bigint") throw new AmountError("size must be a bigint of base units");
  if (sizeUnits < 0n) throw new AmountError("size must not be negative");
}

/**
 * Shares that `sizeUnits` of USDC buy at `price`, floored to 2 decimals, in
 * 6-decimal base units. (s/p × 100 floored = sizeUnits / priceUnits, exactly.)
 */
export function sharesFor(sizeUnits: bigint, price: string): bigint {
  assertSize(sizeUnits);
  const p = priceToUnits(price);
  return (sizeUnits / p) * SHARE_STEP_UNITS;
}

/**
 * Notional (USDC base units) of `sharesUnits` at `price`: shares × price.
 * Exact for shares with at most 2 decimals; for finer share amounts (e.g. fills)
 * pass round "floor" or "ceil", otherwise an AmountError is thrown.
 */
export function notionalFor(sharesUnits: bigint, price: string, round: "exact" | "floor" | "ceil" = "exact"): bigint {
  if (typeof sharesUnits !== "bigint") throw new AmountError("shares must be a bigint of base units");
  if (sharesUnits < 0n) throw new AmountError("shares must not be negative");
  const p = priceToUnits(price);
  const product = sharesUnits * p;
  const q = product / PRICE_SCALE;
  const rem = product % PRICE_SCALE;
  if (rem === 0n) return q;
  if (round === "floor") return q;
  if (round === "ceil") return q + 1n;
  throw new AmountError("shares × price is not exact at 6 decimals");
}

/** Whether `price` is a valid price on a market with tick size `tickSize` (both decimal strings). */
export function isOnTick(price: string, tickSize: string): boolean {
  let p: bigint;
  let t: bigint;
  try {
    p = priceToUnits(price);
    t = priceToUnits(tickSize);
  } catch {
    return false;
  }
  return p % t === 0n;
}

export interface OrderAmounts {
  /** Shares, floored to 2 decimals, in 6-decimal base units. */
  sharesUnits: bigint;
  /** shares × price, USDC base units. */
  notionalUnits: bigint;
  /** What the maker gives: USDC for a buy, shares for a sell. */
  makerAmount: bigint;
  /** What the maker gets: shares for a buy, USDC for a sell. */
  takerAmount: bigint;
}

/**
 * The amounts of an order that spends (buy) or is sized at (sell) `sizeUnits`
 * USDC at `price`. Throws AmountError for a bad price, a negative size or a
 * size too small to make 0.01 share.
 * Example: buy, 5.2 USDC at "0.52" → shares 10, makerAmount 5200000n, takerAmount 10000000n.
 */
export function orderAmounts(args: { side: OrderSide; sizeUnits: bigint; price: string }): OrderAmounts {
  const { side, sizeUnits, price } = args;
  if (side !== "buy" && side !== "sell") throw new AmountError('side must be "buy" or "sell"');
  assertSize(sizeUnits);
  const p = priceToUnits(price);
  const hundredths = sizeUnits / p; // floor(s / p × 100)
  if (hundredths === 0n) throw new AmountError("size is too small for one 0.01 share at this price");
  const sharesUnits = hundredths * SHARE_STEP_UNITS;
  const notionalUnits = hundredths * p; // (h / 100) × (p / 10⁴) × 10⁶, exact
  return side === "buy"
    ? { sharesUnits, notionalUnits, makerAmount: notionalUnits, takerAmount: sharesUnits }
    : { sharesUnits, notionalUnits, makerAmount: sharesUnits, takerAmount: notionalUnits };
}
