/**
 * The markets file (docs/architecture.md#the-markets-file): a JSON array of markets, each with its outcome tokens and
 * their initial order books. Loaded by the paper venue and the venue simulator.
 *
 * Validation is strict about what the venues rely on (ids, prices, sizes, ticks) and names the
 * file and the bad entry in every error: `markets file X: market[2] (0xab…) tokens[0].book.bids[1].price: …`.
 */

import { readFileSync } from "node:fs";
import { DecimalError, fromUnits, numberToPlainString, toUnits } from "../domain/units.ts";
import type { BookLevel, Market, MarketVersion } from "./venue.ts";

/** Prices and sizes inside the venues are bigint base units with this many decimals. */
export const PRICE_DECIMALS = 6;
export const SIZE_DECIMALS = 6;
export const PRICE_ONE = 10n ** BigInt(PRICE_DECIMALS);

export interface InitialBook {
  bids: BookLevel[];
  asks: BookLevel[];
  last_trade_price: string | null;
}

/** One market of the file, as written (books inside the tokens). */
export interface MarketsFileEntry {
  condition_id: string;
  question: string;
  category: string;
  end_date: string;
  active: boolean;
  closed: boolean;
  accepting_orders: boolean;
  neg_risk: boolean;
  tick_size: string;
  min_order_size: string;
  /** "v1" (CTF token ids, the default) or "v2" (Protocol V2 position ids). */
  version?: MarketVersion;
  tokens: Array<{
    token_id: string;
    outcome: string;
    book?: { bids?: Array<{ price: string | number; size: string | number }>; asks?: Array<{ price: string | number; size: string | number }> };
    last_trade_price?: string | number | null;
  }>;
}

export interface LoadedMarkets {
  markets: Market[];
  /** Initial book per token id; levels best first, prices and sizes as normalized decimal strings. */
  books: Map<string, InitialBook>;
}

export class MarketsFileError extends Error {
  override name = "MarketsFileError";
}

const CONDITION_ID_RE = /^0x[0-9a-fA-F]{64}$/;
const TOKEN_ID_RE = /^[0-9]{1,78}$/;
const UINT256_MAX = (1n << 256n) - 1n;

