/**
 * Structured JSON-lines logging with redaction (CONTRACT sections 2 and 15: "Logs are JSON lines with
 * a request id; credentials, keys and signatures are redacted"; no log line ever contains a
 * credential, an API key, or a stack trace).
 *
 * One line per call: `{"time": ISO-8601, "level", "msg", ...bindings, ...fields}`. The HTTP layer adds
 * the request id with `logger.child({ request_id })`. A field named like a reserved member (time,
 * level, msg) is kept under `_time`, `_level`, `_msg` instead of overwriting it.
 *
 * Redaction rules, applied at every depth (objects, arrays, Maps, Headers, error messages, msg):
 *  1. Secret-named keys. A key is normalized (lower-cased, `-` and `_` removed, one trailing `s`
 *     dropped, except from `tokens`, `keys`, `seeds`) and its value, whatever its type, becomes
 *     "[redacted]" when the normalized key
 *       - is exactly one of: key, apikey, apisecret, xapikey, secret, secretkey, privatekey, passphrase,
 *         password, signature, token, authorization, cookie, setcookie, credential, xpayment,
 *         paymentsignature, polysignature, polyapikey, polypassphrase, mnemonic, seed;
 *       - or starts with `seal` (seal_secret_key, sealed_credentials, ...);
 *       - or ends with one of: secret, secretkey, privatekey, apikey, passphrase, password, signature,
 *         token, cookie, credential, authorization (admin_token, order_signature, wallet_private_key).
 *     Not redacted, on purpose: `token_id`, `signature_type`, `key_hint`, `idempotency_key`,
 *     `order_hash`, `builder_code` (ids and hashes that operators need).
 *  2. String values anywhere are scrubbed of
 *       - our API keys: `bk_` followed by 20+ URL-safe characters;
 *       - hex signatures: `0x` followed by 130 or more hex digits (65-byte ECDSA signatures, and the
 *         longer contract-wallet ones);
 *       - bearer credentials: `Bearer <token>`.
 *     The matching part is replaced by "[redacted]"; the rest of the string stays.
 *  3. 32-byte hex values (`0x` + 64 hex, or 64 bare hex) are redacted only under key-ish names: keys
 *     whose normalized form contains `key`, `priv`, `secret`, `seed` or `pk` (signer_key, pk, wallet
 *     key). Order hashes, condition ids, token ids and builder codes are also 32 bytes of hex and
 *     must stay readable, so a 32-byte hex value is never redacted on its shape alone.
 *
 * Other safety: Errors become `{name, message}`, never a stack;
 * bigints become decimal strings; circular references become "[circular]"; binary buffers become
 * "[binary N bytes]" (they may hold key material); nesting deeper than 8 becomes "[depth]"; arrays
 * keep their first 1000 items; URLs lose their password and secret-named query values; a
 * throwing getter, toJSON or sink never propagates. Logging never throws.
 */

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Logger {
  readonly level: LogLevel;
  isEnabled(level: LogLevel): boolean;
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines all carry `fields` (later call fields win on a clash). */
  child(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  level: LogLevel;
  /** Receives each line without the trailing newline. Default: `process.stdout.write(line + "\n")`. */
  sink?: (line: string) => void;
}

export const REDACTED = "[redacted]";

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const RESERVED = new Set(["time", "level", "msg"]);
const MAX_DEPTH = 8;
const MAX_ITEMS = 1000;

const SECRET_EXACT = new Set([
  "key",
  "apikey",
  "apisecret",
  "xapikey",
  "secret",
  "secretkey",
  "privatekey",
  "passphrase",
  "password",
  "signature",
  "token",
  "authorization",
  "cookie",
  "setcookie",
  "credential",
  "xpayment",
  "paymentsignature",
  "polysignature",
  "polyapikey",
  "polypassphrase",
  "mnemonic",
  "seed",
]);
const SECRET_SUFFIXES = [
  "secret",
  "secretkey",
  "privatekey",
  "apikey",
  "passphrase",
  "password",
  "signature",
  "token",
  "cookie",
  "credential",
  "authorization",
];
const KEYISH_PARTS = ["key", "priv", "secret", "seed", "pk"];

const SCRUB = /bk_[A-Za-z0-9_-]{20,}|0x[0-9a-fA-F]{130,}|\b[Bb]earer\s+[^\s"',;]+/g;
const HEX32 = /^(0x)?[0-9a-fA-F]{64}$/;

function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, "");
}

