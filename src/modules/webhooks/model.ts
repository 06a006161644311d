import { Type } from "@sinclair/typebox";
import { t, type TSchema } from "elysia";
import { EVENT_TYPES, type EventType } from "../../db/schema.ts";
import { idPattern } from "../../domain/ids.ts";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "../../errors/errors.ts";
import { jsonResponse, problemResponses } from "../../errors/problem-model.ts";
import { EVENT_DATA, eventAgentId } from "../events/model.ts";

export const CreateWebhookBody = t.Object(
  {
    url: t.String({ minLength: 1, maxLength: 2048, description: "http or https; no credentials; a public address unless WEBHOOK_ALLOW_PRIVATE" }),
    event_types: t.Optional(
      t.Array(t.Union(EVENT_TYPES.map((type) => t.Literal(type))), { minItems: 1, maxItems: EVENT_TYPES.length, description: "the types delivered (default: every type, also types added later)" }),
    ),
    agent_id: t.Optional(t.String({ pattern: idPattern("agt"), description: "only this agent's events" })),
    description: t.Optional(t.String({ maxLength: 200 })),
  },
  { additionalProperties: false, examples: [{ url: "https://hooks.example.com/brokerage", event_types: ["order", "kill"] }] },
);

export const WebhookIdParam = t.Object({ id: t.String({ pattern: idPattern("whk"), description: "webhook id", examples: ["whk_20ewb1q2w3e4r5t6y7u8"] }) });

const EXAMPLE = {
  id: "whk_20ewb1q2w3e4r5t6y7u8",
  url: "https://hooks.example.com/brokerage",
  event_types: ["order", "kill"],
  agent_id: null,
  description: null,
  status: "enabled",
  last_event_id: 42,
  attempts: 0,
  next_attempt_at: null,
  last_error: null,
  last_success_at: "2026-11-27T15:00:00.000Z",
  disabled_at: null,
  created_at: "2026-11-27T14:00:00.000Z",
};

const Webhook = t.Object({
  id: t.String(),
  url: t.String(),
  event_types: t.Union([t.Array(t.String()), t.Null()]),
  agent_id: t.Union([t.String(), t.Null()]),
  description: t.Union([t.String(), t.Null()]),
  status: t.Union([t.Literal("enabled"), t.Literal("disabled")]),
  last_event_id: t.Number({ description: "the cursor: every matching event up to this id was delivered" }),
  attempts: Type.Integer({ description: "failed attempts of the event after the cursor" }),
  next_attempt_at: t.Union([t.String(), t.Null()]),
  last_error: t.Union([t.String(), t.Null()]),
  last_success_at: t.Union([t.String(), t.Null()]),
  disabled_at: t.Union([t.String(), t.Null()]),
  created_at: t.String(),
});
const CreatedWebhook = t.Composite([Webhook, t.Object({ secret: t.String({ description: "whsec_…: shown once, in this answer" }) })]);
const TestResult = t.Object({
  webhook_id: t.String(),
  message_id: t.String(),
  delivered: t.Boolean(),
  status: t.Union([Type.Integer(), t.Null()]),
  error: t.Union([t.String(), t.Null()]),
  duration_ms: Type.Integer(),
});

const agentScoped = new ForbiddenError("an agent-scoped key cannot manage webhooks");
const notFound = new NotFoundError("webhook whk_20ewb1q2w3e4r5t6y7u8");

