import { Elysia, t } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "../../errors/errors.ts";
import { MARKET_ID_PATTERN } from "../markets/model.ts";
import { problemResponses } from "../../errors/problem-model.ts";
import { AgentIdParam, AgentModel } from "../agents/model.ts";
import { VenueAuthSchema } from "../orders/model.ts";
import { type FirmKillService, ORG_KEY_NEEDED } from "./firm-kill-service.ts";
import type { KillService } from "./service.ts";

export const KillBody = t.Object(
  {
    reason: t.Optional(t.String({ maxLength: 500 })),
    venue_auth: t.Optional(
      t.Object(VenueAuthSchema.properties, {
        additionalProperties: false,
        description:
          "payload mode at a venue that cancels only with the owner's keys: L2 headers over DELETE /cancel-all (no body); the venue cancels every open order of that account in one call (docs/api.md#post-v1agentsidkill). Passed through, never stored.",
      }),
    ),
  },
  { additionalProperties: false, examples: [{ reason: "strategy misbehaving" }] },
);

export const KillResult = t.Object({
  kill_id: t.String(),
  agent_id: t.String(),
  started_at: t.String(),
  completed_at: t.String(),
  duration_ms: t.Integer(),
  cancelled: t.Array(t.String()),
  filled: t.Array(t.String(), { description: "orders that had already matched at the venue when the kill reached them" }),
  failed: t.Array(t.String()),
  credentials_deleted: t.Boolean(),
  agent: AgentModel,
}, { examples: [{"kill_id": "kil_20ew38z9zpcds2kng153", "agent_id": "agt_20ew38ygo3k92ke1kcen", "started_at": "2026-11-24T03:13:45.735Z", "completed_at": "2026-11-24T03:13:45.741Z", "duration_ms": 6, "cancelled": ["ord_20ew38ypczk6rwcdelno"], "filled": [], "failed": [], "credentials_deleted": false, "agent": {"id": "agt_20ew38ygo3k92ke1kcen", "org_id": "org_20ew38y1x4wvanve4gs1", "name": "quickstart", "mode": "payload", "wallet_address": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", "signer_address": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", "signature_type": 0, "limits": {"min_order_usdc": 1, "max_order_usdc": 100, "daily_volume_usdc": 1000, "capital_usdc": 1000, "max_market_exposure_pct": 0.2, "kelly_fraction": 0.25, "kelly_fallback_pct": 0.02, "price_band": 0.1, "max_slippage": 0.02, "max_depth_share": 0.25, "book_max_age_s": 60, "min_time_to_end_s": 3600, "market_deny": [], "category_deny": [], "category_allow": [], "max_venue_errors": 5, "breaker_cooldown_s": 60, "max_orders_per_minute": 60, "max_open_orders": 100, "duplicate_window_s": 5, "runaway_trip_count": 20, "approval_threshold_usdc": null}, "breaker": {"state": "tripped", "reason": "kill", "since": "2026-11-24T03:13:45.735Z"}, "heartbeat": null, "daily_volume": {"used_usdc": 0, "limit_usdc": 1000, "resets_at": "2026-11-25T00:00:00.000Z"}, "open_orders": 0, "credentials": null, "created_at": "2026-11-24T03:13:45.401Z"}}] });

const KILL_EXAMPLE = (KillResult as unknown as { examples: Record<string, any>[] }).examples[0] as Record<string, any>;

export function killModule(deps: { kill: KillService; auth: ReturnType<typeof authPlugin> }) {
  return new Elysia({ name: "kill", prefix: "/v1/agents" }).use(deps.auth).post(
    "/:id/kill",
    async ({ caller, params, body }) => {
      // The body is optional: none, an empty body (both parsed to null by the body-limit parser), or
      // {reason}. An object is checked against KillBody by the schema; anything else is refused here.
      if (body !== null && body !== undefined && (typeof body !== "object" || Array.isArray(body))) {
        throw new InvalidRequestError("the body must be a JSON object {reason?, venue_auth?}, or empty", [{ path: "/", message: "must be an object" }]);
      }
      const reason = body?.reason ?? null;
      return deps.kill.kill(caller, params.id, reason, body?.venue_auth ? { venueAuth: body.venue_auth } : {});
    },
    {
      auth: true,
      params: AgentIdParam,
      body: t.Optional(KillBody),
      response: { 200: KillResult },
      detail: {
        summary: "Kill switch: trip the breaker, cancel every open order within the deadline, delete delegated credentials",
        description:
          "The body is optional: none, an empty body, or `{reason?, venue_auth?}`. `venue_auth`: for a payload-mode agent at a venue that cancels only with the owner's own L2 keys, the headers over `DELETE /cancel-all`; the kill then cancels the account's orders in one call (docs/api.md#post-v1agentsidkill).",
        tags: ["agents"],
        // Documented by hand: an optional body is not required, and the example is the one to show.
        requestBody: { required: false, content: { "application/json": { schema: KillBody, example: { reason: "strategy misbehaving" } } } },
        responses: problemResponses(new NotFoundError("agent")),
      },
    },
  );
}

