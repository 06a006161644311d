import { Type } from "@sinclair/typebox";
import { t, type TSchema } from "elysia";
import { EVENT_TYPES, type EventType } from "../../db/schema.ts";
import { BreakerModel, BreakerReasonModel, BreakerStateModel } from "../agents/model.ts";
import { KillResult } from "../kill/model.ts";
import { OrderFillModel, OrderModel, RiskCheckModel, RiskFailureModel } from "../orders/model.ts";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "../../errors/errors.ts";
import { problemResponses } from "../../errors/problem-model.ts";
import { idPattern } from "../../domain/ids.ts";

export const EventsQuery = t.Object(
  {
    agent_id: t.Optional(t.String({ pattern: idPattern("agt") })),
    after: t.Optional(t.String({ pattern: "^[0-9]{1,15}$", description: "replay events after this id (the Last-Event-ID header wins)" })),
  },
  { additionalProperties: false },
);
export type EventsQuery = typeof EventsQuery.static;

/** From a real run: the stream of one agent while it placed an approved intent and a rejected one. */
export const EVENTS_EXAMPLE = "retry: 2000\n\nid: 1\nevent: order\ndata: {\"id\":1,\"type\":\"order\",\"agent_id\":\"agt_20ew8vwrxtsore1bcqcx\",\"created_at\":\"2026-11-24T04:03:41.500Z\",\"data\":{\"order\":{\"id\":\"ord_20ew8vwwohslcb7nbnv8\",\"mode\":\"payload\",\"side\":\"buy\",\"price\":0.49,\"status\":\"awaiting_signature\",\"history\":[{\"at\":\"2026-11-24T04:03:41.500Z\",\"reason\":\"approved by the risk engine\",\"status\":\"awaiting_signature\"}],\"agent_id\":\"agt_20ew8vwrxtsore1bcqcx\",\"market_id\":\"62116011324642788450213843133477763167049099528131416799711191854278105821744\",\"size_usdc\":5,\"created_at\":\"2026-11-24T04:03:41.500Z\",\"order_hash\":\"0x102cb3248cb83b24e7075523dfedb78197af54c0795b92597115d80bf306134e\",\"order_type\":\"GTC\",\"updated_at\":\"2026-11-24T04:03:41.500Z\",\"filled_usdc\":0,\"venue_order_id\":null,\"client_order_id\":null,\"flagged_for_review\":false}}}\n\nid: 2\nevent: risk_rejected\ndata: {\"id\":2,\"type\":\"risk_rejected\",\"agent_id\":\"agt_20ew8vwrxtsore1bcqcx\",\"created_at\":\"2026-11-24T04:03:41.524Z\",\"data\":{\"checks\":[{\"check\":\"breaker\",\"passed\":true},{\"check\":\"market_filters\",\"passed\":true},{\"check\":\"order_size\",\"passed\":false},{\"check\":\"daily_volume\",\"passed\":true},{\"check\":\"concentration\",\"passed\":false},{\"check\":\"kelly_cap\",\"passed\":false},{\"check\":\"price_sanity\",\"passed\":true},{\"check\":\"liquidity_impact\",\"passed\":true}],\"intent\":{\"side\":\"buy\",\"price\":0.49,\"agent_id\":\"agt_20ew8vwrxtsore1bcqcx\",\"market_id\":\"62116011324642788450213843133477763167049099528131416799711191854278105821744\",\"size_usdc\":500},\"failures\":[{\"code\":\"order_too_large\",\"check\":\"order_size\",\"limit\":100,\"actual\":500,\"message\":\"size 500 USDC is above max_order_usdc 100\"},{\"code\":\"concentration_exceeded\",\"check\":\"concentration\",\"limit\":200,\"actual\":504.998,\"message\":\"exposure 4.998 USDC in this market plus 500 exceeds max_market_exposure_pct 0.2 × capital_usdc 1000 = 200\"},{\"code\":\"kelly_cap_exceeded\",\"check\":\"kelly_cap\",\"limit\":20,\"actual\":500,\"message\":\"without a probability the size is capped at kelly_fallback_pct 0.02 × capital_usdc 1000; 500 USDC exceeds it\"}],\"decision_id\":\"dec_20ew8vwym0xzm8s63jai\"}}\n\n";