/** OpenAPI details of the webhook routes (docs/api.md#webhooks). */
export const webhooksDetail = {
  create: {
    summary: "Register a webhook endpoint",
    description: "Events from now on are POSTed to the URL, signed per Standard Webhooks (docs/webhooks.md). The secret is shown only in this answer.",
    tags: ["webhooks"],
    responses: {
      "201": jsonResponse("The endpoint, with its signing secret", CreatedWebhook, { ...EXAMPLE, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }),
      ...problemResponses(
        new InvalidRequestError("url: the URL's host is a loopback address; the operator's WEBHOOK_ALLOW_PRIVATE=true allows it", [{ path: "/body/url", message: "the URL's host is a loopback address; the operator's WEBHOOK_ALLOW_PRIVATE=true allows it" }]),
        agentScoped,
        new NotFoundError("agent agt_20ew8vau60wtjq891xdc"),
      ),
    },
  },
  list: {
    summary: "List webhook endpoints (no secrets)",
    tags: ["webhooks"],
    responses: { "200": jsonResponse("A page of endpoints, newest first", t.Object({ data: t.Array(Webhook), next_cursor: t.Union([t.String(), t.Null()]) }), { data: [EXAMPLE], next_cursor: null }), ...problemResponses(agentScoped) },
  },
  get: { summary: "Read a webhook endpoint", tags: ["webhooks"], responses: { "200": jsonResponse("The endpoint", Webhook, EXAMPLE), ...problemResponses(agentScoped, notFound) } },
  test: {
    summary: "Send a test message to a webhook endpoint",
    description: "A signed `webhook_test` message, sent now whether the endpoint is enabled or not; answers what the endpoint did.",
    tags: ["webhooks"],
    responses: {
      "200": jsonResponse("The outcome", TestResult, { webhook_id: EXAMPLE.id, message_id: "msg_test_5f0c1d2e3a4b5c6d7e8f9a0b", delivered: true, status: 204, error: null, duration_ms: 12 }),
      ...problemResponses(agentScoped, notFound),
    },
  },
  enable: {
    summary: "Re-enable a webhook endpoint",
    description: "Fresh retries; delivery resumes with the event after the cursor (the one that failed).",
    tags: ["webhooks"],
    responses: { "200": jsonResponse("The endpoint", Webhook, EXAMPLE), ...problemResponses(agentScoped, notFound) },
  },
  remove: { summary: "Delete a webhook endpoint", description: "Answers 204 with no body.", tags: ["webhooks"], responses: { "204": { description: "Deleted" }, ...problemResponses(agentScoped, notFound) } },
};

// ---------------------------------------------------------------- the messages an endpoint receives

/** The body of a webhook message of one event type: the Standard Webhooks `type`, `timestamp` and `data`, plus the event's `id` and `agent_id` (docs/webhooks.md). */
const webhookMessageOf = (type: EventType) =>
  t.Object(
    {
      id: Type.Integer({ description: "the event id (the message's `webhook-id` is `evt_<id>`)" }),
      type: t.Literal(type),
      timestamp: t.String({ description: "when the event happened (ISO 8601)" }),
      agent_id: eventAgentId(type),
      data: EVENT_DATA[type],
    },
    { title: `${type} message` },
  );

/** POST /v1/webhooks/{id}/test's message: no event behind it. */
export const WebhookTestMessage = t.Object(
  {
    id: t.Null(),
    type: t.Literal("webhook_test"),
    timestamp: t.String(),
    agent_id: t.Null(),
    data: t.Object({ webhook_id: t.String(), message: t.String() }),
  },
  { title: "webhook_test message" },
);

/** Each event type's message. */
const EVENT_MESSAGES = EVENT_TYPES.map((type) => [type, webhookMessageOf(type)] as const);
/** Every message body an endpoint can receive. */
export const WebhookMessageModel = t.Union([...EVENT_MESSAGES.map(([, m]) => m), WebhookTestMessage], { description: "the JSON body of a webhook message" });

/**
 * The OpenAPI document's `webhooks`: one POST per event type (and the test message), the body each
 * endpoint receives, signed with the endpoint's secret (docs/webhooks.md#verifying-a-message).
 */
export function webhooksDocumentation(): Record<string, object> {
  const entry = (name: string, body: TSchema, summary: string): [string, object] => [
    name,
    {
      post: {
        summary,
        description: "Signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`); a 2xx answer within WEBHOOK_TIMEOUT_MS is a delivery, anything else is retried (docs/webhooks.md).",
        tags: ["webhooks"],
        requestBody: { required: true, content: { "application/json": { schema: body } } },
        responses: { "2XX": { description: "delivered" } },
      },
    },
  ];
  return Object.fromEntries([
    ...EVENT_MESSAGES.map(([type, message]) => entry(type, message, `A \`${type}\` event (docs/events.md#frame)`)),
    entry("webhook_test", WebhookTestMessage, "POST /v1/webhooks/{id}/test's message"),
  ]);
}
