/**
 * Exact decimal arithmetic for money and prices. Every amount is a bigint of
 * base units with a fixed number of decimals; floats are never used for money.
 */

export const USDC_DECIMALS = 6;
export const USDC_SCALE = 10n ** 6n;

const DECIMAL_RE = /^(-)?(\d+)(?:\.(\d+))?$/;

/** Thrown when a value cannot be represented exactly at the requested scale. */
export class DecimalError extends Error {
  override name = "DecimalError";
}

/**
 * Parses a decimal (string, or a JSON number via its shortest round-trip text)
 * into base units with `decimals` places. Extra digits must be zero unless
 * `round` is "floor", which truncates toward zero.
 */
export function toUnits(value: string | number, decimals = USDC_DECIMALS, round: "exact" | "floor" = "exact"): bigint {
  const text = typeof value === "number" ? numberToPlainString(value) : value.trim();
  const m = DECIMAL_RE.exec(text);
  if (!m) throw new DecimalError(`not a decimal: ${JSON.stringify(text)}`);
  const [, neg, int, frac = ""] = m;
  let kept = frac.slice(0, decimals);
  const dropped = frac.slice(decimals);
  if (dropped && /[1-9]/.test(dropped) && round === "exact") {
    throw new DecimalError(`more than ${decimals} decimal places: ${text}`);
  }
  kept = kept.padEnd(decimals, "0");
  // The integer digits and `decimals` fraction digits, read as one integer.
  const units = BigInt(int + kept);
  return neg ? -units : units;
}

/** Formats base units as a plain decimal string without trailing zeros. */
export function fromUnits(units: bigint, decimals = USDC_DECIMALS): string {
  const neg = units < 0n;
  const abs = neg ? -units : units;
  const scale = 10n ** BigInt(decimals);
  const int = abs / scale;
  let frac = (abs % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${int}${frac ? `.${frac}` : ""}`;
}

const SAFE_UNITS = BigInt(Number.MAX_SAFE_INTEGER);
/** 10^0 … 10^22, every one an exact double (written out, not computed). */
const EXACT_POWERS_OF_TEN: readonly number[] = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/** Base units as a JSON number (safe: amounts are far below 2^53 base units). */
export function unitsToNumber(units: bigint, decimals = USDC_DECIMALS): number {
  // Up to 2^53 the units and 10^decimals (to 10^22) are exact doubles, and one division rounds
  // correctly: the same double as reading the decimal text, without building it.
  const scale = EXACT_POWERS_OF_TEN[decimals];
  if (scale !== undefined && units <= SAFE_UNITS && units >= -SAFE_UNITS) return Number(units) / scale;
  return Number(fromUnits(units, decimals));
}

/** Number of decimal places a plain decimal string carries ("0.001" → 3). */
export function decimalPlaces(text: string): number {
  const i = text.indexOf(".");
  return i < 0 ? 0 : text.length - i - 1;
}

/** A JSON number as plain decimal text, without exponent notation. */
export function numberToPlainString(n: number): string {
  if (!Number.isFinite(n)) throw new DecimalError(`not a finite number: ${n}`);
  const s = String(n);
  if (!/e/i.test(s)) return s;
  // Expand exponent form exactly from the shortest round-trip digits.
  const [mant, expText] = s.toLowerCase().split("e");
  const exp = Number(expText);
  const neg = mant.startsWith("-");
  const digits = mant.replace("-", "");
  const [i, f = ""] = digits.split(".");
  const all = i + f;
  let point = i.length + exp;
  let out: string;
  if (point <= 0) out = `0.${"0".repeat(-point)}${all}`;
  else if (point >= all.length) out = all + "0".repeat(point - all.length);
  else out = `${all.slice(0, point)}.${all.slice(point)}`;
  out = out.replace(/^0+(?=\d)/, "");
  return (neg ? "-" : "") + out;
}