export const eventsDetail = {
  summary: "Server-Sent Events of the organization (or one agent): order, risk_rejected, breaker, kill, webhook_disabled; replays after Last-Event-ID",
  description: "Frames are `id:` (increasing), `event:` (the type) and `data:` (one line of JSON, a `BrokerEvent` of components.schemas); see docs/events.md.",
  tags: ["events"],
  responses: {
    "200": {
      description: "The event stream (it stays open; a `: keepalive` comment every 15 s)",
      content: {
        "text/event-stream": {
          schema: { type: "string" as const },
          example: EVENTS_EXAMPLE,
          // Each frame's `data:` line, as OpenAPI 3.2's itemSchema would say it (this document is 3.1).
          "x-data-schema": { $ref: "#/components/schemas/BrokerEvent" },
        },
      },
    },
    ...problemResponses(
      new InvalidRequestError("/query/after: Expected string to match '^[0-9]{1,15}$'", [{ path: "/query/after", message: "Expected string to match '^[0-9]{1,15}$'" }]),
      new ForbiddenError("this API key is scoped to another agent"),
      new NotFoundError("agent agt_20ew8vau60wtjq891xdc"),
    ),
  },
};

// ---------------------------------------------------------------- what each event carries

/** `order`: the order as it is now; for a fill a source reported (or took back), also that fill. */
export const OrderEventData = t.Object({
  order: OrderModel,
  fill: t.Optional(t.Object(OrderFillModel.properties, { description: "an event of a fill reported or taken back: that fill, with every source that reported it" })),
});
/** `risk_rejected`: an intent the risk engine refused (422), with every failed check. */
export const RiskRejectedEventData = t.Object({
  decision_id: t.String(),
  intent: t.Object({}, { additionalProperties: true, description: "the intent as submitted" }),
  failures: t.Array(RiskFailureModel),
  checks: t.Array(RiskCheckModel),
});
/** `breaker`: the agent's breaker tripped or closed (its state or reason changed). */
export const BreakerEventData = t.Object({
  ...BreakerModel.properties,
  previous: t.Object({ state: BreakerStateModel, reason: BreakerReasonModel }, { description: "the breaker before this change" }),
});
/** `kill`: a kill switch finished: its answer, and why it ran. */
export const KillEventData = t.Object({
  ...KillResult.properties,
  reason: t.Union([t.String(), t.Null()], { description: "the kill's reason (`heartbeat` for a missed heartbeat), or null" }),
});
/** `webhook_disabled` (the organization's, no agent): a webhook endpoint was disabled after its retries. */
export const WebhookDisabledEventData = t.Object({
  webhook_id: t.String(),
  url: t.String(),
  attempts: Type.Integer(),
  last_error: t.String(),
  last_event_id: Type.Integer({ description: "the endpoint's cursor: every matching event up to it was delivered" }),
  disabled_at: t.String(),
});

/** The `data` of each event type: what the stream's envelope and a webhook message carry alike. */
export const EVENT_DATA = {
  order: OrderEventData,
  risk_rejected: RiskRejectedEventData,
  breaker: BreakerEventData,
  kill: KillEventData,
  webhook_disabled: WebhookDisabledEventData,
} as const satisfies Record<EventType, TSchema>;

/** Whose an event is: an agent's, or (webhook_disabled) the organization's, `null`. */
export const eventAgentId = (type: EventType) =>
  type === "webhook_disabled" ? t.Null({ description: "an organization's event: no agent" }) : t.String({ description: "the agent the event is of" });

/**
 * One frame's `data:` line of GET /v1/events: the envelope `{id, type, agent_id, created_at, data}`,
 * one variant per type (the frame's `event:`); docs/events.md#frame.
 */
export const BrokerEventModel = t.Union(
  EVENT_TYPES.map((type) =>
    t.Object(
      {
        id: Type.Integer({ description: "the event id, increasing; also the frame's `id:`" }),
        type: t.Literal(type),
        agent_id: eventAgentId(type),
        created_at: t.String(),
        data: EVENT_DATA[type],
      },
      { title: `${type} event` },
    ),
  ),
  { description: "one event of GET /v1/events: a frame's `data:` line" },
);
