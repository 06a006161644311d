import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { InvalidRequestError, NotFoundError } from "../../errors/errors.ts";
import { problemResponses } from "../../errors/problem-model.ts";
import { VenueUnavailableProblem } from "../../errors/venue-unavailable.ts";
import { PageQuery } from "../../http/pagination.ts";

/** A decimal uint256 (the venue's outcome token id); values above 2^256 − 1 are refused by the service. */
export const MARKET_ID_PATTERN = "^[0-9]{1,78}$";

export const MarketIdParam = t.Object({
  market_id: t.String({
    pattern: MARKET_ID_PATTERN,
    description: "outcome token id, a decimal uint256 string",
    examples: ["62116011324642788450213843133477763167049099528131416799711191854278105821744"],
  }),
});

const BoolText = t.String({ pattern: "^(true|false)$", description: "true or false" });

export const MarketsQuery = t.Object(
  {
    ...PageQuery,
    category: t.Optional(t.String({ minLength: 1, maxLength: 100, description: "only markets of this category (case-insensitive)" })),
    active: t.Optional(BoolText),
    closed: t.Optional(BoolText),
    accepting_orders: t.Optional(BoolText),
    q: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "words that must all appear in the question (case-insensitive)" })),
  },
  { additionalProperties: false },
);
export type MarketsQuery = typeof MarketsQuery.static;

const Price = t.Union([t.String({ description: "decimal price" }), t.Null()]);

/** One outcome token of a market (docs/architecture.md#the-markets-file). */
export const MarketModel = t.Object(
  {
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
  },
  { examples: [{"market_id": "62116011324642788450213843133477763167049099528131416799711191854278105821744", "condition_id": "0xd71d3950174e6699b8a8faef8001b896932cb69636e6e0bb74dfc1173a3452d3", "question": "Will the Democratic nominee win the 2028 US presidential election?", "outcome": "Yes", "category": "politics", "end_date": "2028-11-07T00:00:00Z", "active": true, "closed": false, "accepting_orders": true, "neg_risk": false, "version": "v1", "tick_size": "0.01", "min_order_size": "5", "best_bid": "0.48", "best_ask": "0.5", "mid": "0.49", "last_trade_price": "0.49"}] },
);
export type MarketModel = typeof MarketModel.static;

export const MarketPage = t.Object(
  { data: t.Array(MarketModel), next_cursor: t.Union([t.String(), t.Null()]) },
  { examples: [{ data: [{"market_id": "62116011324642788450213843133477763167049099528131416799711191854278105821744", "condition_id": "0xd71d3950174e6699b8a8faef8001b896932cb69636e6e0bb74dfc1173a3452d3", "question": "Will the Democratic nominee win the 2028 US presidential election?", "outcome": "Yes", "category": "politics", "end_date": "2028-11-07T00:00:00Z", "active": true, "closed": false, "accepting_orders": true, "neg_risk": false, "version": "v1", "tick_size": "0.01", "min_order_size": "5", "best_bid": "0.48", "best_ask": "0.5", "mid": "0.49", "last_trade_price": "0.49"}], next_cursor: "WzFd" }] },
);

const badQuery = new InvalidRequestError("/query/active: Expected string to match '^(true|false)$'", [{ path: "/query/active", message: "Expected string to match '^(true|false)$'" }]);
/** OpenAPI responses of the market routes beside their 200 (docs/api.md#markets). */
export const marketsResponses = {
  list: problemResponses(badQuery, new VenueUnavailableProblem()),
  get: problemResponses(new InvalidRequestError("/params/market_id: Expected string to match '^[0-9]{1,78}$'", [{ path: "/params/market_id", message: "Expected string to match '^[0-9]{1,78}$'" }]), new NotFoundError("market"), new VenueUnavailableProblem()),
};
export type MarketPage = typeof MarketPage.static;

const Level = t.Object({ price: t.String({ description: "USDC per share, decimal" }), size: t.String({ description: "shares at this price, decimal" }) });

/** GET /v1/markets/{market_id}/book: the book's depth from the venue. */
export const BookModel = t.Object(
  {
    market_id: t.String(),
    bids: t.Array(Level, { description: "best (highest) first" }),
    asks: t.Array(Level, { description: "best (lowest) first" }),
    bid_levels: Type.Integer({ description: "levels on the bid side in all (the answer holds at most `depth`)" }),
    ask_levels: Type.Integer(),
    last_trade_price: Price,
    timestamp: t.String({ description: "when the venue took the snapshot" }),
  },
  { examples: [{ market_id: "62116011324642788450213843133477763167049099528131416799711191854278105821744", bids: [{ price: "0.48", size: "1200" }], asks: [{ price: "0.5", size: "900" }], bid_levels: 1, ask_levels: 1, last_trade_price: "0.49", timestamp: "2026-11-27T15:00:00.000Z" }] },
);
export type BookModel = typeof BookModel.static;

export const BookQuery = t.Object({ depth: t.Optional(t.Numeric({ minimum: 1, maximum: 500, description: "levels per side, 1-500 (default 50)" })) }, { additionalProperties: false });
