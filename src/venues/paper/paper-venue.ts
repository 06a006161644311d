/**
 * The embedded paper venue (docs/architecture.md#venues): in-process books per outcome token, loaded from the
 * markets file, with price-time matching of incoming orders. Everything is exact bigint arithmetic.
 *
 * Order semantics, from the signed OrderMessage (amounts are 6-decimal base units):
 * - buy  (side 0): price = makerAmount / takerAmount, size = takerAmount shares
 * - sell (side 1): price = takerAmount / makerAmount, size = makerAmount shares
 * Trades execute at the resting order's price. GTC/GTD remainders rest on the book; FOK fills all or
 * nothing; FAK fills what it can and cancels the rest. The venue order id is the order's EIP-712
 * hash (docs/api.md#the-unsigned-order), like Polymarket's orderID, so it equals the service's `order_hash`.
 *
 * The seeded levels of the markets file rest as orders of the owner "paper-book".
 */

import { randomBytes } from "node:crypto";
import { fromUnits, toUnits } from "../../domain/units.ts";
import { type InitialBook, loadMarketsFile, PRICE_DECIMALS, PRICE_ONE, parseMarkets, SIZE_DECIMALS } from "../markets-file.ts";
import {
  type CallOptions,
  type CancelResult,
  type Market,
  type OrderBook,
  type OrderMessage,
  type OrderType,
  type PlaceDelegatedOrder,
  type PostResult,
  type PostSignedOrder,
  type Venue,
  type VenueCredentials,
  type VenueOrderState,
  type VenueOrderStatus,
  VenueUnavailableError,
} from "../venue.ts";
import { orderHash as codecOrderHash } from "../../eip712/order-hash.ts";
import { type BookLevels, type BookSide, TokenBook } from "./order-book.ts";
import type { VenueReportSink } from "../../domain/venue-report.ts";

// ---------------------------------------------------------------------------------------------
// The venue's order id is the order's EIP-712 hash (docs/api.md#the-unsigned-order), the same digest the service signs over.

export { EXCHANGE_V2 as CTF_EXCHANGE_V2, NEG_RISK_EXCHANGE_V2 as NEG_RISK_CTF_EXCHANGE_V2 } from "../../eip712/order-typed-data.ts";

/** keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(order)) under the market's domain; the order must be well formed. */
export function orderHash(order: OrderMessage, opts: { chainId: number; negRisk: boolean; version?: Market["version"] }): `0x${string}` {
  return codecOrderHash({ ...opts, message: order });
}

const UINT_RE = /^[0-9]{1,78}$/;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const BYTES32_RE = /^0x[0-9a-fA-F]{64}$/;
const UINT256_LIMIT = 1n << 256n;

/** Returns an error message when the order message is malformed, else null. */
export function validateOrderMessage(o: OrderMessage): string | null {
  if (!o || typeof o !== "object") return "order is missing";
  for (const f of ["salt", "tokenId", "makerAmount", "takerAmount", "timestamp"] as const) {
    // 77 digits or fewer are below 10^77 < 2^256: only a 78-digit string needs the comparison.
    if (typeof o[f] !== "string" || !UINT_RE.test(o[f]) || (o[f].length === 78 && BigInt(o[f]) >= UINT256_LIMIT)) return `order.${f} must be a decimal uint256 string`;
  }
  for (const f of ["maker", "signer"] as const) {
    if (typeof o[f] !== "string" || !ADDRESS_RE.test(o[f])) return `order.${f} must be an address`;
  }
  for (const f of ["metadata", "builder"] as const) {
    if (typeof o[f] !== "string" || !BYTES32_RE.test(o[f])) return `order.${f} must be 32 bytes of hex`;
  }
  if (o.side !== 0 && o.side !== 1) return "order.side must be 0 (buy) or 1 (sell)";
  if (!Number.isInteger(o.signatureType) || o.signatureType < 0 || o.signatureType > 255) return "order.signatureType must be a uint8";
  return null;
}

