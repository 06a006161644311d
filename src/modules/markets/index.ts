/**
 * `GET /v1/markets` and `GET /v1/markets/:market_id` (docs/architecture.md#the-markets-file). Public routes: market data
 * is the venue's public data, so no API key is asked for (an agent can look before it registers).
 */
import { Elysia } from "elysia";
import type { Venue } from "../../venues/venue.ts";
import { BookModel, BookQuery, MarketIdParam, MarketModel, MarketPage, MarketsQuery, marketsResponses } from "./model.ts";
import { MarketService } from "./service.ts";

const bool = (v: string | undefined) => (v === undefined ? undefined : v === "true");

/** `timeoutMs` bounds each venue call (VENUE_TIMEOUT_MS). */
export function marketsModule(deps: { venue: Venue; timeoutMs: number }) {
  const markets = new MarketService(deps.venue, { timeoutMs: deps.timeoutMs });
  return new Elysia({ name: "markets", prefix: "/v1/markets" })
    .get(
      "",
      ({ query }) =>
        markets.list({
          limit: query.limit ?? 50,
          cursor: query.cursor,
          category: query.category,
          active: bool(query.active),
          closed: bool(query.closed),
          accepting_orders: bool(query.accepting_orders),
          q: query.q,
        }),
      {
        query: MarketsQuery,
        response: { 200: MarketPage },
        detail: {
          summary: "List markets, one item per outcome token (public)",
          description:
            "Filters: `category` (case-insensitive), `active` and `closed` (`true`/`false`, matched against the market's flags; " +
            "tradeable markets are `?active=true&closed=false&accepting_orders=true`; `q`: words that must all appear in the question). `limit` (1-200, default 50) and the opaque `cursor` from `next_cursor` page through the list.",
          tags: ["markets"],
          security: [],
          responses: marketsResponses.list,
        },
      },
    )
    .get("/:market_id", ({ params }) => markets.get(params.market_id), {
      params: MarketIdParam,
      response: { 200: MarketModel },
      detail: { summary: "Get one outcome token's market (public)", tags: ["markets"], security: [], responses: marketsResponses.get },
    })
    .get("/:market_id/book", ({ params, query }) => markets.book(params.market_id, query.depth ?? 50), {
      params: MarketIdParam,
      query: BookQuery,
      response: { 200: BookModel },
      detail: { summary: "One outcome token's order book depth, from the venue (public)", tags: ["markets"], security: [], responses: marketsResponses.get },
    });
}
