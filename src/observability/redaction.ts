/**
 * What may reach a log line (docs/api.md#logs-and-metrics: credentials, API keys, secrets,
 * passphrases and signatures never appear in a log line, nor a stack trace). pino writes the lines;
 * `redactFields` is its `formatters.log` hook and turns every field bag into plain JSON first.
 *
 * Rules, at every depth (objects, arrays, Maps, Headers, URLSearchParams, URLs, error messages):
 *  1. Secret-named keys, compared lower-cased without `-`/`_` (and with one plural `s` dropped,
 *     except from `tokens`, `keys`, `seeds`): the value, whatever its type, becomes "[redacted]" when
 *     the name is one of SECRET_NAMES, starts with `seal`, or ends with one of SECRET_SUFFIXES
 *     (admin_token, order_signature, wallet_private_key, POLY_PASSPHRASE, PAYMENT-SIGNATURE...).
 *     Kept on purpose: token_id, signature_type, key_hint, idempotency_key, order_hash, builder_code.
 *  2. Strings anywhere lose our API keys (`bk_` + 20 or more url-safe characters), hex signatures
 *     (`0x` + 130 or more hex digits) and `Bearer <token>`.
 *  3. 32-byte hex values are redacted under key-ish names only (signer_key, pk): order hashes,
 *     condition ids and builder codes have the same shape and must stay readable.
 * Errors become `{name, message}`; bigints decimal strings; buffers "[binary N bytes]"; cycles
 * "[circular]"; nesting past 8 levels "[depth]"; a throwing getter "[unreadable]".
 *
 * Why not pino's `redact` paths: they are exact, case-sensitive paths, and wildcards cost a walk
 * per path: the rules above written as paths (1,113 of them) took 3 ms per line (docs/decisions.md).
 */

export const REDACTED = "[redacted]";

const SECRET_NAMES = new Set(
  "key apikey apisecret xapikey secret secretkey privatekey passphrase password signature token authorization cookie setcookie credential xpayment paymentsignature polysignature polyapikey polypassphrase mnemonic seed venueauth".split(" "),
);
const SECRET_SUFFIXES = "secret secretkey privatekey apikey passphrase password signature token cookie credential authorization".split(" ");
const KEYISH_PARTS = ["key", "priv", "secret", "seed", "pk"];
const SCRUB = /bk_[A-Za-z0-9_-]{20,}|0x[0-9a-fA-F]{130,}|\b[Bb]earer\s+[^\s"',;]+/g;
const HEX32 = /^(0x)?[0-9a-fA-F]{64}$/;
const RESERVED = new Set(["time", "level", "msg"]);
const MAX_DEPTH = 8;
const MAX_ITEMS = 1000;

/** 2: secret (redact the value); 1: key-ish (redact 32-byte hex); 0: ordinary. */
type KeyClass = 0 | 1 | 2;
const classes = new Map<string, KeyClass>();

function classify(key: string): KeyClass {
  let cls = classes.get(key);
  if (cls !== undefined) return cls;
  const n = key.toLowerCase().replace(/[-_]/g, "");
  const forms = [n];
  if (n.length > 1 && n.endsWith("s") && !/(token|^key|^seed)s$/.test(n)) forms.push(n.slice(0, -1));
  const secret = forms.some((f) => SECRET_NAMES.has(f) || f.startsWith("seal") || SECRET_SUFFIXES.some((s) => f.endsWith(s)));
  cls = secret ? 2 : KEYISH_PARTS.some((p) => n.includes(p)) ? 1 : 0;
  if (classes.size < 10_000) classes.set(key, cls);
  return cls;
}

/** Scrubs API keys, 65-byte (or longer) hex signatures and bearer tokens out of free text. */
export function scrubString(s: string): string {
  if (s.length < 9) return s;
  return s.replace(SCRUB, (m) => (/^bearer/i.test(m) ? `Bearer ${REDACTED}` : REDACTED));
}

function safe(f: () => unknown): unknown {
  try {
    return f();
  } catch {
    return "[unreadable]";
  }
}

function entriesOf(obj: object): [string, unknown][] | null {
  if (obj instanceof Map || obj instanceof Headers || obj instanceof URLSearchParams) {
    return [...(obj as Map<unknown, unknown>).entries()].map(([k, v]) => [String(k), v]);
  }
  return null;
}

function plain(value: unknown, cls: KeyClass, depth: number, seen: Set<object>): unknown {
  if (cls === 2) return value === undefined ? undefined : REDACTED;
  switch (typeof value) {
    case "string":
      return cls === 1 && HEX32.test(value) ? REDACTED : scrubString(value);
    case "number":
      return Number.isFinite(value) ? value : String(value);
    case "bigint":
    case "symbol":
      return value.toString();
    case "function":
      return "[function]";
    case "boolean":
    case "undefined":
      return value;
  }
  if (value === null) return null;
  const obj = value as object;
  if (depth >= MAX_DEPTH) return "[depth]";
  if (seen.has(obj)) return "[circular]";
  if (obj instanceof Error) return { name: safe(() => scrubString(String(obj.name))), message: safe(() => scrubString(String(obj.message))) };
  if (obj instanceof Date) return Number.isNaN(obj.getTime()) ? "Invalid Date" : obj.toISOString();
  if (ArrayBuffer.isView(obj) || obj instanceof ArrayBuffer) return `[binary ${(obj as ArrayBuffer).byteLength} bytes]`;
  if (obj instanceof URL) return plainUrl(obj);
  seen.add(obj);
  try {
    if (Array.isArray(obj) || obj instanceof Set) {
      const items = [...obj];
      const out = items.slice(0, MAX_ITEMS).map((v) => safe(() => plain(v, cls, depth + 1, seen)));
      if (items.length > MAX_ITEMS) out.push(`[${items.length - MAX_ITEMS} more]`);
      return out;
    }
    const toJSON = (obj as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") {
      const j = safe(() => toJSON.call(obj));
      if (j !== obj) return plain(j, cls, depth + 1, seen);
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of entriesOf(obj) ?? Object.keys(obj).map((k) => [k, safe(() => (obj as Record<string, unknown>)[k])] as [string, unknown])) {
      const p = safe(() => plain(v, classify(k), depth + 1, seen));
      if (p !== undefined) out[k] = p;
    }
    return out;
  } finally {
    seen.delete(obj);
  }
}

function plainUrl(u: URL): string {
  const copy = new URL(u.href);
  if (copy.password) copy.password = REDACTED;
  for (const k of [...copy.searchParams.keys()]) if (classify(k) === 2) copy.searchParams.set(k, REDACTED);
  return scrubString(copy.href);
}

/** A field bag as plain, redacted JSON; `time`, `level` and `msg` are kept aside as `_time`... */
export function redactFields(fields: unknown): Record<string, unknown> {
  if (fields === null || typeof fields !== "object") return {};
  if (fields instanceof Error) return { err: plain(fields, 0, 1, new Set()) };
  const out: Record<string, unknown> = {};
  const seen = new Set<object>([fields]);
  let keys: string[];
  try {
    keys = Object.keys(fields);
  } catch {
    return out;
  }
  for (const k of keys) {
    const v = safe(() => plain((fields as Record<string, unknown>)[k], classify(k), 1, seen));
    if (v !== undefined) out[RESERVED.has(k) ? `_${k}` : k] = v;
  }
  return out;
}