/** Reads and validates a markets file. Throws MarketsFileError naming the file and the bad entry. */
export function loadMarketsFile(path: string): LoadedMarkets {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new MarketsFileError(`markets file ${path}: cannot be read (${(err as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new MarketsFileError(`markets file ${path}: not valid JSON (${(err as Error).message})`);
  }
  return parseMarkets(json, path);
}

/** Validates an already-parsed markets array; `source` names it in errors. */
export function parseMarkets(json: unknown, source = "(inline)"): LoadedMarkets {
  const fail = (where: string, msg: string): never => {
    throw new MarketsFileError(`markets file ${source}: ${where}${where ? ": " : ""}${msg}`);
  };
  if (!Array.isArray(json)) fail("", "must be a JSON array of markets");
  const markets: Market[] = [];
  const books = new Map<string, InitialBook>();
  const conditions = new Set<string>();

  (json as unknown[]).forEach((raw, i) => {
    const label0 = `market[${i}]`;
    if (!isObject(raw)) fail(label0, "must be an object");
    const m = raw as Record<string, unknown>;
    const label = typeof m.condition_id === "string" ? `${label0} (${m.condition_id})` : label0;
    const at = (field: string) => `${label} ${field}`;

    const condition_id = m.condition_id;
    if (typeof condition_id !== "string" || !CONDITION_ID_RE.test(condition_id)) {
      fail(at("condition_id"), `must be 0x followed by 64 hex digits, got ${show(condition_id)}`);
    }
    const cid = (condition_id as string).toLowerCase();
    if (conditions.has(cid)) fail(at("condition_id"), "duplicate condition_id");
    conditions.add(cid);

    const question = nonEmptyString(m.question, at("question"), fail);
    const category = nonEmptyString(m.category, at("category"), fail);
    const end_date = nonEmptyString(m.end_date, at("end_date"), fail);
    if (Number.isNaN(Date.parse(end_date))) fail(at("end_date"), `not an ISO 8601 date: ${show(end_date)}`);
    const active = bool(m.active, at("active"), fail);
    const closed = bool(m.closed, at("closed"), fail);
    const accepting_orders = bool(m.accepting_orders, at("accepting_orders"), fail);
    const neg_risk = bool(m.neg_risk, at("neg_risk"), fail);

    const tick = decimal(m.tick_size, PRICE_DECIMALS, at("tick_size"), fail);
    if (tick <= 0n || tick >= PRICE_ONE) fail(at("tick_size"), `must be between 0 and 1, got ${show(m.tick_size)}`);
    const tick_size = fromUnits(tick, PRICE_DECIMALS);
    const minSize = decimal(m.min_order_size, SIZE_DECIMALS, at("min_order_size"), fail);
    if (minSize < 0n) fail(at("min_order_size"), "must not be negative");
    const min_order_size = fromUnits(minSize, SIZE_DECIMALS);
    if (m.version !== undefined && m.version !== "v1" && m.version !== "v2") fail(at("version"), `must be "v1" or "v2", got ${show(m.version)}`);
    const version: MarketVersion = (m.version as MarketVersion | undefined) ?? "v1";

    if (!Array.isArray(m.tokens) || m.tokens.length === 0) fail(at("tokens"), "must be a non-empty array");
    const tokens: Market["tokens"] = [];
    (m.tokens as unknown[]).forEach((rawTok, j) => {
      const tat = (field: string) => at(`tokens[${j}]${field ? "." + field : ""}`);
      if (!isObject(rawTok)) fail(tat(""), "must be an object");
      const t = rawTok as Record<string, unknown>;
      const token_id = t.token_id;
      if (typeof token_id !== "string" || !TOKEN_ID_RE.test(token_id) || BigInt(token_id) > UINT256_MAX) {
        fail(tat("token_id"), `must be a decimal uint256 string, got ${show(token_id)}`);
      }
      const tid = BigInt(token_id as string).toString(); // canonical: no leading zeros
      if (books.has(tid)) fail(tat("token_id"), `duplicate token_id ${tid}`);
      const outcome = nonEmptyString(t.outcome, tat("outcome"), fail);

      const book = t.book === undefined || t.book === null ? {} : t.book;
      if (!isObject(book)) fail(tat("book"), "must be an object with bids and asks");
      const b = book as Record<string, unknown>;
      const side = (name: "bids" | "asks"): Array<{ price: bigint; size: bigint }> => {
        const arr = b[name] ?? [];
        if (!Array.isArray(arr)) fail(tat(`book.${name}`), "must be an array of {price, size}");
        const out: Array<{ price: bigint; size: bigint }> = [];
        const seen = new Set<bigint>();
        (arr as unknown[]).forEach((lvl, k) => {
          const lat = tat(`book.${name}[${k}]`);
          if (!isObject(lvl)) fail(lat, "must be an object {price, size}");
          const l = lvl as Record<string, unknown>;
          const price = decimal(l.price, PRICE_DECIMALS, `${lat}.price`, fail);
          if (price <= 0n || price >= PRICE_ONE) fail(`${lat}.price`, `must be strictly between 0 and 1, got ${show(l.price)}`);
          if (price % tick !== 0n) fail(`${lat}.price`, `${show(l.price)} is not a multiple of the tick size ${tick_size}`);
          if (seen.has(price)) fail(`${lat}.price`, `duplicate price level ${show(l.price)}`);
          seen.add(price);
          const size = decimal(l.size, SIZE_DECIMALS, `${lat}.size`, fail);
          if (size <= 0n) fail(`${lat}.size`, `must be positive, got ${show(l.size)}`);
          out.push({ price, size });
        });
        return out;
      };
      const bids = side("bids").sort((x, y) => (x.price > y.price ? -1 : x.price < y.price ? 1 : 0));
      const asks = side("asks").sort((x, y) => (x.price < y.price ? -1 : x.price > y.price ? 1 : 0));
      if (bids.length && asks.length && bids[0].price >= asks[0].price) {
        fail(tat("book"), `crossed book: best bid ${fromUnits(bids[0].price, PRICE_DECIMALS)} >= best ask ${fromUnits(asks[0].price, PRICE_DECIMALS)}`);
      }
      let last_trade_price: string | null = null;
      if (t.last_trade_price !== undefined && t.last_trade_price !== null && t.last_trade_price !== "") {
        const ltp = decimal(t.last_trade_price, PRICE_DECIMALS, tat("last_trade_price"), fail);
        if (ltp < 0n || ltp > PRICE_ONE) fail(tat("last_trade_price"), `must be between 0 and 1, got ${show(t.last_trade_price)}`);
        last_trade_price = fromUnits(ltp, PRICE_DECIMALS);
      }
      const lv = (x: { price: bigint; size: bigint }): BookLevel => ({
        price: fromUnits(x.price, PRICE_DECIMALS),
        size: fromUnits(x.size, SIZE_DECIMALS),
      });
      books.set(tid, { bids: bids.map(lv), asks: asks.map(lv), last_trade_price });
      tokens.push(Object.freeze({ token_id: tid, outcome }));
    });

    markets.push(
      Object.freeze({
        condition_id: condition_id as string,
        question,
        category,
        end_date,
        active,
        closed,
        accepting_orders,
        neg_risk,
        tick_size,
        min_order_size,
        version,
        tokens: Object.freeze(tokens) as Market["tokens"],
      }),
    );
  });
  return { markets, books };
}

type Fail = (where: string, msg: string) => never;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function show(v: unknown): string {
  if (v === undefined) return "nothing";
  try {
    const s = JSON.stringify(v);
    return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    return String(v);
  }
}

function nonEmptyString(v: unknown, where: string, fail: Fail): string {
  if (typeof v !== "string" || v.trim() === "") fail(where, `must be a non-empty string, got ${show(v)}`);
  return v as string;
}

function bool(v: unknown, where: string, fail: Fail): boolean {
  if (typeof v !== "boolean") fail(where, `must be true or false, got ${show(v)}`);
  return v as boolean;
}

function decimal(v: unknown, decimals: number, where: string, fail: Fail): bigint {
  if (typeof v !== "string" && typeof v !== "number") fail(where, `must be a decimal string, got ${show(v)}`);
  try {
    const text = typeof v === "number" ? numberToPlainString(v) : (v as string);
    return toUnits(text, decimals);
  } catch (err) {
    const msg = err instanceof DecimalError ? err.message : String(err);
    return fail(where, `${msg}`);
  }
}