export function validCredentials(c: VenueCredentials | undefined | null): boolean {
  return (
    !!c &&
    typeof c.api_key === "string" &&
    c.api_key.trim() !== "" &&
    typeof c.api_secret === "string" &&
    c.api_secret.trim() !== ""
  );
}

// ---------------------------------------------------------------------------------------------

export const PAPER_BOOK_OWNER = "paper-book";
const ORDER_TYPES: ReadonlySet<string> = new Set(["GTC", "GTD", "FOK", "FAK"]);
const MAX_LOG = 100_000;

/** The venue's record of one order (seeded, resting, filled, cancelled or killed). */
export interface PaperOrder {
  readonly id: string;
  readonly token_id: string;
  readonly condition_id: string;
  readonly outcome: string;
  readonly side: BookSide;
  /** Limit price, 10^-6 units. */
  readonly price: bigint;
  /** Shares, 10^-6 units. */
  readonly original_size: bigint;
  filled_size: bigint;
  /** USDC, 10^-6 units, at execution prices. */
  filled_usdc: bigint;
  status: VenueOrderStatus;
  readonly order_type: OrderType;
  /** Unix seconds, 0 for none. */
  readonly expiration: number;
  /** Who placed it: the API key (owner) for the simulator, or PAPER_BOOK_OWNER for seeded levels. */
  readonly owner: string;
  readonly maker: string;
  readonly created_at: number;
}

export interface PaperFill {
  taker_order_id: string;
  maker_order_id: string;
  token_id: string;
  price: bigint;
  size: bigint;
  usdc: bigint;
  at: number;
}

export interface PaperCancel {
  order_id: string;
  /** cancel: asked for; expired: GTD expiry; killed: FOK/FAK remainder. */
  reason: "cancel" | "expired" | "killed";
  remaining: bigint;
  at: number;
}

export type CancelOutcome =
  | { kind: "cancelled"; order: PaperOrder }
  /** Already cancelled, filled or killed: nothing left to cancel. */
  | { kind: "done"; order: PaperOrder }
  | { kind: "not_found" };

export interface SubmitInput {
  order: OrderMessage;
  order_type: OrderType;
  /** Unix seconds as a decimal string; "0" for none. Only GTD orders expire. */
  expiration: string;
  owner: string;
  /** The order's id as orderIdFor answered it for this same message, when the caller has it (the simulator): not hashed again. */
  venue_order_id?: string;
}

/**
 * An order that rested on this venue before a restart, as the service recorded it (docs/decisions.md,
 * "The paper venue restores its resting orders"): plain data, the venue knows nothing of where it comes from.
 */
export interface RestingOrderRecord {
  /** The id the venue gave it when it was posted (its EIP-712 hash). */
  venue_order_id: string;
  /** The order's EIP-712 message as it was posted: token, side, price and size come from it, as in submit. */
  order: OrderMessage;
  order_type: OrderType;
  /** Unix seconds as a decimal string; "0" for none. Only GTD orders expire. */
  expiration: string;
  /** USDC already filled, 10^-6 units (the service's filled amount). */
  filled_usdc: bigint;
  /** The owner the order is recorded under. */
  owner: string;
  /** When it was posted, epoch milliseconds: restored orders keep this time priority among themselves. */
  created_at: number;
}

export interface RestoreReport {
  /** Venue order ids now resting again (or recorded as matched when nothing was left of them). */
  restored: string[];
  /** Records not restored, with the reason. */
  skipped: { venue_order_id: string; reason: string }[];
  /** Seeded orders taken off the books because a restored order crossed them. */
  withdrawn: number;
}

export interface PaperVenueOptions {
  /** Chain id of the EIP-712 domain used for order ids (default 137). */
  chainId?: number;
  /** Clock, epoch milliseconds (tests). */
  now?: () => number;
  /** Levels per side in book snapshots (default 50). */
  bookDepth?: number;
  name?: string;
  /** Told of every fill as it happens (the simulator records trades from them). */
  onFill?: (fill: PaperFill) => void;
  /** Told of every GTD order that leaves its book expired, when it leaves (the simulator's price_change). */
  onExpire?: (order: PaperOrder) => void;
}

