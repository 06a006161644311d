/**
 * HTTP adapter for a venue speaking Polymarket's CLOB V2 wire format (docs/architecture.md#venues): the real
 * https://clob.polymarket.com or the venue simulator (src/venues/sim).
 *
 * Wire shapes, as Polymarket's clob-client-v2 (src/client.ts, src/endpoints.ts, src/types/clob.ts,
 * src/types/ordersV2.ts) and py-clob-client-v2 (client.py, order_utils/model/order_data_v2.py) use them:
 *
 *   GET    /ok                              → "OK"                                     (ping)
 *   GET    /version                         → {version: 2|3}: the order version (2: CTF Exchange V2, v1 markets;
 *                                             3: ExchangeV3, v2 markets); a market's own "version" field wins
 *   GET    /markets?next_cursor=MA==        → {limit, count, next_cursor, data: [market]}; last page next_cursor "LTE="
 *   GET    /markets/{condition_id}          → market {condition_id, question, end_date_iso, active, closed,
 *                                             accepting_orders, neg_risk, minimum_tick_size, minimum_order_size,
 *                                             tokens: [{token_id, outcome, price}], tags}
 *   GET    /markets-by-token/{token_id}     → {condition_id, primary_token_id, secondary_token_id}
 *   GET    /book?token_id=                  → {market, asset_id, timestamp, hash, bids, asks, tick_size,
 *                                             min_order_size, neg_risk, last_trade_price}; levels {price, size}
 *                                             as strings, listed worst first (bids ascending, asks descending)
 *   POST   /order   (L2)                    → {success, errorMsg, orderID, status, makingAmount, takingAmount, ...};
 *                                             the body is the official client's, byte for byte (postOrderPayload)
 *   DELETE /order   (L2) {"orderID": id}    → {canceled: [id], not_canceled: {id: reason}}
 *   DELETE /orders  (L2) [id, ...]          → same; at most MAX_CANCEL_BATCH ids per call
 *   DELETE /cancel-all (L2)                 → same, for every open order of the account
 *   DELETE /cancel-market-orders (L2) {market?, asset_id?} → same, for one market or token
 *   GET    /data/order/{id} (L2)            → {id, status, side, price, original_size, size_matched, ...}
 *   GET    /auth/api-keys (L2)              → {apiKeys: [...]}                          (confirmCredentials)
 *
 * Failures: a refusal is HTTP 4xx/5xx with {error} or HTTP 200 with {success: false, errorMsg} and
 * becomes { ok: false, error }. Timeouts, connection failures and gateway errors (502/503/504, or a
 * 5xx without an error body) throw VenueUnavailableError. Every call is bounded by `timeoutMs`
 * combined with the caller's AbortSignal, except a cancel that carries the caller's signal: the
 * kill switch bounds its cancels by its own deadline (see cancelOrder). Bun's fetch keeps
 * connections alive and pools them.
 */

import { deadlineMsOf } from "../../domain/venue-deadline.ts";
import { fromUnits, numberToPlainString, toUnits } from "../../domain/units.ts";
import {
  type BookLevel,
  type CallOptions,
  type CancelAllAnswer,
  type CancelResult,
  type Market,
  type MarketVersion,
  type OrderBook,
  type OrderMessage,
  type OrderType,
  type PlaceDelegatedOrder,
  type PostResult,
  type PostSignedOrder,
  type Venue,
  type VenueAuth,
  type VenueCredentials,
  type VenueOrderState,
  type VenueOrderStatus,
  VenueUnavailableError,
} from "../venue.ts";
import { getAddress } from "viem";
import { CancelCoalescer } from "./cancel-coalescer.ts";
import { l2Headers } from "./l2-auth.ts";
import { MarketChannel, type MarketChannelOptions } from "./market-channel.ts";
import { type Clock, systemClock } from "../../domain/clock.ts";

export const INITIAL_CURSOR = "MA==";
/** Longest a cancel waits when its caller bounds it with a signal (the largest KILL_DEADLINE_MS). */
export const CANCEL_CEILING_MS = 60_000;
export const END_CURSOR = "LTE=";
/** Most order ids sent in one DELETE /orders. */
export const MAX_CANCEL_BATCH = 1000;

