/**
 * The venue simulator's answers in the CLOB V2 wire shapes the official client reads
 * (clob-client-v2 src/types/clob.ts: OpenOrder, Trade, MakerOrder, MarketDetails).
 */
import { fromUnits } from "../../domain/units.ts";
import { PRICE_DECIMALS, PRICE_ONE, SIZE_DECIMALS } from "../markets-file.ts";
import type { PaperOrder, PaperVenue } from "../paper/paper-venue.ts";
import type { Market } from "../venue.ts";

/** One match between an incoming (taker) order and one resting (maker) order. */
export interface SimTrade {
  id: string;
  taker_order_id: string;
  maker_order_id: string;
  token_id: string;
  /** Execution price, 10^-6 units. */
  price: bigint;
  /** Shares, 10^-6 units. */
  size: bigint;
  at_ms: number;
  transaction_hash: string;
  /** MATCHED, then MINED and CONFIRMED (or RETRYING and FAILED), as the user channel reports them; absent: CONFIRMED. */
  status?: "MATCHED" | "MINED" | "CONFIRMED" | "RETRYING" | "FAILED";
}

export function slug(q: string): string {
  return q
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 80);
}

/** GET /markets item and GET /markets/{condition_id}; `version` is the simulator's statement of the market's protocol. */
export function marketJson(m: Market, venue: PaperVenue) {
  return {
    condition_id: m.condition_id,
    question_id: m.condition_id,
    question: m.question,
    description: "",
    market_slug: slug(m.question),
    end_date_iso: m.end_date,
    game_start_time: null,
    active: m.active,
    closed: m.closed,
    archived: false,
    accepting_orders: m.accepting_orders,
    enable_order_book: true,
    minimum_order_size: Number(m.min_order_size),
    minimum_tick_size: Number(m.tick_size),
    neg_risk: m.neg_risk,
    version: m.version ?? "v1",
    category: m.category,
    tags: [m.category],
    tokens: m.tokens.map((t) => {
      const b = venue.bookSnapshot(t.token_id, 1);
      return { token_id: t.token_id, outcome: t.outcome, price: b?.last_trade_price ? Number(b.last_trade_price) : 0, winner: false };
    }),
  };
}

/** GET /clob-markets/{condition_id}: the compact MarketDetails the client caches tick size and neg-risk from. */
export function clobMarketJson(m: Market) {
  return {
    c: m.condition_id,
    t: m.tokens.map((t) => ({ t: t.token_id, o: t.outcome })),
    mts: Number(m.tick_size),
    nr: m.neg_risk,
    fd: { r: 0, e: 0, to: false },
    mbf: 0,
    tbf: 0,
    r: null,
    ao: m.accepting_orders,
    mos: Number(m.min_order_size),
  };
}

/** An order as GET /data/order/{id} and GET /data/orders answer it. */
export function orderJson(o: PaperOrder, tradeIds: readonly string[] = []) {
  return {
    id: o.id,
    status: `ORDER_STATUS_${o.status === "cancelled" ? "CANCELED" : o.status.toUpperCase()}`,
    owner: o.owner,
    maker_address: o.maker,
    market: o.condition_id,
    asset_id: o.token_id,
    side: o.side === "buy" ? "BUY" : "SELL",
    original_size: fromUnits(o.original_size, SIZE_DECIMALS),
    size_matched: fromUnits(o.filled_size, SIZE_DECIMALS),
    price: fromUnits(o.price, PRICE_DECIMALS),
    outcome: o.outcome,
    expiration: String(o.expiration),
    order_type: o.order_type,
    associate_trades: [...tradeIds],
    created_at: Math.floor(o.created_at / 1000),
    // Extension of the simulator: exact filled notional at execution prices.
    filled_usdc: fromUnits(o.filled_usdc),
  };
}

/** A trade as GET /data/trades answers it, seen from the side of `viewer` (an API key). */
export function tradeJson(t: SimTrade, venue: PaperVenue, viewer: string) {
  const taker = venue.order(t.taker_order_id);
  const maker = venue.order(t.maker_order_id);
  const market = venue.marketForToken(t.token_id);
  const outcome = taker?.outcome ?? maker?.outcome ?? "";
  const secs = String(Math.floor(t.at_ms / 1000));
  return {
    id: t.id,
    taker_order_id: t.taker_order_id,
    market: market?.condition_id ?? "",
    asset_id: t.token_id,
    side: taker?.side === "sell" ? "SELL" : "BUY",
    size: fromUnits(t.size, SIZE_DECIMALS),
    fee_rate_bps: "0",
    price: fromUnits(t.price, PRICE_DECIMALS),
    status: t.status ?? "CONFIRMED",
    match_time: secs,
    last_update: secs,
    outcome,
    bucket_index: 0,
    owner: taker?.owner ?? "",
    maker_address: taker?.maker ?? "",
    maker_orders: [
      {
        order_id: t.maker_order_id,
        owner: maker?.owner ?? "",
        maker_address: maker?.maker ?? "",
        matched_amount: fromUnits(t.size, SIZE_DECIMALS),
        price: fromUnits(t.price, PRICE_DECIMALS),
        fee_rate_bps: "0",
        asset_id: t.token_id,
        outcome: maker?.outcome ?? outcome,
        side: maker?.side === "sell" ? "SELL" : "BUY",
      },
    ],
    // As Polymarket: "" until the trade is broadcast (MATCHED), its transaction from MINED on.
    transaction_hash: t.status === "MATCHED" ? "" : t.transaction_hash,
    trader_side: taker?.owner === viewer ? "TAKER" : "MAKER",
    // Extension of the simulator: the exact notional of the match.
    usdc: fromUnits((t.size * t.price) / PRICE_ONE),
  };
}

/** A page of a cursor-paged list: `next_cursor` is the base64 offset, "LTE=" on the last page. */
export function page<T>(all: readonly T[], cursor: string | null, size: number, end: string): { limit: number; count: number; next_cursor: string; data: T[] } | null {
  let offset = 0;
  if (cursor && cursor !== "MA==") {
    try {
      offset = Number(atob(cursor));
    } catch {
      return null;
    }
    if (!Number.isInteger(offset) || offset < 0) return null;
  }
  const data = all.slice(offset, offset + size);
  const next = offset + size < all.length ? btoa(String(offset + size)) : end;
  return { limit: size, count: data.length, next_cursor: next, data };
}
