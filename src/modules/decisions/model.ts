import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { InvalidRequestError } from "../../errors/errors.ts";
import { problemResponses } from "../../errors/problem-model.ts";
import { idPattern } from "../../domain/ids.ts";
import { PageQuery } from "../../http/pagination.ts";
import { RiskCheckModel, RiskFailureModel } from "../orders/model.ts";

/** From a real run: an approved intent and a rejected one of the same agent (GET /v1/risk/decisions?agent_id=…&limit=2). */
export const DECISIONS_EXAMPLE = {"data": [{"id": "dec_20ew8vwym0xzm8s63jai", "agent_id": "agt_20ew8vwrxtsore1bcqcx", "approved": false, "intent": {"side": "buy", "price": 0.49, "agent_id": "agt_20ew8vwrxtsore1bcqcx", "market_id": "62116011324642788450213843133477763167049099528131416799711191854278105821744", "size_usdc": 500}, "failures": [{"code": "order_too_large", "check": "order_size", "limit": 100, "actual": 500, "message": "size 500 USDC is above max_order_usdc 100"}, {"code": "concentration_exceeded", "check": "concentration", "limit": 200, "actual": 504.998, "message": "exposure 4.998 USDC in this market plus 500 exceeds max_market_exposure_pct 0.2 × capital_usdc 1000 = 200"}, {"code": "kelly_cap_exceeded", "check": "kelly_cap", "limit": 20, "actual": 500, "message": "without a probability the size is capped at kelly_fallback_pct 0.02 × capital_usdc 1000; 500 USDC exceeds it"}], "checks": [{"check": "breaker", "passed": true}, {"check": "market_filters", "passed": true}, {"check": "order_size", "passed": false}, {"check": "daily_volume", "passed": true}, {"check": "concentration", "passed": false}, {"check": "kelly_cap", "passed": false}, {"check": "price_sanity", "passed": true}, {"check": "liquidity_impact", "passed": true}], "order_id": null, "created_at": "2026-11-24T04:03:41.524Z"}, {"id": "dec_20ew8vwwoht2g84g3jpc", "agent_id": "agt_20ew8vwrxtsore1bcqcx", "approved": true, "intent": {"side": "buy", "price": 0.49, "agent_id": "agt_20ew8vwrxtsore1bcqcx", "market_id": "62116011324642788450213843133477763167049099528131416799711191854278105821744", "size_usdc": 5}, "failures": [], "checks": [], "order_id": "ord_20ew8vwwohslcb7nbnv8", "created_at": "2026-11-24T04:03:41.500Z"}], "next_cursor": null};

/** From the same run: GET /v1/risk/summary?agent_id=…&hours=3&days=2. */
export const SUMMARY_EXAMPLE = {"from": "2026-11-24T02:00:00.000Z", "to": "2026-11-24T04:03:41.605Z", "intents": [{"at": "2026-11-24T02:00:00.000Z", "approved": 0, "rejected": 0}, {"at": "2026-11-24T03:00:00.000Z", "approved": 0, "rejected": 0}, {"at": "2026-11-24T04:00:00.000Z", "approved": 1, "rejected": 1}], "daily_volume": [{"agent_id": "agt_20ew8vwrxtsore1bcqcx", "day": "2026-11-24", "used_usdc": 4.998}]};

export const ListDecisionsQuery = t.Object(
  {
    ...PageQuery,
    agent_id: t.Optional(t.String({ pattern: idPattern("agt") })),
    approved: t.Optional(t.Boolean({ description: "true: approved intents only; false: rejections only" })),
  },
  { additionalProperties: false },
);
export type ListDecisionsQuery = typeof ListDecisionsQuery.static;

export const DecisionModel = t.Object({
  id: t.String(),
  agent_id: t.String(),
  approved: t.Boolean(),
  intent: t.Record(t.String(), t.Unknown(), { description: "the intent as submitted, with its agent_id" }),
  failures: t.Array(RiskFailureModel, { description: "every failing check in the fixed order (empty when approved)" }),
  checks: t.Array(RiskCheckModel, { description: "all eight checks of a rejection (empty when approved)" }),
  order_id: t.Union([t.String(), t.Null()]),
  created_at: t.String(),
});
export type DecisionModel = typeof DecisionModel.static;

export const DecisionPage = t.Object({ data: t.Array(DecisionModel), next_cursor: t.Union([t.String(), t.Null()]) }, { examples: [DECISIONS_EXAMPLE] });

export const SummaryQuery = t.Object(
  {
    agent_id: t.Optional(t.String({ pattern: idPattern("agt") })),
    hours: t.Optional(t.Integer({ minimum: 1, maximum: 168, default: 24, description: "hourly intent counts over this many hours" })),
    days: t.Optional(t.Integer({ minimum: 1, maximum: 31, default: 7, description: "daily volume per agent over this many UTC days" })),
  },
  { additionalProperties: false },
);
export type SummaryQuery = typeof SummaryQuery.static;

export const SummaryModel = t.Object({
  from: t.String({ description: "start of the first hourly bucket" }),
  to: t.String(),
  intents: t.Array(t.Object({ at: t.String({ description: "start of the UTC hour" }), approved: Type.Integer(), rejected: Type.Integer() }), {
    description: "one entry per hour, oldest first, zeros included",
  }),
  daily_volume: t.Array(
    t.Object({ agent_id: t.String(), day: t.String({ description: "UTC day, YYYY-MM-DD" }), used_usdc: t.Number() }),
    { description: "notional counted against each agent's daily limit, per UTC day with any volume" },
  ),
}, { examples: [SUMMARY_EXAMPLE] });
export type SummaryModel = typeof SummaryModel.static;

export const decisionsDetail = {
  list: {
    summary: "List risk decisions, newest first (approved=false: rejections with every failed check)",
    description: "An agent-scoped key sees its own agent's decisions only; an `agent_id` of another organization lists nothing.",
    tags: ["risk"],
    responses: {
      ...problemResponses(new InvalidRequestError("/query/approved: Expected union value", [{ path: "/query/approved", message: "Expected union value" }])),
    },
  },
  summary: {
    summary: "Approved and rejected intents per hour, and daily volume per agent",
    tags: ["risk"],
    responses: {
      ...problemResponses(new InvalidRequestError("/query/hours: Expected integer to be greater or equal to 1", [{ path: "/query/hours", message: "Expected integer to be greater or equal to 1" }])),
    },
  },
};