/** Thrown by reads when the venue answers an unexpected 4xx (for example 401 on an authenticated read). */
export class VenueRequestError extends Error {
  override name = "VenueRequestError";
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export interface ClobVenueOptions {
  baseUrl: string;
  /** Per-call timeout, milliseconds (default 5000). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** How long market metadata is cached, milliseconds (default 30000). Books are never cached. */
  marketsCacheMs?: number;
  /** L2 credentials for authenticated reads and cancels whose call carries none (optional). */
  readCredentials?: VenueCredentials;
  /** Safety bound on GET /markets pages (default 500). */
  maxMarketPages?: number;
  name?: string;
  /**
   * Gather single cancels made at the same moment with the same credentials into one DELETE /orders
   * (cancel-coalescer.ts). On for VENUE=clob (createVenue); off by default, so each cancelOrder is its own request.
   */
  coalesceCancels?: boolean;
  /** The service's clock: cache expiry, books' receipt time, L2 timestamps (default: the system clock). */
  clock?: Clock;
  /**
   * The market channel's URL (`/ws/market`): books are kept live from it (market-channel.ts) and
   * GET /book is read only when the stream has no fresh book. Unset: every getBook reads GET /book.
   */
  marketWsUrl?: string;
  /** Options of the market channel beyond its URL (tests: backoff, ping interval, idle time). */
  marketChannel?: Omit<MarketChannelOptions, "url" | "clock">;
  /**
   * A stream book whose last update is older than this is not served; GET /book is read instead
   * (default 30000 ms, half the default book_max_age_s, so a quiet book never reaches the risk check stale).
   */
  bookFreshMs?: number;
}

/** What serializePostOrderBody needs: a PostSignedOrder, or the same fields with an explicit owner. */
export interface PostOrderBodyInput {
  order: OrderMessage;
  /** 0x + 130 hex for a signed order; "" for a delegated order. */
  signature: string;
  order_type: OrderType;
  expiration: string;
  /** The API key of the order's owner; defaults to venue_auth.api_key. */
  owner?: string;
  venue_auth?: { api_key: string };
}

/**
 * One order of a POST /order or POST /orders body, as the official client builds it
 * (clob-client-v2 orderToJsonV2, then JSON.stringify): callers who sign L2 headers for the service
 * (docs/api.md#submit-signed venue_auth) compute their POLY_SIGNATURE over the resulting string, byte for byte:
 *
 *   {"deferExec":false,"postOnly":false,"order":{"salt":<salt as a JSON integer>,"maker":"<maker>",
 *   "signer":"<signer>","tokenId":"<tokenId>","makerAmount":"<makerAmount>","takerAmount":"<takerAmount>",
 *   "side":"BUY"|"SELL","signatureType":<n>,"timestamp":"<timestamp>","expiration":"<expiration>",
 *   "metadata":"<metadata>","builder":"<builder>","signature":"<signature>"},"owner":"<api key>",
 *   "orderType":"GTC"|"GTD"|"FOK"|"FAK"}
 *
 * No whitespace, keys in exactly this order, strings JSON-escaped, uint256 fields as decimal strings
 * as given, salt written as the integer's decimal digits, addresses and hex as given (not re-cased),
 * expiration "0" when empty. The signing path is "/order" (or "/orders" for a batch) and the method "POST".
 */
export function postOrderPayload(req: PostOrderBodyInput): string {
  const o = req.order;
  if (typeof o.salt !== "string" || !/^[0-9]+$/.test(o.salt)) throw new TypeError("order.salt must be a decimal string");
  if (!Number.isInteger(o.signatureType)) throw new TypeError("order.signatureType must be an integer");
  if (o.side !== 0 && o.side !== 1) throw new TypeError("order.side must be 0 or 1");
  const s = JSON.stringify;
  const owner = req.owner ?? req.venue_auth?.api_key ?? "";
  const expiration = req.expiration && req.expiration !== "" ? req.expiration : "0";
  return (
    `{"deferExec":false,"postOnly":false,` +
    `"order":{"salt":${BigInt(o.salt).toString()},"maker":${s(checksummed(o.maker))},"signer":${s(checksummed(o.signer))},"tokenId":${s(o.tokenId)},` +
    `"makerAmount":${s(o.makerAmount)},"takerAmount":${s(o.takerAmount)},"side":${s(o.side === 0 ? "BUY" : "SELL")},` +
    `"signatureType":${o.signatureType},"timestamp":${s(o.timestamp)},"expiration":${s(expiration)},` +
    `"metadata":${s(o.metadata)},"builder":${s(o.builder)},"signature":${s(req.signature)}},` +
    `"owner":${s(owner)},"orderType":${s(req.order_type)}}`
  );
}

/**
 * An address as the official client writes it in a body: EIP-55 checksummed (viem's getAddress), so a
 * venue_auth the owner computes over its own POST /order body verifies over ours (issue #22, item 11).
 * Text that is not an address is left as it is (the venue refuses it).
 */
export function checksummed(address: string): string {
  try {
    return getAddress(address);
  } catch {
    return address;
  }
}

/** The exact POST /order body: one order payload (see postOrderPayload). */
export function serializePostOrderBody(req: PostOrderBodyInput): string {
  return postOrderPayload(req);
}

/** The exact POST /orders body: a JSON array of order payloads, as the official client's postOrders sends it. */
export function serializePostOrdersBody(reqs: PostOrderBodyInput[]): string {
  return `[${reqs.map(postOrderPayload).join(",")}]`;
}

/**
 * The exact DELETE /order body for one order, as the official client sends it
 * (clob-client-v2 cancelOrder: JSON.stringify({orderID})): `{"orderID":"<id>"}`. Callers who sign
 * L2 headers for the service (docs/api.md#payload-mode-cancels venue_auth) sign "DELETE" + "/order" + this.
 */
export function serializeCancelOrderBody(venueOrderId: string): string {
  return JSON.stringify({ orderID: venueOrderId });
}

/**
 * The caller's own L2 headers, as they are. POLY_ADDRESS is the caller's `address`, else
 * `defaultAddress` (the order's signer), else absent.
 */
function passThroughHeaders(auth: VenueAuth, defaultAddress?: string): Record<string, string> {
  const headers: Record<string, string> = {
    POLY_SIGNATURE: auth.signature,
    POLY_TIMESTAMP: auth.timestamp,
    POLY_API_KEY: auth.api_key,
    POLY_PASSPHRASE: auth.passphrase,
  };
  const address = auth.address ?? defaultAddress;
  if (address) headers.POLY_ADDRESS = address;
  return headers;
}

/** The venue's order version (GET /version: 2 = CTF Exchange V2, 3 = ExchangeV3) as a market protocol version. */
export function marketVersionOfOrderVersion(v: unknown): MarketVersion {
  return Number(v) === 3 ? "v2" : "v1";
}

/**
 * A market of GET /markets or /markets/{id} in the port's shape; null when it is not a market.
 * Its protocol version is the market's own `version` ("v1"/"v2", as the simulator states it) or,
 * when it has none, `defaultVersion` (the venue's GET /version).
 */
export function normalizeClobMarket(j: unknown, defaultVersion: MarketVersion = "v1"): Market | null {
  if (!j || typeof j !== "object") return null;
  const m = j as Record<string, any>;
  if (typeof m.condition_id !== "string" || !Array.isArray(m.tokens)) return null;
  const str = (v: unknown, dflt: string): string =>
    typeof v === "string" ? v : typeof v === "number" && Number.isFinite(v) ? numberToPlainString(v) : dflt;
  const tags = Array.isArray(m.tags) ? m.tags.filter((t: unknown) => typeof t === "string" && t !== "All") : [];
  return {
    condition_id: m.condition_id,
    question: typeof m.question === "string" ? m.question : "",
    category: typeof m.category === "string" && m.category ? m.category : tags.length ? String(tags[0]).toLowerCase() : "",
    end_date: str(m.end_date_iso ?? m.end_date, ""),
    active: m.active !== false,
    closed: m.closed === true,
    accepting_orders: m.accepting_orders === true,
    neg_risk: m.neg_risk === true,
    tick_size: str(m.minimum_tick_size ?? m.tick_size, "0.01"),
    min_order_size: str(m.minimum_order_size ?? m.min_order_size, "0"),
    version: m.version === "v1" || m.version === "v2" ? m.version : defaultVersion,
    tokens: m.tokens
      .filter((t: any) => t && (typeof t.token_id === "string" || typeof t.token_id === "number"))
      .map((t: any) => ({ token_id: String(t.token_id), outcome: typeof t.outcome === "string" ? t.outcome : "" })),
  };
}

/** A GET /book answer as a port OrderBook, levels re-sorted best first (Polymarket lists them worst first). */
export function normalizeClobBook(j: unknown, tokenId: string, receivedAt = systemClock.now()): OrderBook | null {
  if (!j || typeof j !== "object") return null;
  const b = j as Record<string, any>;
  const levels = (arr: unknown, desc: boolean): BookLevel[] => {
    if (!Array.isArray(arr)) return [];
    const out: Array<{ k: bigint; l: BookLevel }> = [];
    for (const x of arr) {
      if (!x || typeof x !== "object") continue;
      const price = typeof x.price === "number" ? numberToPlainString(x.price) : x.price;
      const size = typeof x.size === "number" ? numberToPlainString(x.size) : x.size;
      if (typeof price !== "string" || typeof size !== "string") continue;
      let k: bigint;
      try {
        k = toUnits(price, 18, "floor");
        if (toUnits(size, 18, "floor") <= 0n) continue;
      } catch {
        continue;
      }
      out.push({ k, l: { price, size } });
    }
    out.sort((x, y) => (x.k === y.k ? 0 : (x.k > y.k) === desc ? -1 : 1));
    return out.map((x) => x.l);
  };
  const ts = Number(b.timestamp);
  const ltp = b.last_trade_price;
  return {
    token_id: typeof b.asset_id === "string" && b.asset_id ? b.asset_id : tokenId,
    bids: levels(b.bids, true),
    asks: levels(b.asks, false),
    last_trade_price:
      typeof ltp === "string" && ltp !== "" ? ltp : typeof ltp === "number" && Number.isFinite(ltp) ? numberToPlainString(ltp) : null,
    timestamp_ms: Number.isFinite(ts) && ts > 0 ? (ts < 1e12 ? ts * 1000 : ts) : receivedAt,
  };
}

/** Venue order statuses, tolerant of "LIVE", "live", "ORDER_STATUS_LIVE", "CANCELED", ... */
export function normalizeOrderStatus(status: unknown, dflt: VenueOrderStatus = "delayed"): VenueOrderStatus {
  if (typeof status !== "string" || !status) return dflt;
  const s = status.toLowerCase().replace(/^order_status_/, "");
  switch (s) {
    case "live":
      return "live";
    case "matched":
      return "matched";
    case "delayed":
      return "delayed";
    case "unmatched":
      return "unmatched";
    case "canceled":
    case "cancelled":
    case "canceled_market_resolved":
    case "cancelled_market_resolved":
    case "invalid":
    case "expired":
      return "cancelled";
    default:
      return dflt;
  }
}

/** not_canceled reasons that mean the order is already gone: "already canceled or matched", ... */
export function isAlreadyDoneReason(reason: unknown): boolean {
  // "Order can't be found - already canceled or matched", "order already canceled",
  // "matched orders can't be canceled" — but not "unmatched" or "not matched".
  return typeof reason === "string" && /\balready\b.*\b(cancel?led|matched)\b|^\s*matched orders can'?t be cancel?led/i.test(reason);
}

type HttpResult = { status: number; body: any; text: string; retryAfterS?: number };

export class ClobVenue implements Venue {
  readonly name: string;
  private readonly base: string;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly cacheMs: number;
  private readonly maxPages: number;
  private readonly readCreds?: VenueCredentials;
  private readonly tokenCache = new Map<string, { market: Market | null; expires: number }>();
  private readonly tokenInflight = new Map<string, Promise<Market | null>>();
  private listCache: { markets: Market[]; expires: number; complete: boolean } | null = null;
  private listInflight: Promise<Market[]> | null = null;
  private versionCache: { version: number; expires: number } | null = null;
  private readonly coalescer: CancelCoalescer | null;
  private readonly clock: Clock;
  /** The live books (null without marketWsUrl). */
  readonly marketChannel: MarketChannel | null;
  private readonly bookFreshMs: number;
  /** GET /book answers for tokens whose stream book is in sync but quiet (see getBook). */
  private readonly quietBooks = new Map<string, { at: number; book: OrderBook }>();

