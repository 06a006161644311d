/**
 * Markets as the venue lists them (docs/architecture.md#the-markets-file), one item per outcome token, with the top of
 * its order book. Public: no API key is needed.
 *
 * Pagination: `?limit=` (default 50, at most 200) and an opaque `?cursor=` that holds an offset
 * into the venue's market list, after the filters. The list is in the venue's order (markets in
 * the order of the markets file, tokens in their order inside the market), so a cursor stays valid
 * as long as the venue's list does not change.
 */
import pLimit from "p-limit";
import { InvalidRequestError, NotFoundError } from "../../errors/errors.ts";
import { ProblemError } from "../../errors/problem-error.ts";
import { VenueUnavailableProblem } from "../../errors/venue-unavailable.ts";
import { decimalPlaces, fromUnits, toUnits } from "../../domain/units.ts";
import type { Market, Venue } from "../../venues/venue.ts";
import type { BookModel, MarketModel, MarketPage } from "./model.ts";

const UINT256_MAX = (1n << 256n) - 1n;
/** Book reads in flight at once for one page (the CLOB adapter makes one HTTP call per token). */
const BOOK_CONCURRENCY = 8;

export interface MarketFilters {
  category?: string;
  active?: boolean;
  closed?: boolean;
  accepting_orders?: boolean;
  /** Words that must all appear in the question (case-insensitive). */
  q?: string;
}

type Token = { market: Market; token_id: string; outcome: string };

export class MarketService {
  constructor(
    private readonly venue: Venue,
    private readonly opts: { timeoutMs: number } = { timeoutMs: 3000 },
  ) {}

  async list(query: { limit: number; cursor?: string } & MarketFilters): Promise<MarketPage> {
    const offset = decodeOffset(query.cursor);
    const markets = await this.call((signal) => this.venue.listMarkets({ signal }));
    const category = query.category?.toLowerCase();
    const words = (query.q ?? "").toLowerCase().split(/\s+/).filter(Boolean);
    const tokens: Token[] = [];
    for (const market of markets) {
      if (category !== undefined && market.category.toLowerCase() !== category) continue;
      if (query.active !== undefined && market.active !== query.active) continue;
      if (query.closed !== undefined && market.closed !== query.closed) continue;
      if (query.accepting_orders !== undefined && market.accepting_orders !== query.accepting_orders) continue;
      if (words.length && !words.every((w) => market.question.toLowerCase().includes(w))) continue;
      for (const t of market.tokens) tokens.push({ market, token_id: t.token_id, outcome: t.outcome });
    }
    const page = tokens.slice(offset, offset + query.limit);
    const limit = pLimit(BOOK_CONCURRENCY);
    const data = await Promise.all(page.map((t) => limit(() => this.view(t))));
    const next = offset + page.length;
    return { data, next_cursor: next < tokens.length ? encodeOffset(next) : null };
  }

  async get(marketId: string): Promise<MarketModel> {
    const id = BigInt(marketId);
    if (id > UINT256_MAX) {
      throw new InvalidRequestError("market_id is not a uint256", [{ path: "/params/market_id", message: "must be at most 2^256 - 1" }]);
    }
    const tokenId = id.toString(); // canonical, without leading zeros
    const market = await this.call((signal) => this.venue.getMarketByToken(tokenId, { signal }));
    const token = market?.tokens.find((t) => t.token_id === tokenId);
    if (!market || !token) throw new NotFoundError("market");
    return this.view({ market, token_id: tokenId, outcome: token.outcome });
  }

  /** GET /v1/markets/{id}/book: the token's book depth, best levels first, at most `depth` per side. */
  async book(marketId: string, depth: number): Promise<BookModel> {
    const { tokenId } = await this.token(marketId);
    const book = await this.call((signal) => this.venue.getBook(tokenId, { signal }));
    if (!book) throw new NotFoundError("book");
    return {
      market_id: tokenId,
      bids: book.bids.slice(0, depth).map((l) => ({ price: l.price, size: l.size })),
      asks: book.asks.slice(0, depth).map((l) => ({ price: l.price, size: l.size })),
      bid_levels: book.bids.length,
      ask_levels: book.asks.length,
      last_trade_price: book.last_trade_price,
      timestamp: new Date(book.timestamp_ms).toISOString(),
    };
  }

  private async token(marketId: string): Promise<{ tokenId: string; market: Market; outcome: string }> {
    const id = BigInt(marketId);
    if (id > UINT256_MAX) {
      throw new InvalidRequestError("market_id is not a uint256", [{ path: "/params/market_id", message: "must be at most 2^256 - 1" }]);
    }
    const tokenId = id.toString();
    const market = await this.call((signal) => this.venue.getMarketByToken(tokenId, { signal }));
    const token = market?.tokens.find((t) => t.token_id === tokenId);
    if (!market || !token) throw new NotFoundError("market");
    return { tokenId, market, outcome: token.outcome };
  }

  private async view({ market, token_id, outcome }: Token): Promise<MarketModel> {
    const book = await this.call((signal) => this.venue.getBook(token_id, { signal }));
    const best_bid = book?.bids[0]?.price ?? null;
    const best_ask = book?.asks[0]?.price ?? null;
    return {
      market_id: token_id,
      condition_id: market.condition_id,
      question: market.question,
      outcome,
      category: market.category,
      end_date: market.end_date,
      active: market.active,
      closed: market.closed,
      accepting_orders: market.accepting_orders,
      neg_risk: market.neg_risk,
      version: market.version ?? "v1",
      tick_size: market.tick_size,
      min_order_size: market.min_order_size,
      best_bid,
      best_ask,
      mid: best_bid !== null && best_ask !== null ? midpoint(best_bid, best_ask) : null,
      last_trade_price: book?.last_trade_price ?? null,
    };
  }

  /** A venue call under the venue timeout; an unreachable venue is a 503. */
  private async call<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    try {
      return await fn(AbortSignal.timeout(this.opts.timeoutMs));
    } catch (error) {
      // Unreachable, timed out, or refused us (a 429 or a gateway's 403): nothing a client can fix.
      if (error instanceof ProblemError) throw error;
      throw new VenueUnavailableProblem("the venue did not answer with its markets; try again");
    }
  }
}

/** (a + b) / 2 exactly, as a plain decimal string: one more decimal place than the inputs always suffices. */
export function midpoint(a: string, b: string): string {
  const decimals = Math.max(decimalPlaces(a), decimalPlaces(b)) + 1;
  return fromUnits((toUnits(a, decimals) + toUnits(b, decimals)) / 2n, decimals);
}

const CURSOR_RE = /^o:(0|[1-9][0-9]{0,8})$/;

export function encodeOffset(offset: number): string {
  return Buffer.from(`o:${offset}`).toString("base64url");
}

export function decodeOffset(cursor: string | undefined): number {
  if (cursor === undefined || cursor === "") return 0;
  const m = CURSOR_RE.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!m) throw new InvalidRequestError("cursor is not valid", [{ path: "/query/cursor", message: "not a cursor from this API" }]);
  return Number(m[1]);
}