export class PaperVenue implements Venue {
  readonly name: string;
  readonly chainId: number;
  private readonly now: () => number;
  private readonly depth: number;
  private readonly onFill?: (fill: PaperFill) => void;
  private readonly onExpire?: (order: PaperOrder) => void;
  private readonly markets: readonly Market[];
  private readonly byCondition = new Map<string, Market>();
  private readonly byToken = new Map<string, { market: Market; outcome: string }>();
  private readonly books = new Map<string, TokenBook>();
  private readonly lastTrade = new Map<string, string | null>();
  private readonly orders = new Map<string, PaperOrder>();
  readonly fills: PaperFill[] = [];
  readonly cancels: PaperCancel[] = [];

  constructor(markets: Market[], books?: Map<string, InitialBook> | Record<string, InitialBook>, opts: PaperVenueOptions = {}) {
    this.name = opts.name ?? "paper";
    this.chainId = opts.chainId ?? 137;
    this.now = opts.now ?? Date.now;
    this.depth = opts.bookDepth ?? 50;
    this.onFill = opts.onFill;
    this.onExpire = opts.onExpire;
    this.markets = Object.freeze([...markets]);
    const initial = books instanceof Map ? books : new Map(Object.entries(books ?? {}));
    for (const m of markets) {
      this.byCondition.set(m.condition_id.toLowerCase(), m);
      for (const t of m.tokens) {
        if (this.byToken.has(t.token_id)) throw new Error(`duplicate token id ${t.token_id}`);
        this.byToken.set(t.token_id, { market: m, outcome: t.outcome });
        const book = new TokenBook(t.token_id);
        this.books.set(t.token_id, book);
        const init = initial.get(t.token_id);
        this.lastTrade.set(t.token_id, init?.last_trade_price ?? null);
        if (init) {
          for (const [levels, side] of [
            [init.bids, "buy"],
            [init.asks, "sell"],
          ] as const) {
            for (const l of levels) {
              this.seed(m, t.token_id, t.outcome, side, toUnits(l.price, PRICE_DECIMALS), toUnits(l.size, SIZE_DECIMALS), book);
            }
          }
        }
      }
    }
  }

  /** Loads a markets file (docs/architecture.md#the-markets-file). */
  static fromFile(path: string, opts?: PaperVenueOptions): PaperVenue {
    const { markets, books } = loadMarketsFile(path);
    return new PaperVenue(markets, books, opts);
  }

  /** From markets-file entries already in memory. */
  static fromEntries(entries: unknown, opts?: PaperVenueOptions, source = "(inline)"): PaperVenue {
    const { markets, books } = parseMarkets(entries, source);
    return new PaperVenue(markets, books, opts);
  }

  // ------------------------------------------------------------------ synchronous engine API

  marketForToken(tokenId: string): Market | null {
    return this.byToken.get(tokenId)?.market ?? null;
  }

  marketByCondition(conditionId: string): Market | null {
    return this.byCondition.get(conditionId.toLowerCase()) ?? null;
  }

  allMarkets(): readonly Market[] {
    return this.markets;
  }

  /** A book snapshot, best first, of the top `depth` levels (all of them by default), or null for an unknown token. */
  bookSnapshot(tokenId: string, depth = this.depth): OrderBook | null {
    const book = this.books.get(tokenId);
    if (!book) return null;
    const now = this.now();
    this.expire(book, now);
    const snap = book.snapshot(depth);
    return {
      token_id: tokenId,
      bids: snap.bids as OrderBook["bids"],
      asks: snap.asks as OrderBook["asks"],
      last_trade_price: this.lastTrade.get(tokenId) ?? null,
      timestamp_ms: now,
    };
  }