  constructor(opts: ClobVenueOptions) {
    this.name = opts.name ?? "clob";
    this.clock = opts.clock ?? systemClock;
    this.base = opts.baseUrl.replace(/\/+$/, "");
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.fetchImpl = opts.fetch ?? fetch;
    this.cacheMs = opts.marketsCacheMs ?? 30_000;
    this.maxPages = opts.maxMarketPages ?? 500;
    this.readCreds = opts.readCredentials;
    this.coalescer = opts.coalesceCancels
      ? new CancelCoalescer(
          (id, credentials, signal) => this.cancelOne({ venue_order_id: id, credentials }, signal),
          (ids, credentials, signal) => this.cancelOrders({ venue_order_ids: ids, credentials }, { signal }),
        )
      : null;
    this.marketChannel = opts.marketWsUrl ? new MarketChannel({ ...opts.marketChannel, url: opts.marketWsUrl, clock: this.clock }) : null;
    this.bookFreshMs = opts.bookFreshMs ?? 30_000;
  }

  // ------------------------------------------------------------------ markets and books

  async listMarkets(opts?: CallOptions): Promise<Market[]> {
    const c = this.listCache;
    if (c && c.expires > this.clock.now()) return [...c.markets];
    if (!this.listInflight) {
      this.listInflight = this.fetchAllMarkets(opts).finally(() => {
        this.listInflight = null;
      });
    }
    return [...(await this.listInflight)];
  }

