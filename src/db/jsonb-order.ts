/**
 * A JSON value with its object keys in the order PostgreSQL's jsonb stores them (and prints them): shorter
 * keys first, keys of one length by their bytes. Event data rendered in JavaScript (event-log.ts) goes
 * through it, so a stream serves it in the same key order as the data read back from the jsonb column.
 */
export function jsonbOrdered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonbOrdered);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort(jsonbKeyOrder)) {
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

function jsonbKeyOrder(a: string, b: string): number {
  // ASCII keys (all of ours): the byte length is the string length, and byte order is string order.
  if (isAscii(a) && isAscii(b)) return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  if (x.length !== y.length) return x.length - y.length;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}
