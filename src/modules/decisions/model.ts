import { t } from "elysia";
import { idPattern } from "../../domain/ids.ts";
import { PageQuery } from "../../http/pagination.ts";

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
  failures: t.Array(
    t.Object({
      check: t.String(),
      code: t.String(),
      message: t.String(),
      limit: t.Optional(t.Union([t.Number(), t.String(), t.Null()])),
      actual: t.Optional(t.Union([t.Number(), t.String(), t.Null()])),
    }),
    { description: "every failing check in the fixed order (empty when approved)" },
  ),
  checks: t.Array(t.Object({ check: t.String(), passed: t.Boolean() }), { description: "all eight checks of a rejection (empty when approved)" }),
  order_id: t.Union([t.String(), t.Null()]),
  created_at: t.String(),
});
export type DecisionModel = typeof DecisionModel.static;

export const DecisionPage = t.Object({ data: t.Array(DecisionModel), next_cursor: t.Union([t.String(), t.Null()]) });

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
  intents: t.Array(t.Object({ at: t.String({ description: "start of the UTC hour" }), approved: t.Integer(), rejected: t.Integer() }), {
    description: "one entry per hour, oldest first, zeros included",
  }),
  daily_volume: t.Array(
    t.Object({ agent_id: t.String(), day: t.String({ description: "UTC day, YYYY-MM-DD" }), used_usdc: t.Number() }),
    { description: "notional counted against each agent's daily limit, per UTC day with any volume" },
  ),
});
export type SummaryModel = typeof SummaryModel.static;