  /**
   * One token's levels to read one at a time (the simulator's price_change deltas), after expiring what
   * is due, as a snapshot would; null for an unknown token. Read it before the book changes again.
   */
  bookLevels(tokenId: string): BookLevels | null {
    const book = this.books.get(tokenId);
    if (!book) return null;
    this.expire(book, this.now());
    return book;
  }

  /** Every level of a book (for the simulator's wire answer), best first. */
  fullBook(tokenId: string): OrderBook | null {
    return this.bookSnapshot(tokenId, Number.MAX_SAFE_INTEGER);
  }

  order(id: string): PaperOrder | undefined {
    const rec = this.orders.get(id);
    if (rec && rec.status === "live" && rec.expiration > 0) {
      const book = this.books.get(rec.token_id);
      if (book) this.expire(book, this.now());
    }
    return rec;
  }

  /** Number of orders resting on all books (seeded levels included). */
  restingCount(): number {
    let n = 0;
    for (const b of this.books.values()) n += b.size;
    return n;
  }

  /** The venue order id an order would get (its EIP-712 hash), or null when the message is malformed. */
  orderIdFor(order: OrderMessage): string | null {
    if (validateOrderMessage(order)) return null;
    const m = this.byToken.get(canonicalUint(order.tokenId))?.market;
    try {
      return orderHash(order, { chainId: this.chainId, negRisk: m?.neg_risk ?? false, version: m?.version });
    } catch {
      return null;
    }
  }