  async getMarketByToken(tokenId: string, opts?: CallOptions): Promise<Market | null> {
    const now = this.clock.now();
    const hit = this.tokenCache.get(tokenId);
    if (hit && hit.expires > now) return hit.market;
    const list = this.listCache;
    if (list && list.complete && list.expires > now && !hit) {
      // A fresh complete listing is authoritative: a token absent from it is unknown.
      return null;
    }
    let p = this.tokenInflight.get(tokenId);
    if (!p) {
      p = this.fetchMarketByToken(tokenId, opts).finally(() => this.tokenInflight.delete(tokenId));
      this.tokenInflight.set(tokenId, p);
    }
    return p;
  }

  /**
   * The token's book: the market channel's live book when it has a fresh one (synced since the last
   * (re)subscription and updated within bookFreshMs), else GET /book. The first read of a token known
   * as a market's (getMarketByToken or listMarkets named it) subscribes it.
   */
  async getBook(tokenId: string, opts?: CallOptions): Promise<OrderBook | null> {
    const now = this.clock.now();
    // Only tokens the venue has named as a market's are subscribed: junk ids never open subscriptions.
    const live = this.isKnownToken(tokenId) ? this.marketChannel!.book(tokenId) : null;
    if (live) {
      if (now - live.timestamp_ms <= this.bookFreshMs) return live;
      // A quiet book on a live stream: one GET /book per bookFreshMs refreshes it, until the stream moves.
      const read = this.quietBooks.get(tokenId);
      if (read && read.at >= live.timestamp_ms && now - read.at <= this.bookFreshMs) return read.book;
    } else this.quietBooks.delete(tokenId);
    const r = await this.call("GET", "/book", { query: { token_id: tokenId }, signal: opts?.signal });
    if (r.status === 404 || r.status === 400) return null;
    this.throwUnlessOk(r, "GET /book");
    const book = normalizeClobBook(r.body, tokenId, this.clock.now());
    if (live && book) this.quietBooks.set(tokenId, { at: now, book });
    else if (!live && book && this.marketChannel) {
      // An intent resolves its market beside its book: once the venue names the token, it is subscribed.
      if (this.isKnownToken(tokenId)) this.marketChannel.book(tokenId);
      else
        void this.tokenInflight.get(tokenId)?.then(
          (m) => m && this.isKnownToken(tokenId) && this.marketChannel?.book(tokenId),
          () => {},
        );
    }
    return book;
  }

