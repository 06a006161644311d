/**
 * A JSON value with its object keys in the order PostgreSQL's jsonb stores them (and prints them): shorter
 * keys first, keys of one length by their bytes. Event data rendered in JavaScript (event-log.ts) goes
 * through it, so a stream serves it in the same key order as the data read back from the jsonb column.
 */
export function jsonbOrdered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonbOrdered);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  const keys = Object.keys(value);
  // ASCII keys (all of ours): a key's byte length is its length and byte order is string order, so
  // the keys are compared as strings; one scan per key decides it, not one per comparison.
  keys.sort(keys.every(isAscii) ? asciiKeyOrder : utf8KeyOrder);
  for (const key of keys) {
    const v = (value as Record<string, unknown>)[key];
    // jsonb has no undefined: JSON.stringify leaves such keys out, as storing them did.
    if (v !== undefined) out[key] = jsonbOrdered(v);
  }
  return out;
}

const utf8 = new TextEncoder();

/** Whether every UTF-16 unit of `s` is ASCII (its UTF-8 bytes are its units). */
function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

function asciiKeyOrder(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

function utf8KeyOrder(a: string, b: string): number {
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  if (x.length !== y.length) return x.length - y.length;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}
