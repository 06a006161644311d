import { t } from "elysia";
import { PageQuery } from "../../http/pagination.ts";

/** A decimal uint256 (the venue's outcome token id); values above 2^256 − 1 are refused by the service. */
export const MARKET_ID_PATTERN = "^[0-9]{1,78}$";

export const MarketIdParam = t.Object({
  market_id: t.String({ pattern: MARKET_ID_PATTERN, description: "outcome token id, a decimal uint256 string" }),
});

const BoolText = t.String({ pattern: "^(true|false)$", description: "true or false" });

export const MarketsQuery = t.Object(
  {
    ...PageQuery,
    category: t.Optional(t.String({ minLength: 1, maxLength: 100, description: "only markets of this category (case-insensitive)" })),
    active: t.Optional(BoolText),
    closed: t.Optional(BoolText),
  },
  { additionalProperties: false },
);
export type MarketsQuery = typeof MarketsQuery.static;

const Price = t.Union([t.String({ description: "decimal price" }), t.Null()]);

/** One outcome token of a market (CONTRACT 11.4). */
export const MarketModel = t.Object({
  market_id: t.String({ description: "outcome token id (Polymarket token_id): the market_id of an order intent" }),
  condition_id: t.String(),
  question: t.String(),
  outcome: t.String(),
  category: t.String(),
  end_date: t.String(),
  active: t.Boolean(),
  closed: t.Boolean(),
  accepting_orders: t.Boolean(),
  neg_risk: t.Boolean(),
  version: t.Union([t.Literal("v1"), t.Literal("v2")], {
    description: "protocol version: v1 (CTF token ids, exchange domain version 2) or v2 (Protocol V2 position ids, ExchangeV3, domain version 3)",
  }),
  tick_size: t.String(),
  min_order_size: t.String({ description: "in shares" }),
  best_bid: Price,
  best_ask: Price,
  mid: t.Union([t.String({ description: "(best_bid + best_ask) / 2, exact" }), t.Null()]),
  last_trade_price: Price,
});
export type MarketModel = typeof MarketModel.static;

export const MarketPage = t.Object({ data: t.Array(MarketModel), next_cursor: t.Union([t.String(), t.Null()]) });
export type MarketPage = typeof MarketPage.static;