  /** Validates, matches and (for GTC/GTD) rests an order. Refusals are { ok: false, error }. */
  submit(input: SubmitInput): PostResult {
    const { order } = input;
    const bad = validateOrderMessage(order);
    if (bad) return { ok: false, error: bad };
    if (!ORDER_TYPES.has(input.order_type)) return { ok: false, error: `unknown order type ${String(input.order_type)}` };
    const tokenId = canonicalUint(order.tokenId);
    const entry = this.byToken.get(tokenId);
    if (!entry) return { ok: false, error: `no market for token ${order.tokenId}` };
    const { market } = entry;
    if (market.closed || !market.active) return { ok: false, error: "market is closed" };
    if (!market.accepting_orders) return { ok: false, error: "market is not accepting orders" };

    const terms = orderTerms(order);
    if ("error" in terms) return { ok: false, error: terms.error };
    const { side, price, size } = terms;
    const tick = tickUnits(market);
    if (price < tick || price > PRICE_ONE - tick) {
      return { ok: false, error: `price ${fromUnits(price, PRICE_DECIMALS)} is outside [${market.tick_size}, ${fromUnits(PRICE_ONE - tick, PRICE_DECIMALS)}]` };
    }
    if (price % tick !== 0n) {
      return { ok: false, error: `price ${fromUnits(price, PRICE_DECIMALS)} breaks the minimum tick size rule: ${market.tick_size}` };
    }
    const minSize = minSizeUnits(market);
    if (size < minSize) {
      return { ok: false, error: `size ${fromUnits(size, SIZE_DECIMALS)} is lower than the minimum: ${market.min_order_size}` };
    }
    const now = this.now();
    const nowSec = Math.floor(now / 1000);
    let expiration = 0;
    if (input.order_type === "GTD") {
      if (typeof input.expiration !== "string" || !UINT_RE.test(input.expiration)) return { ok: false, error: "GTD order needs an expiration" };
      expiration = Number(input.expiration);
      if (!(expiration > nowSec)) return { ok: false, error: "GTD order expiration must be in the future" };
    }

    let id: string;
    try {
      id = input.venue_order_id ?? orderHash({ ...order, tokenId }, { chainId: this.chainId, negRisk: market.neg_risk, version: market.version });
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
    if (this.orders.has(id)) return { ok: false, error: "order already exists" };

    const book = this.books.get(tokenId)!;
    this.expire(book, now);
    const rec: PaperOrder = {
      id,
      token_id: tokenId,
      condition_id: market.condition_id,
      outcome: entry.outcome,
      side,
      price,
      original_size: size,
      filled_size: 0n,
      filled_usdc: 0n,
      status: "live",
      order_type: input.order_type,
      expiration,
      owner: input.owner,
      maker: order.maker,
      created_at: now,
    };
    this.orders.set(id, rec);

    if (input.order_type === "FOK" && book.available(side, price, size) < size) {
      rec.status = "unmatched";
      this.log(this.cancels, { order_id: id, reason: "killed", remaining: size, at: now });
      return { ok: true, venue_order_id: id, status: "unmatched", filled_usdc: "0" };
    }

    const { fills, remaining } = book.match(side, price, size);
    const tradeIds: string[] = [];
    for (const f of fills) {
      const notional = (f.size * f.price) / PRICE_ONE;
      rec.filled_size += f.size;
      rec.filled_usdc += notional;
      const maker = this.orders.get(f.maker.id);
      if (maker) {
        maker.filled_size += f.size;
        maker.filled_usdc += notional;
        if (f.maker.remaining === 0n) maker.status = "matched";
      }
      const fill: PaperFill = { taker_order_id: id, maker_order_id: f.maker.id, token_id: tokenId, price: f.price, size: f.size, usdc: notional, at: now };
      this.log(this.fills, fill);
      this.onFill?.(fill);
      tradeIds.push(this.reportFill(fill, maker, rec));
    }
    if (fills.length) this.lastTrade.set(tokenId, fromUnits(fills[fills.length - 1].price, PRICE_DECIMALS));

    if (remaining === 0n) {
      rec.status = "matched";
    } else if (input.order_type === "GTC" || input.order_type === "GTD") {
      book.add({ id, side, price, size: remaining, expiresAt: expiration });
      rec.status = "live";
    } else {
      // FAK remainder (FOK cannot get here with a remainder).
      rec.status = rec.filled_size > 0n ? "matched" : "unmatched";
      this.log(this.cancels, { order_id: id, reason: "killed", remaining, at: now });
    }
    const result: PostResult = { ok: true, venue_order_id: id, status: rec.status, filled_usdc: rec.filled_usdc === 0n ? "0" : fromUnits(rec.filled_usdc) };
    if (tradeIds.length) Object.assign(result, { filled_shares: fromUnits(rec.filled_size, SIZE_DECIMALS), trade_ids: tradeIds });
    return result;
  }

  /**
   * Puts orders that rested here before a restart back on their books, without matching: each rests
   * with its size less what filled (the filled USDC at its own price, shares rounded up, so it can never
   * trade past what was signed), behind the seeded levels and in the records' created order. The last trade price is not restored. A record
   * that would cross an order restored before it is skipped (two resting orders never cross); a seeded
   * level a restored order crosses is taken off the book (it was taken before the restart, or the order
   * would not have rested). Call it once, before the first order is submitted.
   */
  restore(records: readonly RestingOrderRecord[]): RestoreReport {
    const report: RestoreReport = { restored: [], skipped: [], withdrawn: 0 };
    // Oldest first; records posted in the same millisecond keep the order they were given in (a stable sort).
    const sorted = [...records].sort((a, b) => a.created_at - b.created_at);
    /** Per token, the best restored bid and ask resting so far. */
    const best = new Map<string, { bid: bigint | null; ask: bigint | null }>();
    for (const r of sorted) {
      const skip = (reason: string) => report.skipped.push({ venue_order_id: r.venue_order_id, reason });
      if (this.orders.has(r.venue_order_id)) {
        skip("already known");
        continue;
      }
      const bad = validateOrderMessage(r.order);
      if (bad) {
        skip(bad);
        continue;
      }
      if (r.order_type !== "GTC" && r.order_type !== "GTD") {
        skip(`a ${String(r.order_type)} order does not rest`);
        continue;
      }
      let expiration = 0;
      if (r.order_type === "GTD") {
        if (typeof r.expiration !== "string" || !UINT_RE.test(r.expiration)) {
          skip("GTD order needs an expiration");
          continue;
        }
        expiration = Number(r.expiration);
      }
      const tokenId = BigInt(r.order.tokenId).toString();
      const entry = this.byToken.get(tokenId);
      if (!entry) {
        skip(`no market for token ${r.order.tokenId}`);
        continue;
      }
      const terms = orderTerms(r.order);
      if ("error" in terms) {
        skip(terms.error);
        continue;
      }
      const { side, price, size } = terms;
      const sides = best.get(tokenId) ?? { bid: null, ask: null };
      if (side === "buy" ? sides.ask !== null && price >= sides.ask : sides.bid !== null && price <= sides.bid) {
        skip("crosses an order restored before it");
        continue;
      }
      // Shares filled, from the USDC filled at the order's own price, rounded up: an order that filled
      // at a better price as a taker rests with no more than its signed maker amount left.
      const filledShares = min(size, (r.filled_usdc * PRICE_ONE + price - 1n) / price);
      const remaining = size - filledShares;
      const rec: PaperOrder = {
        id: r.venue_order_id,
        token_id: tokenId,
        condition_id: entry.market.condition_id,
        outcome: entry.outcome,
        side,
        price,
        original_size: size,
        filled_size: filledShares,
        filled_usdc: r.filled_usdc,
        status: remaining > 0n ? "live" : "matched",
        order_type: r.order_type,
        expiration,
        owner: r.owner,
        maker: r.order.maker,
        created_at: r.created_at,
      };
      this.orders.set(rec.id, rec);
      if (remaining > 0n) {
        this.books.get(tokenId)!.add({ id: rec.id, side, price, size: remaining, expiresAt: expiration });
        if (side === "buy") sides.bid = sides.bid === null || price > sides.bid ? price : sides.bid;
        else sides.ask = sides.ask === null || price < sides.ask ? price : sides.ask;
        best.set(tokenId, sides);
      }
      report.restored.push(rec.id);
    }
    // Seeded levels that a restored order crosses leave the book, with no trade.
    if (best.size) {
      for (const rec of this.orders.values()) {
        if (rec.owner !== PAPER_BOOK_OWNER || rec.status !== "live") continue;
        const sides = best.get(rec.token_id);
        if (!sides) continue;
        const crossed = rec.side === "sell" ? sides.bid !== null && rec.price <= sides.bid : sides.ask !== null && rec.price >= sides.ask;
        if (!crossed) continue;
        this.books.get(rec.token_id)?.remove(rec.id);
        rec.status = "cancelled";
        report.withdrawn++;
      }
      // GTD orders that expired while the service was down leave now, as expired.
      const now = this.now();
      for (const tokenId of best.keys()) this.expire(this.books.get(tokenId)!, now);
    }
    return report;
  }

  /** Cancels a resting order. A filled, killed or cancelled order is "done". */
  cancel(id: string): CancelOutcome {
    const rec = this.order(id);
    if (!rec) return { kind: "not_found" };
    if (rec.status !== "live") return { kind: "done", order: rec };
    const book = this.books.get(rec.token_id);
    const resting = book?.remove(id);
    rec.status = "cancelled";
    this.log(this.cancels, { order_id: id, reason: "cancel", remaining: resting?.remaining ?? 0n, at: this.now() });
    return { kind: "cancelled", order: rec };
  }

  // ------------------------------------------------------------------ Venue port

  async listMarkets(opts?: CallOptions): Promise<Market[]> {
    checkSignal(opts);
    return [...this.markets];
  }

  async getMarketByToken(tokenId: string, opts?: CallOptions): Promise<Market | null> {
    checkSignal(opts);
    return this.byToken.get(tokenId)?.market ?? null;
  }

  async getBook(tokenId: string, opts?: CallOptions): Promise<OrderBook | null> {
    checkSignal(opts);
    return this.bookSnapshot(tokenId);
  }

  async postSignedOrder(req: PostSignedOrder, opts?: CallOptions): Promise<PostResult> {
    checkSignal(opts);
    // 65 bytes (types 0-2) or the 317-byte ERC-7739 wrapper of a deposit wallet (type 3).
    if (typeof req.signature !== "string" || !/^0x(?:[0-9a-fA-F]{130}|[0-9a-fA-F]{634})$/.test(req.signature)) {
      return { ok: false, error: "invalid order signature" };
    }
    const owner = req.owner ?? req.venue_auth?.api_key ?? req.order?.signer ?? "";
    return this.submit({ order: req.order, order_type: req.order_type, expiration: req.expiration, owner });
  }

  async placeDelegatedOrder(req: PlaceDelegatedOrder, opts?: CallOptions): Promise<PostResult> {
    checkSignal(opts);
    if (!validCredentials(req.credentials)) return { ok: false, error: "invalid credentials" };
    return this.submit({ order: req.order, order_type: req.order_type, expiration: req.expiration, owner: req.credentials.api_key });
  }

  async cancelOrder(req: { venue_order_id: string; credentials?: VenueCredentials }, opts?: CallOptions): Promise<CancelResult> {
    checkSignal(opts);
    if (req.credentials !== undefined && !validCredentials(req.credentials)) return { ok: false, error: "invalid credentials" };
    const out = this.cancel(req.venue_order_id);
    if (out.kind === "not_found") return { ok: false, error: "order not found" };
    return out.kind === "done" ? { ok: true, already: true } : { ok: true };
  }

  async cancelOrders(
    req: { venue_order_ids: string[]; credentials?: VenueCredentials },
    opts?: CallOptions,
  ): Promise<Record<string, CancelResult>> {
    const out: Record<string, CancelResult> = {};
    for (const id of req.venue_order_ids) out[id] = await this.cancelOrder({ venue_order_id: id, credentials: req.credentials }, opts);
    return out;
  }

  async getOrder(req: { venue_order_id: string; credentials?: VenueCredentials }, opts?: CallOptions): Promise<VenueOrderState | null> {
    checkSignal(opts);
    const rec = this.order(req.venue_order_id);
    if (!rec) return null;
    return { venue_order_id: rec.id, status: rec.status, filled_usdc: fromUnits(rec.filled_usdc) };
  }

  async confirmCredentials(credentials: VenueCredentials, opts?: CallOptions): Promise<boolean> {
    checkSignal(opts);
    return validCredentials(credentials);
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}

  // ------------------------------------------------------------------ internals

  private seed(m: Market, tokenId: string, outcome: string, side: BookSide, price: bigint, size: bigint, book: TokenBook): void {
    const id = `0x${randomBytes(32).toString("hex")}`;
    this.orders.set(id, {
      id,
      token_id: tokenId,
      condition_id: m.condition_id,
      outcome,
      side,
      price,
      original_size: size,
      filled_size: 0n,
      filled_usdc: 0n,
      status: "live",
      order_type: "GTC",
      expiration: 0,
      owner: PAPER_BOOK_OWNER,
      maker: "0x0000000000000000000000000000000000000000",
      created_at: this.now(),
    });
    book.add({ id, side, price, size });
  }

  private expire(book: TokenBook, nowMs: number): void {
    const removed = book.purgeExpired(Math.floor(nowMs / 1000));
    for (const o of removed) {
      const rec = this.orders.get(o.id);
      if (rec && rec.status === "live") rec.status = "cancelled";
      this.log(this.cancels, { order_id: o.id, reason: "expired", remaining: o.remaining, at: nowMs });
      if (rec) this.onExpire?.(rec);
      if (rec && rec.owner !== PAPER_BOOK_OWNER) {
        this.sink?.report({ kind: "expired", ref: { venueOrderId: o.id }, source: "paper", sizeMatchedUnits: rec.filled_size, at: new Date(nowMs) });
      }
    }
  }

  private sink: VenueReportSink | null = null;
  private tradeSeq = 0;

  /**
   * Reports every fill of an order placed here (the resting maker's and the incoming taker's) and every
   * GTD expiry to `sink`, in-process, as the venue's user channel or the chain would: so agent X's
   * resting buy, filled by agent Y's sell, becomes filled in the service (docs/decisions.md).
   */
  reportTo(sink: VenueReportSink): void {
    this.sink = sink;
  }

  /** Names the trade (its id is in the placement's answer too) and reports it to the sink, if any. */
  private reportFill(fill: PaperFill, maker: PaperOrder | undefined, taker: PaperOrder): string {
    const tradeId = `paper_${fill.at.toString(36)}_${(++this.tradeSeq).toString(36)}_${randomBytes(4).toString("hex")}`;
    if (!this.sink) return tradeId;
    const at = new Date(fill.at);
    const price = fromUnits(fill.price, PRICE_DECIMALS);
    for (const o of [maker, taker]) {
      if (!o || o.owner === PAPER_BOOK_OWNER) continue;
      this.sink.report({
        kind: "fill",
        ref: { orderHash: o.id as `0x${string}`, venueOrderId: o.id },
        source: "paper",
        fillKey: `trade:${tradeId}`,
        tradeId,
        sharesUnits: fill.size,
        usdcUnits: fill.usdc,
        feeUnits: 0n,
        price,
        status: "confirmed",
        at,
      });
    }
    return tradeId;
  }

  private log<T>(arr: T[], item: T): void {
    arr.push(item);
    if (arr.length > MAX_LOG) arr.splice(0, arr.length - MAX_LOG / 2);
  }
}

/** Markets' tick sizes and minimum sizes in units, by the text they were read from (read again when it changes). */
const tickCache = new WeakMap<Market, { text: string; units: bigint }>();
const minSizeCache = new WeakMap<Market, { text: string; units: bigint }>();

function cachedUnits(cache: WeakMap<Market, { text: string; units: bigint }>, market: Market, text: string, decimals: number): bigint {
  const c = cache.get(market);
  if (c && c.text === text) return c.units;
  const units = toUnits(text, decimals);
  cache.set(market, { text, units });
  return units;
}

function tickUnits(market: Market): bigint {
  return cachedUnits(tickCache, market, market.tick_size, PRICE_DECIMALS);
}

function minSizeUnits(market: Market): bigint {
  return cachedUnits(minSizeCache, market, market.min_order_size, SIZE_DECIMALS);
}

function checkSignal(opts?: CallOptions): void {
  if (opts?.signal?.aborted) throw new VenueUnavailableError("venue call aborted", { cause: opts.signal.reason });
}

/** Side, limit price (10^-6 units) and size (shares, 10^-6 units) of a well-formed order message, or why it has none. */
function orderTerms(order: OrderMessage): { side: BookSide; price: bigint; size: bigint } | { error: string } {
  const makerAmount = BigInt(order.makerAmount);
  const takerAmount = BigInt(order.takerAmount);
  if (makerAmount <= 0n || takerAmount <= 0n) return { error: "makerAmount and takerAmount must be positive" };
  const side: BookSide = order.side === 0 ? "buy" : "sell";
  // Both amounts are 6-decimal units, so price (10^-6 units) = usdc * 10^6 / shares.
  const usdc = side === "buy" ? makerAmount : takerAmount;
  const size = side === "buy" ? takerAmount : makerAmount;
  if ((usdc * PRICE_ONE) % size !== 0n) return { error: "order price has more than 6 decimals" };
  return { side, price: (usdc * PRICE_ONE) / size, size };
}

/** A decimal uint string (digits only) without leading zeros, as BigInt(s).toString() gives it. */
function canonicalUint(s: string): string {
  return s.length > 1 && s.charCodeAt(0) === 48 ? BigInt(s).toString() : s;
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