// ---------------------------------------------------------------- cancel-all (no kill)

const VenueAuthMap = (what: string, keyPattern: string) =>
  t.Record(t.String({ pattern: keyPattern }), t.Object(VenueAuthSchema.properties, { additionalProperties: false }), { description: what, maxProperties: 1000 });

export const CancelAllBody = t.Object(
  {
    market_id: t.Optional(t.String({ pattern: MARKET_ID_PATTERN, description: "only this outcome token's orders (a decimal uint256 string)" })),
    venue_auth: t.Optional(
      t.Object(VenueAuthSchema.properties, {
        additionalProperties: false,
        description: "payload mode, without market_id: the owner's L2 headers over DELETE /cancel-all, as the kill takes them (docs/api.md#payload-mode-cancels)",
      }),
    ),
    venue_auths: t.Optional(
      VenueAuthMap("payload mode: the owner's L2 headers over each order's DELETE /order, by venue order id (docs/api.md#payload-mode-cancels)", "^0x[0-9a-fA-F]{1,128}$|^[A-Za-z0-9_-]{1,128}$"),
    ),
  },
  { additionalProperties: false, examples: [{}, { market_id: "62116011324642788450213843133477763167049099528131416799711191854278105821744" }] },
);

export const CancelAllResult = t.Object({
  agent_id: t.String(),
  market_id: t.Union([t.String(), t.Null()]),
  started_at: t.String(),
  completed_at: t.String(),
  duration_ms: t.Integer(),
  cancelled: t.Array(t.String()),
  filled: t.Array(t.String(), { description: "orders that had already matched at the venue when the cancel reached them" }),
  failed: t.Array(t.String(), { description: "not confirmed before the deadline: status failed, flagged_for_review" }),
  agent: AgentModel,
}, { examples: [{ agent_id: KILL_EXAMPLE.agent_id, market_id: null, started_at: KILL_EXAMPLE.started_at, completed_at: KILL_EXAMPLE.completed_at, duration_ms: KILL_EXAMPLE.duration_ms, cancelled: KILL_EXAMPLE.cancelled, filled: [], failed: [], agent: { ...KILL_EXAMPLE.agent, breaker: { state: "closed", reason: null, since: null } } }] });

export function cancelAllModule(deps: { kill: KillService; auth: ReturnType<typeof authPlugin> }) {
  return new Elysia({ name: "cancel-all", prefix: "/v1/agents" }).use(deps.auth).post(
    "/:id/cancel-all",
    async ({ caller, params, body }) => {
      if (body !== null && body !== undefined && (typeof body !== "object" || Array.isArray(body))) {
        throw new InvalidRequestError("the body must be a JSON object {market_id?, venue_auth?, venue_auths?}, or empty", [{ path: "/", message: "must be an object" }]);
      }
      if (body?.market_id !== undefined && body.venue_auth) {
        throw new InvalidRequestError("venue_auth (over DELETE /cancel-all) cancels every order of the account: with market_id, send venue_auths per order", [
          { path: "/venue_auth", message: "not allowed with market_id" },
        ]);
      }
      const marketId = body?.market_id === undefined ? undefined : canonicalTokenId(body.market_id);
      return deps.kill.cancelAll(caller, params.id, { marketId, venueAuth: body?.venue_auth, venueAuths: body?.venue_auths });
    },
    {
      auth: true,
      params: AgentIdParam,
      body: t.Optional(CancelAllBody),
      response: { 200: CancelAllResult },
      detail: {
        summary: "Cancel the agent's open orders (all, or one market's) without halting it",
        description:
          "The kill's fan-out (same deadline, retries and failed-and-flagged rule) over the agent's active orders, but the breaker stays closed and the credentials stay: the agent keeps trading (docs/api.md#post-v1agentsidcancel-all).",
        tags: ["agents"],
        requestBody: { required: false, content: { "application/json": { schema: CancelAllBody, example: {} } } },
        responses: problemResponses(new NotFoundError("agent")),
      },
    },
  );
}

