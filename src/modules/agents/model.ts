import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "../../errors/errors.ts";
import { jsonResponse, problemResponses } from "../../errors/problem-model.ts";
import { idPattern } from "../../domain/ids.ts";
import { LimitsPatchSchema, LimitsSchema } from "../../risk/limits.ts";

export const Address = t.String({ pattern: "^0x[0-9a-fA-F]{40}$", description: "an EVM address" });
export const AgentIdParam = t.Object({ id: t.String({ pattern: idPattern("agt"), description: "agent id", examples: ["agt_20ew38ygo3k92ke1kcen"] }) });

export const CreateAgentBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    wallet_address: Address,
    signer_address: t.Optional(Address),
    signature_type: t.Optional(t.Union([t.Literal(0), t.Literal(1), t.Literal(2), t.Literal(3)])),
    owner_address: t.Optional(Address),
    limits: t.Optional(LimitsPatchSchema),
  },
  {
    additionalProperties: false,
    examples: [{ name: "quickstart", wallet_address: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", limits: { max_order_usdc: 50, daily_volume_usdc: 500 } }],
  },
);
export type CreateAgentBody = typeof CreateAgentBody.static;

export const KillBody = t.Optional(t.Object({ reason: t.Optional(t.String({ maxLength: 500 })) }, { additionalProperties: false }));

export const AGENT_EXAMPLE = {"id": "agt_20ew38ygo3k92ke1kcen", "org_id": "org_20ew38y1x4wvanve4gs1", "name": "quickstart", "mode": "payload", "wallet_address": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", "signer_address": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", "signature_type": 0, "owner_address": null, "limits": {"min_order_usdc": 1, "max_order_usdc": 100, "daily_volume_usdc": 1000, "capital_usdc": 1000, "max_market_exposure_pct": 0.2, "kelly_fraction": 0.25, "kelly_fallback_pct": 0.02, "price_band": 0.1, "max_slippage": 0.02, "max_depth_share": 0.25, "book_max_age_s": 60, "min_time_to_end_s": 3600, "market_deny": [], "category_deny": [], "category_allow": [], "max_venue_errors": 5, "breaker_cooldown_s": 60, "max_orders_per_minute": 60, "max_open_orders": 100, "duplicate_window_s": 5, "runaway_trip_count": 20, "approval_threshold_usdc": null}, "breaker": {"state": "closed", "reason": null, "since": null}, "heartbeat": null, "daily_volume": {"used_usdc": 0, "limit_usdc": 1000, "resets_at": "2026-11-25T00:00:00.000Z"}, "open_orders": 0, "credentials": null, "created_at": "2026-11-24T03:13:45.401Z"};

export const BreakerStateModel = t.Union([t.Literal("closed"), t.Literal("tripped")]);
export const BreakerReasonModel = t.Union([t.Literal("kill"), t.Literal("venue_errors"), t.Literal("manual"), t.Literal("runaway"), t.Literal("heartbeat"), t.Null()]);
/** The agent's breaker, as the Agent shows it and a `breaker` event reports it. */
export const BreakerModel = t.Object({ state: BreakerStateModel, reason: BreakerReasonModel, since: t.Union([t.String(), t.Null()]) });

export const AgentModel = t.Object({
  id: t.String(),
  org_id: t.String(),
  name: t.Union([t.String(), t.Null()]),
  mode: t.Union([t.Literal("payload"), t.Literal("delegated")]),
  wallet_address: t.String(),
  signer_address: t.String(),
  signature_type: Type.Integer(),
  owner_address: t.Union([t.String(), t.Null()]),
  limits: LimitsSchema,
  breaker: BreakerModel,
  heartbeat: t.Union([t.Null(), t.Object({ interval_s: Type.Integer(), last_at: t.String(), deadline_at: t.String() })], {
    description: "the dead-man switch: null when off (docs/api.md#heartbeat-dead-man-switch)",
  }),
  daily_volume: t.Object({ used_usdc: t.Number(), limit_usdc: t.Number(), resets_at: t.String() }),
  open_orders: Type.Integer(),
  credentials: t.Union([t.Null(), t.Object({ scopes: t.Array(t.String()), key_hint: t.String(), created_at: t.String() })]),
  created_at: t.String(),
  owner_instance: t.Optional(
    t.Union([t.String(), t.Null()], { description: "the service instance (INSTANCE_ID) whose actor owns the agent now: the one that answered" }),
  ),
}, { examples: [AGENT_EXAMPLE] });
export type AgentModel = typeof AgentModel.static;

/** The PATCH /v1/agents/{id}/limits body: any subset of the limits, with an example. */
export const PatchLimitsBody = Object.assign(Object.create(Object.getPrototypeOf(LimitsPatchSchema)), LimitsPatchSchema, {
  examples: [{ max_order_usdc: 50, daily_volume_usdc: 500, category_deny: ["sports"] }],
}) as typeof LimitsPatchSchema;

const AgentPage = t.Object({ data: t.Array(AgentModel), next_cursor: t.Union([t.String(), t.Null()]) });
const noAgent = new NotFoundError("agent");

/** OpenAPI details of the agent routes (docs/api.md#agents). */
export const agentsDetail = {
  create: {
    summary: "Create an agent (starts in payload mode)",
    tags: ["agents"],
    responses: problemResponses(
      new InvalidRequestError("/wallet_address: Expected string to match '^0x[0-9a-fA-F]{40}$'", [{ path: "/wallet_address", message: "Expected string to match '^0x[0-9a-fA-F]{40}$'" }]),
      new ForbiddenError("an agent-scoped key cannot create agents"),
    ),
  },
  list: { summary: "List agents", tags: ["agents"], responses: { "200": jsonResponse("A page of agents, newest first", AgentPage, { data: [AGENT_EXAMPLE], next_cursor: null }) } },
  get: { summary: "Get an agent", tags: ["agents"], responses: problemResponses(noAgent) },
  patchLimits: {
    summary: "Change some of an agent's risk limits",
    description: "Any subset of the limits; lists are replaced whole. `min_order_usdc` may not exceed `max_order_usdc`.",
    tags: ["agents"],
    responses: problemResponses(new InvalidRequestError("/max_order_usdc: Expected number to be less or equal to 1000000000", [{ path: "/max_order_usdc", message: "Expected number to be less or equal to 1000000000" }]), noAgent),
  },
  breaker: { summary: "Trip the agent's breaker by hand (reason manual); no body", tags: ["agents"], responses: problemResponses(noAgent) },
  resume: { summary: "Close the breaker after a kill or a manual trip; no body", tags: ["agents"], responses: problemResponses(noAgent) },
};