  /** With a market channel: the token belongs to a market the venue named (getMarketByToken, listMarkets). */
  private isKnownToken(tokenId: string): boolean {
    if (!this.marketChannel) return false;
    if (this.tokenCache.get(tokenId)?.market) return true;
    return this.listCache?.markets.some((m) => m.tokens.some((t) => t.token_id === tokenId)) === true;
  }

  // ------------------------------------------------------------------ orders

  async postSignedOrder(req: PostSignedOrder, opts?: CallOptions): Promise<PostResult> {
    let body: string;
    try {
      body = serializePostOrderBody(req);
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
    const headers: Record<string, string> = req.venue_auth ? passThroughHeaders(req.venue_auth, req.order.signer) : {};
    const r = await this.call("POST", "/order", { body, headers, signal: opts?.signal });
    return this.postResult(r, req.order.side);
  }

  /**
   * Places the order with the agent's credentials: the same POST /order body as a signed order,
   * with an empty signature, and L2 headers computed here. The wire has no client order id, so
   * `client_order_id` is not sent.
   */
  async placeDelegatedOrder(req: PlaceDelegatedOrder, opts?: CallOptions): Promise<PostResult> {
    const c = req.credentials;
    if (!c || !c.api_key || !c.api_secret) return { ok: false, error: "invalid credentials" };
    let body: string;
    try {
      body = serializePostOrderBody({
        order: req.order,
        signature: "",
        order_type: req.order_type,
        expiration: req.expiration,
        owner: c.api_key,
      });
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
    const headers = { ...l2Headers(c, { method: "POST", path: "/order", body, timestamp: Math.floor(this.clock.now() / 1000) }) };
    const r = await this.call("POST", "/order", { body, headers, signal: opts?.signal });
    return this.postResult(r, req.order.side);
  }

  /**
   * Cancels one order. The caller's signal, when given, is the bound: a kill switch cancels under
   * its own deadline (KILL_DEADLINE_MS, up to 60 s), which may be longer than the per-call timeout,
   * and an unanswered cancel must stay in flight until that deadline rather than be given up at
   * `timeoutMs`. Without a signal, `timeoutMs` applies; with one, at most CANCEL_CEILING_MS.
   */
  async cancelOrder(req: { venue_order_id: string; credentials?: VenueCredentials; venue_auth?: VenueAuth }, opts?: CallOptions): Promise<CancelResult> {
    // The owner's headers sign this one DELETE /order body: it is never gathered into a batch.
    if (this.coalescer && !req.venue_auth) return this.coalescer.cancel(req.venue_order_id, req.credentials, opts?.signal);
    return this.cancelOne(req, opts?.signal);
  }

  /**
   * DELETE /order {orderID}: the body is the official client's (JSON.stringify({orderID})), so
   * pass-through `venue_auth` computed over `{"orderID":"<id>"}` verifies.
   */
  private async cancelOne(req: { venue_order_id: string; credentials?: VenueCredentials; venue_auth?: VenueAuth }, signal?: AbortSignal): Promise<CancelResult> {
    const body = serializeCancelOrderBody(req.venue_order_id);
    const r = await this.call("DELETE", "/order", {
      body,
      headers: req.venue_auth ? passThroughHeaders(req.venue_auth) : this.authHeaders(req.credentials, "DELETE", "/order", body),
      signal,
      timeoutMs: signal ? Math.max(this.timeoutMs, CANCEL_CEILING_MS) : this.timeoutMs,
    });
    const refused = this.refusal(r);
    if (refused) return refused;
    return cancelResultFor(r.body, req.venue_order_id);
  }

  /**
   * Batch cancel: one DELETE /orders per MAX_CANCEL_BATCH ids (the batches in parallel), one result
   * per id. Bounded like cancelOrder. A batch the venue refuses fails each of its ids.
   */
  async cancelOrders(
    req: { venue_order_ids: string[]; credentials?: VenueCredentials },
    opts?: CallOptions,
  ): Promise<Record<string, CancelResult>> {
    const out: Record<string, CancelResult> = {};
    const ids = [...new Set(req.venue_order_ids)];
    const batches: string[][] = [];
    for (let i = 0; i < ids.length; i += MAX_CANCEL_BATCH) batches.push(ids.slice(i, i + MAX_CANCEL_BATCH));
    await Promise.all(
      batches.map(async (batch) => {
        const body = JSON.stringify(batch);
        const r = await this.call("DELETE", "/orders", {
          body,
          headers: this.authHeaders(req.credentials, "DELETE", "/orders", body),
          signal: opts?.signal,
          timeoutMs: opts?.signal ? Math.max(this.timeoutMs, CANCEL_CEILING_MS) : this.timeoutMs,
        });
        const refused = this.refusal(r);
        for (const id of batch) out[id] = refused ?? cancelResultFor(r.body, id);
      }),
    );
    return out;
  }

  /**
   * DELETE /cancel-all (no body): every open order of the account, with its credentials or the owner's
   * pass-through `venue_auth` (signed over "DELETE" + "/cancel-all" and no body). Answers the ids
   * cancelled and those not; a refusal throws VenueRequestError (its status), no answer
   * VenueUnavailableError. Bounded like cancelOrder.
   */
  async cancelAll(req: { credentials?: VenueCredentials; venue_auth?: VenueAuth }, opts?: CallOptions): Promise<CancelAllAnswer> {
    const r = await this.call("DELETE", "/cancel-all", {
      headers: req.venue_auth ? passThroughHeaders(req.venue_auth) : this.authHeaders(req.credentials, "DELETE", "/cancel-all"),
      signal: opts?.signal,
      timeoutMs: opts?.signal ? Math.max(this.timeoutMs, CANCEL_CEILING_MS) : this.timeoutMs,
    });
    this.throwUnlessOk(r, "DELETE /cancel-all");
    return cancelAnswer(r.body);
  }

  /** DELETE /cancel-market-orders {market?, asset_id?}: the account's open orders of one market or one token. */
  async cancelMarketOrders(
    req: { market?: string; asset_id?: string; credentials: VenueCredentials },
    opts?: CallOptions,
  ): Promise<{ canceled: string[]; not_canceled: Record<string, string> }> {
    const payload: Record<string, string> = {};
    if (req.market !== undefined) payload.market = req.market;
    if (req.asset_id !== undefined) payload.asset_id = req.asset_id;
    const body = JSON.stringify(payload);
    const r = await this.call("DELETE", "/cancel-market-orders", {
      body,
      headers: this.authHeaders(req.credentials, "DELETE", "/cancel-market-orders", body),
      signal: opts?.signal,
    });
    this.throwUnlessOk(r, "DELETE /cancel-market-orders");
    return cancelAnswer(r.body);
  }

  /** The venue's order version (GET /version), cached like the markets; 2 when the venue does not say. */
  async orderVersion(opts?: CallOptions): Promise<number> {
    const c = this.versionCache;
    if (c && c.expires > this.clock.now()) return c.version;
    let version = 2;
    try {
      const r = await this.call("GET", "/version", { signal: opts?.signal });
      const v = Number(r.status === 200 && r.body && typeof r.body === "object" ? r.body.version : Number.NaN);
      if (Number.isInteger(v) && v > 0) version = v;
    } catch (err) {
      if (err instanceof VenueUnavailableError) throw err;
    }
    this.versionCache = { version, expires: this.clock.now() + this.cacheMs };
    return version;
  }

  async getOrder(req: { venue_order_id: string; credentials?: VenueCredentials }, opts?: CallOptions): Promise<VenueOrderState | null> {
    const path = `/data/order/${encodeURIComponent(req.venue_order_id)}`;
    const r = await this.call("GET", path, { headers: this.authHeaders(req.credentials, "GET", path), signal: opts?.signal });
    if (r.status === 404) return null;
    this.throwUnlessOk(r, "GET /data/order");
    const j = r.body;
    if (!j || typeof j !== "object" || (typeof j.id !== "string" && typeof j.status !== "string")) return null;
    return {
      venue_order_id: typeof j.id === "string" && j.id ? j.id : req.venue_order_id,
      status: normalizeOrderStatus(j.status),
      filled_usdc: filledUsdcOf(j),
    };
  }

  async confirmCredentials(credentials: VenueCredentials, opts?: CallOptions): Promise<boolean> {
    if (!credentials || !credentials.api_key || !credentials.api_secret) return false;
    const path = "/auth/api-keys";
    const r = await this.call("GET", path, { headers: { ...l2Headers(credentials, { method: "GET", path, timestamp: Math.floor(this.clock.now() / 1000) }) }, signal: opts?.signal });
    if (r.status >= 200 && r.status < 300) return true;
    // 401/403: the venue refused these credentials. 429 (rate limited) says nothing about them.
    if (r.status >= 400 && r.status < 500 && r.status !== 429 && r.status !== 408) return false;
    throw new VenueUnavailableError(`GET ${path}: HTTP ${r.status}`);
  }

  async ping(opts?: CallOptions): Promise<boolean> {
    try {
      const r = await this.call("GET", "/ok", { signal: opts?.signal });
      return r.status >= 200 && r.status < 300;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.marketChannel?.close();
    this.tokenCache.clear();
    this.listCache = null;
    this.versionCache = null;
  }

  // ------------------------------------------------------------------ internals

  private async fetchAllMarkets(opts?: CallOptions): Promise<Market[]> {
    const markets: Market[] = [];
    let cursor = INITIAL_CURSOR;
    let complete = false;
    const defaultVersion = marketVersionOfOrderVersion(await this.orderVersion(opts));
    for (let page = 0; page < this.maxPages; page++) {
      const r = await this.call("GET", "/markets", { query: { next_cursor: cursor }, signal: opts?.signal });
      this.throwUnlessOk(r, "GET /markets");
      const body = r.body;
      const data: unknown[] = Array.isArray(body) ? body : Array.isArray(body?.data) ? body.data : [];
      for (const raw of data) {
        const m = normalizeClobMarket(raw, defaultVersion);
        if (m) markets.push(m);
      }
      const next = Array.isArray(body) ? END_CURSOR : body?.next_cursor;
      if (typeof next !== "string" || next === "" || next === END_CURSOR || next === cursor) {
        complete = true;
        break;
      }
      cursor = next;
    }
    const expires = this.clock.now() + this.cacheMs;
    this.listCache = { markets, expires, complete };
    for (const m of markets) for (const t of m.tokens) this.tokenCache.set(t.token_id, { market: m, expires });
    return markets;
  }

  private async fetchMarketByToken(tokenId: string, opts?: CallOptions): Promise<Market | null> {
    const r = await this.call("GET", `/markets-by-token/${encodeURIComponent(tokenId)}`, { signal: opts?.signal });
    let market: Market | null = null;
    if (r.status !== 404 && r.status !== 400) {
      this.throwUnlessOk(r, "GET /markets-by-token");
      const cid = r.body?.condition_id;
      if (typeof cid === "string" && cid) {
        const mr = await this.call("GET", `/markets/${encodeURIComponent(cid)}`, { signal: opts?.signal });
        if (mr.status !== 404) {
          this.throwUnlessOk(mr, "GET /markets/{condition_id}");
          market = normalizeClobMarket(mr.body, marketVersionOfOrderVersion(await this.orderVersion(opts)));
        }
      }
    }
    const now = this.clock.now();
    if (market && market.tokens.some((t) => t.token_id === tokenId)) {
      for (const t of market.tokens) this.tokenCache.set(t.token_id, { market, expires: now + this.cacheMs });
      return market;
    }
    // Unknown tokens are remembered briefly so a burst of bad intents does not hammer the venue.
    this.tokenCache.set(tokenId, { market: null, expires: now + Math.min(this.cacheMs, 5000) });
    return null;
  }

  private authHeaders(creds: VenueCredentials | undefined, method: string, path: string, body?: string): Record<string, string> {
    const c = creds ?? this.readCreds;
    if (!c || !c.api_key || !c.api_secret) return {};
    return { ...l2Headers(c, { method, path, body, timestamp: Math.floor(this.clock.now() / 1000) }) };
  }

  private postResult(r: HttpResult, side: 0 | 1): PostResult {
    const refused = this.refusal(r);
    if (refused) return { ok: false, error: refused.error };
    const j = r.body;
    if (!j || typeof j !== "object") return { ok: false, error: `unexpected answer: ${r.text.slice(0, 200)}` };
    if (j.success === false || (j.success !== true && !j.orderID)) {
      return { ok: false, error: errorText(j.errorMsg ?? j.error, "order rejected") };
    }
    if (typeof j.orderID !== "string" || !j.orderID) return { ok: false, error: errorText(j.errorMsg, "no orderID in the answer") };
    const result: PostResult = { ok: true, venue_order_id: j.orderID, status: normalizeOrderStatus(j.status, "live") };
    const usdc = side === 0 ? j.makingAmount : j.takingAmount;
    const filled = decimalOrNull(usdc);
    if (filled !== null) result.filled_usdc = filled;
    const shares = decimalOrNull(side === 0 ? j.takingAmount : j.makingAmount);
    if (shares !== null) result.filled_shares = shares;
    // The matches' names: trade ids (since 2026-07), transaction hashes (before; empty until broadcast).
    const names = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && x !== "") : []);
    const tradeIds = names(j.tradeIDs ?? j.tradeIds);
    const txs = names(j.transactionsHashes ?? j.transactionHashes);
    if (tradeIds.length) result.trade_ids = tradeIds;
    if (txs.length) result.tx_hashes = txs;
    return result;
  }

  /** { ok: false } for a 4xx/5xx with an answer; throws for gateway errors; null for 2xx. */
  private refusal(r: HttpResult): { ok: false; error: string; status?: number; retry_after_s?: number } | null {
    if (r.status >= 200 && r.status < 300) return null;
    const hasError = r.body && typeof r.body === "object" && (r.body.error !== undefined || r.body.errorMsg !== undefined);
    if (r.status >= 500 && (r.status === 502 || r.status === 503 || r.status === 504 || !hasError)) {
      throw new VenueUnavailableError(`venue answered HTTP ${r.status}`);
    }
    const msg = hasError ? errorText(r.body.error ?? r.body.errorMsg, `HTTP ${r.status}`) : r.text.slice(0, 200) || `HTTP ${r.status}`;
    const out: { ok: false; error: string; status?: number; retry_after_s?: number } = { ok: false, error: msg, status: r.status };
    if (r.retryAfterS !== undefined) out.retry_after_s = r.retryAfterS;
    return out;
  }

  private throwUnlessOk(r: HttpResult, what: string): void {
    if (r.status >= 200 && r.status < 300) return;
    const detail = r.body && typeof r.body === "object" && r.body.error !== undefined ? `: ${errorText(r.body.error, "")}` : "";
    if (r.status >= 500) throw new VenueUnavailableError(`${what}: HTTP ${r.status}${detail}`);
    throw new VenueRequestError(`${what}: HTTP ${r.status}${detail}`, r.status);
  }

  private async call(
    method: string,
    path: string,
    o: { query?: Record<string, string>; body?: string; headers?: Record<string, string>; signal?: AbortSignal; timeoutMs?: number },
  ): Promise<HttpResult> {
    const url = `${this.base}${path}${o.query ? `?${new URLSearchParams(o.query).toString()}` : ""}`;
    const timeoutMs = o.timeoutMs ?? this.timeoutMs;
    // A caller's deadline that is itself a timeout no longer than ours (a placement's, a read's) bounds
    // the call alone: a second timer and AbortSignal.any per call cost more than the call's own work.
    const callerBound = o.signal !== undefined && o.timeoutMs === undefined && (deadlineMsOf(o.signal!) ?? Number.POSITIVE_INFINITY) <= timeoutMs;
    const timeout = callerBound ? o.signal! : AbortSignal.timeout(timeoutMs);
    const signal = o.signal && !callerBound ? AbortSignal.any([timeout, o.signal]) : timeout;
    const headers: Record<string, string> = { Accept: "application/json", ...o.headers };
    if (o.body !== undefined) headers["Content-Type"] = "application/json";
    try {
      const res = await this.fetchImpl(url, { method, headers, body: o.body, signal });
      const text = await res.text();
      let body: any = null;
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      const result: HttpResult = { status: res.status, body, text };
      const retryAfterMs = retryAfterMsOf(res.headers.get("retry-after"), this.clock.now());
      if (retryAfterMs !== undefined) result.retryAfterS = retryAfterMs / 1000;
      return result;
    } catch (err) {
      let why: string;
      if (callerBound && timeout.aborted && timeout.reason instanceof DOMException && timeout.reason.name === "TimeoutError") why = `no answer within ${timeoutMs} ms`;
      else if (o.signal?.aborted) why = "aborted by the caller";
      else if (timeout.aborted) why = `no answer within ${timeoutMs} ms`;
      else why = `connection failed (${(err as Error)?.message ?? String(err)})`;
      throw new VenueUnavailableError(`${method} ${path}: ${why}`, { cause: err });
    }
  }
}

/** Retry-After as milliseconds from now: delta-seconds or an HTTP date (RFC 9110 section 10.2.3). */
export function retryAfterMsOf(value: string | null | undefined, now = systemClock.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function cancelAnswer(body: any): { canceled: string[]; not_canceled: Record<string, string> } {
  const canceled: unknown = body?.canceled ?? body?.cancelled;
  const notCanceled: unknown = body?.not_canceled ?? body?.notCanceled;
  return {
    canceled: Array.isArray(canceled) ? canceled.filter((x): x is string => typeof x === "string") : [],
    not_canceled:
      notCanceled && typeof notCanceled === "object" && !Array.isArray(notCanceled)
        ? Object.fromEntries(Object.entries(notCanceled).map(([k, v]) => [k, errorText(v, "not canceled")]))
        : {},
  };
}

function cancelResultFor(body: any, id: string): CancelResult {
  const canceled: unknown = body?.canceled ?? body?.cancelled;
  if (Array.isArray(canceled) && canceled.includes(id)) return { ok: true };
  const notCanceled = body?.not_canceled ?? body?.notCanceled;
  if (notCanceled && typeof notCanceled === "object" && !Array.isArray(notCanceled) && id in notCanceled) {
    const reason = notCanceled[id];
    return isAlreadyDoneReason(reason) ? { ok: true, already: true } : { ok: false, error: errorText(reason, "not canceled") };
  }
  return { ok: false, error: "the venue did not confirm the cancellation" };
}

function filledUsdcOf(j: Record<string, any>): string {
  const ext = decimalOrNull(j.filled_usdc);
  if (ext !== null) return ext;
  try {
    const matched = toUnits(String(j.size_matched ?? "0"), 6, "floor");
    const price = toUnits(String(j.price ?? "0"), 6, "floor");
    return fromUnits((matched * price) / 1_000_000n);
  } catch {
    return "0";
  }
}

/** A decimal already in fromUnits' form with at most 6 places ("12", "0.5", "3.141592"): what the venue's answers carry. */
const CANONICAL_DECIMAL = /^(?:0|[1-9]\d{0,14})(?:\.\d{0,5}[1-9])?$/;

function decimalOrNull(v: unknown): string | null {
  if (typeof v === "string" && CANONICAL_DECIMAL.test(v)) return v;
  if (typeof v !== "string" && typeof v !== "number") return null;
  try {
    return fromUnits(toUnits(typeof v === "number" ? numberToPlainString(v) : v, 6, "floor"));
  } catch {
    return null;
  }
}

function errorText(v: unknown, dflt: string): string {
  if (typeof v === "string" && v) return v;
  if (v && typeof v === "object") {
    try {
      return JSON.stringify(v);
    } catch {
      return dflt;
    }
  }
  return dflt;
}