const keyClassCache = new Map<string, 0 | 1 | 2>();

/** 2: redact the value; 1: key-ish (redact 32-byte hex values); 0: ordinary. Cached per key name. */
function classifyKey(key: string): 0 | 1 | 2 {
  const cached = keyClassCache.get(key);
  if (cached !== undefined) return cached;
  const n = normalizeKey(key);
  const forms = [n];
  // Plurals count too (signatures, secrets, credentials), except `tokens`, which in market data is the
  // list of outcome tokens, and `keys`/`seeds`, which are too generic.
  if (n.length > 1 && n.endsWith("s")) {
    const singular = n.slice(0, -1);
    if (!singular.endsWith("token") && singular !== "key" && singular !== "seed") forms.push(singular);
  }
  let cls: 0 | 1 | 2 = 0;
  for (const f of forms) {
    if (SECRET_EXACT.has(f) || f.startsWith("seal") || SECRET_SUFFIXES.some((s) => f.endsWith(s))) {
      cls = 2;
      break;
    }
  }
  if (cls === 0 && KEYISH_PARTS.some((p) => n.includes(p))) cls = 1;
  if (keyClassCache.size < 10_000) keyClassCache.set(key, cls);
  return cls;
}

/** Scrubs API keys, 65-byte signatures and bearer tokens out of free text. */
export function scrubString(s: string): string {
  if (s.length < 9) return s; // nothing redactable is shorter than "Bearer xy"
  SCRUB.lastIndex = 0;
  if (!SCRUB.test(s)) return s;
  SCRUB.lastIndex = 0;
  return s.replace(SCRUB, (m) => (/^bearer/i.test(m) ? `Bearer ${REDACTED}` : REDACTED));
}

interface Ctx {
  debug: boolean;
  ancestors: Set<object>;
}

function sanitize(value: unknown, keyClass: 0 | 1 | 2, depth: number, ctx: Ctx): unknown {
  if (keyClass === 2) return value === undefined ? undefined : REDACTED;
  switch (typeof value) {
    case "string":
      if (keyClass === 1 && HEX32.test(value)) return REDACTED;
      return scrubString(value);
    case "number":
      return Number.isFinite(value) ? value : String(value);
    case "boolean":
    case "undefined":
      return value;
    case "bigint":
      return value.toString();
    case "symbol":
      return value.toString();
    case "function":
      return "[function]";
  }
  if (value === null) return null;
  const obj = value as object;
  if (depth >= MAX_DEPTH) return "[depth]";
  if (ctx.ancestors.has(obj)) return "[circular]";

  if (obj instanceof Error) return sanitizeError(obj, ctx);
  if (obj instanceof Date) return Number.isNaN(obj.getTime()) ? "Invalid Date" : obj.toISOString();
  if (
    ArrayBuffer.isView(obj) ||
    obj instanceof ArrayBuffer ||
    (typeof SharedArrayBuffer !== "undefined" && obj instanceof SharedArrayBuffer)
  ) {
    return `[binary ${(obj as ArrayBuffer).byteLength} bytes]`;
  }
  if (obj instanceof URL) return scrubUrl(obj);
  if (obj instanceof RegExp) return String(obj);

  ctx.ancestors.add(obj);
  try {
    if (Array.isArray(obj)) {
      const out: unknown[] = [];
      const n = Math.min(obj.length, MAX_ITEMS);
      for (let i = 0; i < n; i++) {
        out.push(safeGet(() => sanitize(obj[i], keyClass, depth + 1, ctx)));
      }
      if (obj.length > n) out.push(`[${obj.length - n} more]`);
      return out;
    }
    if (obj instanceof Set) {
      const out: unknown[] = [];
      for (const v of obj) out.push(sanitize(v, keyClass, depth + 1, ctx));
      return out;
    }
    if (
      obj instanceof Map ||
      (typeof Headers !== "undefined" && obj instanceof Headers) ||
      obj instanceof URLSearchParams
    ) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of (obj as Map<unknown, unknown>).entries()) {
        const key = typeof k === "string" ? k : String(k);
        out[key] = sanitize(v, classifyKey(key), depth + 1, ctx);
      }
      return out;
    }
    const toJSON = (obj as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") {
      const j = safeGet(() => (toJSON as () => unknown).call(obj));
      if (j !== obj) return sanitize(j, keyClass, depth + 1, ctx);
    }
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(obj)) {
      const v = safeGet(() => sanitize((obj as Record<string, unknown>)[k], classifyKey(k), depth + 1, ctx));
      if (v !== undefined) out[k] = v;
    }
    return out;
  } finally {
    ctx.ancestors.delete(obj);
  }
}