/** A decimal token id without leading zeros (as orders store it); refuses one above 2^256 − 1. */
function canonicalTokenId(id: string): string {
  const n = BigInt(id);
  if (n >= 1n << 256n) throw new InvalidRequestError("market_id is not a uint256", [{ path: "/market_id", message: "must be at most 2^256 - 1" }]);
  return n.toString();
}

// ---------------------------------------------------------------- the firm-wide kill

const OrgIdField = t.String({
  pattern: "^org_[A-Za-z0-9_-]{1,64}$",
  description: "the caller's own organization id, named on purpose: a per-agent route with a `..` agent id is normalized by clients to this path, and must not reach it",
});

export const FirmKillBody = t.Object(
  {
    org_id: OrgIdField,
    reason: t.Optional(t.String({ maxLength: 500 })),
    venue_auths: t.Optional(
      VenueAuthMap("payload-mode agents at a venue that cancels only with the owner's keys: the owner's L2 headers over DELETE /cancel-all, by agent id", "^agt_[A-Za-z0-9_-]+$"),
    ),
  },
  { additionalProperties: false, examples: [{ org_id: "org_20ew38y1x4wvanve4gs1", reason: "market data feed is wrong" }] },
);

export const FirmResumeBody = t.Object({ org_id: OrgIdField }, { additionalProperties: false, examples: [{ org_id: "org_20ew38y1x4wvanve4gs1" }] });

const FirmKillAgent = t.Object({
  agent_id: t.String(),
  kill_id: t.Union([t.String(), t.Null()]),
  duration_ms: t.Union([t.Integer(), t.Null()]),
  cancelled: t.Array(t.String()),
  filled: t.Array(t.String()),
  failed: t.Array(t.String()),
  credentials_deleted: t.Boolean(),
  error: t.Union([t.String(), t.Null()], { description: "why this agent's kill did not run, or null" }),
});

const ORG = "org_20ew38y1x4wvanve4gs1";
export const FirmKillResult = t.Object({
  org_id: t.String(),
  halted: t.Literal(true),
  halted_at: t.String(),
  started_at: t.String(),
  completed_at: t.String(),
  duration_ms: t.Integer(),
  agents: t.Array(FirmKillAgent),
}, { examples: [{ org_id: ORG, halted: true, halted_at: KILL_EXAMPLE.started_at, started_at: KILL_EXAMPLE.started_at, completed_at: KILL_EXAMPLE.completed_at, duration_ms: 7, agents: [{ agent_id: KILL_EXAMPLE.agent_id, kill_id: KILL_EXAMPLE.kill_id, duration_ms: 6, cancelled: KILL_EXAMPLE.cancelled, filled: [], failed: [], credentials_deleted: false, error: null }] }] });

export const FirmResumeResult = t.Object({ org_id: t.String(), halted: t.Literal(false), resumed: t.Array(t.String()) }, { examples: [{ org_id: ORG, halted: false, resumed: [KILL_EXAMPLE.agent_id] }] });
export const FirmState = t.Object(
  { org_id: t.String(), halted: t.Boolean(), halted_at: t.Union([t.String(), t.Null()]), agent_ids: t.Array(t.String()) },
  { examples: [{ org_id: ORG, halted: true, halted_at: KILL_EXAMPLE.started_at, agent_ids: [KILL_EXAMPLE.agent_id] }] },
);

export function firmKillModule(deps: { firmKill: FirmKillService; auth: ReturnType<typeof authPlugin> }) {
  const forbidden = new ForbiddenError(ORG_KEY_NEEDED);
  return new Elysia({ name: "firm-kill", prefix: "/v1" })
    .use(deps.auth)
    .post(
      "/kill",
      ({ caller, body }) => deps.firmKill.killAll(caller, body.org_id, body.reason ?? null, { venueAuths: body.venue_auths }),
      {
        auth: true,
        body: FirmKillBody,
        response: { 200: FirmKillResult },
        detail: {
          summary: "Firm-wide kill: kill every agent of the organization; new agents start halted until POST /v1/resume",
          tags: ["agents"],
          responses: problemResponses(forbidden),
        },
      },
    )
    .post("/resume", ({ caller, body }) => deps.firmKill.resumeAll(caller, body.org_id), {
      auth: true,
      body: FirmResumeBody,
      response: { 200: FirmResumeResult },
      detail: {
        summary: "Undo the firm-wide kill: resume the agents it halted and clear the organization's halt",
        tags: ["agents"],
        responses: problemResponses(forbidden),
      },
    })
    .get("/kill", ({ caller }) => deps.firmKill.firmState(caller), {
      auth: true,
      response: { 200: FirmState },
      detail: { summary: "Whether the organization is halted by the firm-wide kill", tags: ["agents"], responses: problemResponses(forbidden) },
    });
}
