/**
 * Exact rational numbers: a bigint numerator over a positive bigint
 * denominator, always reduced. The risk engine computes with these so that
 * divisions (s / p, the Kelly fraction) stay exact; floats appear only at the
 * edge, when a result is reported as a JSON number (`toNumber`).
 */
import { DecimalError, fromUnits, numberToPlainString } from "./units.ts";

export interface Ratio {
  readonly num: bigint;
  readonly den: bigint; // > 0
}

/** Thrown on a zero denominator or a value that is not a decimal. */
export class RatioError extends Error {
  override name = "RatioError";
}

const DECIMAL_RE = /^([+-])?(\d+)?(?:\.(\d+))?$/;

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** 10^n as a bigint, for the small n that decimals use. */
const POW10: bigint[] = Array.from({ length: 40 }, (_, i) => 10n ** BigInt(i));
function pow10(n: number): bigint {
  return n >= 0 && n < POW10.length ? POW10[n] : 10n ** BigInt(n);
}

function gcd(a: bigint, b: bigint): bigint {
  if (a < 0n) a = -a;
  if (b < 0n) b = -b;
  if (a <= SAFE && b <= SAFE) {
    // Both fit a double exactly, and so does every remainder: Euclid on Numbers allocates nothing.
    let x = Number(a);
    let y = Number(b);
    while (y !== 0) {
      const t = x % y;
      x = y;
      y = t;
    }
    return BigInt(x);
  }
  while (b !== 0n) {
    const t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/** num / den, reduced, with a positive denominator. */
export function ratio(num: bigint, den: bigint = 1n): Ratio {
  if (den === 0n) throw new RatioError("zero denominator");
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  if (den === 1n) return { num, den };
  if (num === 0n) return { num, den: 1n };
  const g = gcd(num, den);
  return g > 1n ? { num: num / g, den: den / g } : { num, den };
}

export const ZERO: Ratio = ratio(0n);
export const ONE: Ratio = ratio(1n);

/**
 * A decimal as an exact ratio: a plain decimal string ("0.52", "-3", ".5"),
 * a JSON number (read through its shortest round-trip text, so 0.1 is exactly
 * 1/10), or a bigint. Throws RatioError for anything else (NaN, Infinity, "1e5").
 */
export function fromDecimal(value: string | number | bigint): Ratio {
  if (typeof value === "bigint") return ratio(value);
  // Limits, prices and book levels repeat from one intent to the next: parse each value once.
  const cached = decimals.get(value);
  if (cached) return cached;
  const parsed = parseDecimal(value);
  if (decimals.size >= 50_000) decimals.clear();
  decimals.set(value, parsed);
  return parsed;
}

/** Parsed decimals by their input (number or string); ratios are immutable, so sharing them is safe. */
const decimals = new Map<string | number, Ratio>();

function parseDecimal(value: string | number): Ratio {
  let text: string;
  if (typeof value === "number") {
    try {
      text = numberToPlainString(value);
    } catch (err) {
      if (err instanceof DecimalError) throw new RatioError(err.message);
      throw err;
    }
  } else if (typeof value === "string") {
    text = value.trim();
  } else {
    throw new RatioError(`not a decimal: ${String(value)}`);
  }
  const m = DECIMAL_RE.exec(text);
  if (!m || (m[2] === undefined && m[3] === undefined)) throw new RatioError(`not a decimal: ${JSON.stringify(text)}`);
  const [, sign, int = "0", frac = ""] = m;
  const num = BigInt(int + frac) * (sign === "-" ? -1n : 1n);
  return ratio(num, pow10(frac.length));
}

/** Like fromDecimal, but null instead of throwing (for values of unknown quality). */
export function tryFromDecimal(value: unknown): Ratio | null {
  if (typeof value !== "string" && typeof value !== "number" && typeof value !== "bigint") return null;
  try {
    return fromDecimal(value);
  } catch {
    return null;
  }
}

/** Base units with `decimals` places (USDC: 6) as a ratio: 1_500_000n → 3/2. */
export function fromBaseUnits(units: bigint, decimals = 6): Ratio {
  return ratio(units, pow10(decimals));
}

/** fromBaseUnits(units, decimals) + b, reduced once. */
export function addBaseUnits(units: bigint, b: Ratio, decimals = 6): Ratio {
  const scale = pow10(decimals);
  return ratio(units * b.den + b.num * scale, scale * b.den);
}

export function add(a: Ratio, b: Ratio): Ratio {
  if (a.den === b.den) return ratio(a.num + b.num, a.den);
  return ratio(a.num * b.den + b.num * a.den, a.den * b.den);
}

export function sub(a: Ratio, b: Ratio): Ratio {
  if (a.den === b.den) return ratio(a.num - b.num, a.den);
  return ratio(a.num * b.den - b.num * a.den, a.den * b.den);
}

export function mul(a: Ratio, b: Ratio): Ratio {
  return ratio(a.num * b.num, a.den * b.den);
}

/** a / b; throws RatioError when b is zero. */
export function div(a: Ratio, b: Ratio): Ratio {
  if (b.num === 0n) throw new RatioError("division by zero");
  return ratio(a.num * b.den, a.den * b.num);
}

export function neg(a: Ratio): Ratio {
  return { num: -a.num, den: a.den };
}

export function abs(a: Ratio): Ratio {
  return a.num < 0n ? neg(a) : a;
}

/** -1, 0 or 1 as a < b, a = b, a > b. */
export function compare(a: Ratio, b: Ratio): -1 | 0 | 1 {
  if (a.den === b.den) return a.num < b.num ? -1 : a.num > b.num ? 1 : 0;
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

export const eq = (a: Ratio, b: Ratio): boolean => compare(a, b) === 0;
export const lt = (a: Ratio, b: Ratio): boolean => compare(a, b) < 0;
export const lte = (a: Ratio, b: Ratio): boolean => compare(a, b) <= 0;
export const gt = (a: Ratio, b: Ratio): boolean => compare(a, b) > 0;
export const gte = (a: Ratio, b: Ratio): boolean => compare(a, b) >= 0;
export const min = (a: Ratio, b: Ratio): Ratio => (compare(a, b) <= 0 ? a : b);
export const max = (a: Ratio, b: Ratio): Ratio => (compare(a, b) >= 0 ? a : b);

export function sign(a: Ratio): -1 | 0 | 1 {
  return a.num < 0n ? -1 : a.num > 0n ? 1 : 0;
}

export function isZero(a: Ratio): boolean {
  return a.num === 0n;
}

export function isInteger(a: Ratio): boolean {
  return a.den === 1n;
}

/** Whether a / b is an integer (isInteger(div(a, b)) without building the quotient); throws RatioError when b is zero. */
export function isMultipleOf(a: Ratio, b: Ratio): boolean {
  if (b.num === 0n) throw new RatioError("division by zero");
  return (a.num * b.den) % (a.den * b.num) === 0n;
}

/**
 * `op` with its last answer remembered by the identity of its arguments. Ratios are immutable and
 * fromDecimal hands out the same ratio for the same value, so an operation on limits, ticks or book
 * prices that repeat from one intent to the next is computed once. One call site per memo.
 */
export function memo2<A, B, T>(op: (a: A, b: B) => T): (a: A, b: B) => T {
  let lastA: A | undefined;
  let lastB: B | undefined;
  let last: T | undefined;
  let has = false;
  return (a, b) => {
    if (has && a === lastA && b === lastB) return last as T;
    const value = op(a, b);
    lastA = a;
    lastB = b;
    last = value;
    has = true;
    return value;
  };
}

/** floor(num / den) for den > 0 (toward −∞); num / den need not be reduced. */
function floorDiv(num: bigint, den: bigint): bigint {
  const q = num / den; // truncates toward zero
  return num < 0n && q * den !== num ? q - 1n : q;
}

/** The largest integer ≤ a (toward −∞). */
export function floor(a: Ratio): bigint {
  return floorDiv(a.num, a.den);
}

/** a rounded down (toward −∞) to `decimals` places: floorTo(10/3, 2) = 3.33. */
export function floorTo(a: Ratio, decimals: number): Ratio {
  const scale = pow10(decimals);
  return ratio(floorDiv(a.num * scale, a.den), scale);
}

/** a / b rounded down (toward −∞) to `decimals` places, without reducing a / b first; throws RatioError when b is zero. */
export function divFloorTo(a: Ratio, b: Ratio, decimals: number): Ratio {
  if (b.num === 0n) throw new RatioError("division by zero");
  let num = a.num * b.den;
  let den = a.den * b.num;
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  const scale = pow10(decimals);
  return ratio(floorDiv(num * scale, den), scale);
}

/**
 * a as plain decimal text with at most `decimals` places (trailing zeros
 * dropped), rounded half away from zero, or down (toward −∞) with "floor".
 */
export function toDecimalString(a: Ratio, decimals = 12, round: "half" | "floor" = "half"): string {
  const scale = pow10(decimals);
  let units: bigint;
  if (round === "floor") {
    units = floorDiv(a.num * scale, a.den);
  } else {
    const n = (a.num < 0n ? -a.num : a.num) * scale;
    const q = n / a.den;
    const rounded = (n % a.den) * 2n >= a.den ? q + 1n : q;
    units = a.num < 0n ? -rounded : rounded;
  }
  return fromUnits(units, decimals);
}

/** a as a JSON number, for reporting only (rounded to `decimals` places first). */
export function toNumber(a: Ratio, decimals = 12): number {
  return Number(toDecimalString(a, decimals));
}