function sanitizeError(e: Error, ctx: Ctx): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: safeGet(() => scrubString(String(e.name))),
    message: safeGet(() => scrubString(String(e.message))),
  };
  // No stack traces in any log line, at any level (CONTRACT section 2).
  return out;
}

function scrubUrl(u: URL): string {
  try {
    const copy = new URL(u.href);
    if (copy.password) copy.password = REDACTED;
    for (const k of [...copy.searchParams.keys()]) {
      if (classifyKey(k) === 2) copy.searchParams.set(k, REDACTED);
    }
    return scrubString(copy.href);
  } catch {
    return "[url]";
  }
}

function safeGet(f: () => unknown): unknown {
  try {
    return f();
  } catch {
    return "[unreadable]";
  }
}

/** Sanitizes a field bag into a plain JSON-safe object (exported for tests and problem logging). */
export function redactFields(fields: Record<string, unknown> | undefined, debug = false): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (fields === null || typeof fields !== "object") return out;
  if (fields instanceof Error) return { err: sanitizeError(fields, { debug, ancestors: new Set() }) };
  const ctx: Ctx = { debug, ancestors: new Set([fields]) };
  let keys: string[];
  try {
    keys = Object.keys(fields);
  } catch {
    return out;
  }
  for (const k of keys) {
    const v = safeGet(() => sanitize((fields as Record<string, unknown>)[k], classifyKey(k), 1, ctx));
    if (v !== undefined) out[RESERVED.has(k) ? `_${k}` : k] = v;
  }
  return out;
}

function defaultSink(line: string): void {
  process.stdout.write(`${line}\n`);
}

class JsonLogger implements Logger {
  readonly level: LogLevel;
  readonly #min: number;
  readonly #sink: (line: string) => void;
  /** Already sanitized. */
  readonly #bindings: Record<string, unknown>;

  constructor(level: LogLevel, sink: (line: string) => void, bindings: Record<string, unknown>) {
    this.level = LEVELS[level] === undefined ? "info" : level;
    this.#min = LEVELS[this.level];
    this.#sink = sink;
    this.#bindings = bindings;
  }

  isEnabled(level: LogLevel): boolean {
    return LEVELS[level] >= this.#min;
  }
  debug(msg: string, fields?: Record<string, unknown>): void {
    if (LEVELS.debug >= this.#min) this.#write("debug", msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    if (LEVELS.info >= this.#min) this.#write("info", msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    if (LEVELS.warn >= this.#min) this.#write("warn", msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    if (LEVELS.error >= this.#min) this.#write("error", msg, fields);
  }

  child(fields: Record<string, unknown>): Logger {
    let merged: Record<string, unknown>;
    try {
      merged = { ...this.#bindings, ...redactFields(fields, this.level === "debug") };
    } catch {
      merged = this.#bindings;
    }
    return new JsonLogger(this.level, this.#sink, merged);
  }

  #write(level: LogLevel, msg: string, fields: Record<string, unknown> | undefined): void {
    let line: string;
    try {
      const record: Record<string, unknown> = {
        time: new Date().toISOString(),
        level,
        msg: typeof msg === "string" ? scrubString(msg) : String(sanitize(msg, 0, 0, { debug: false, ancestors: new Set() })),
        ...this.#bindings,
        ...(fields === undefined ? {} : redactFields(fields, this.level === "debug")),
      };
      line = JSON.stringify(record);
    } catch {
      try {
        line = JSON.stringify({ time: new Date().toISOString(), level, msg: "[unserializable log record]" });
      } catch {
        return;
      }
    }
    try {
      this.#sink(line);
    } catch {
      // A broken sink must not break the request that logs.
    }
  }
}

export function createLogger(opts: LoggerOptions): Logger {
  return new JsonLogger(opts?.level ?? "info", opts?.sink ?? defaultSink, {});
}
