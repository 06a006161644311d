/** The kill switch's, the cancel-all's and the firm-wide kill's request and answer schemas (their controllers: index.ts). */
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { AGENT_EXAMPLE, AgentModel } from "../agents/model.ts";
import { MARKET_ID_PATTERN } from "../markets/model.ts";
import { VenueAuthSchema } from "../orders/model.ts";

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
  duration_ms: Type.Integer(),
  cancelled: t.Array(t.String()),
  filled: t.Array(t.String(), { description: "orders that had already matched at the venue when the kill reached them" }),
  failed: t.Array(t.String()),
  credentials_deleted: t.Boolean(),
  agent: AgentModel,
}, { examples: [{"kill_id": "kil_20ew38z9zpcds2kng153", "agent_id": "agt_20ew38ygo3k92ke1kcen", "started_at": "2026-11-24T03:13:45.735Z", "completed_at": "2026-11-24T03:13:45.741Z", "duration_ms": 6, "cancelled": ["ord_20ew38ypczk6rwcdelno"], "filled": [], "failed": [], "credentials_deleted": false, agent: { ...AGENT_EXAMPLE, breaker: { state: "tripped", reason: "kill", since: "2026-11-24T03:13:45.735Z" } }}] });

const KILL_EXAMPLE = (KillResult as unknown as { examples: Record<string, any>[] }).examples[0] as Record<string, any>;

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
  duration_ms: Type.Integer(),
  cancelled: t.Array(t.String()),
  filled: t.Array(t.String(), { description: "orders that had already matched at the venue when the cancel reached them" }),
  failed: t.Array(t.String(), { description: "not confirmed before the deadline: status failed, flagged_for_review" }),
  agent: AgentModel,
}, { examples: [{ agent_id: KILL_EXAMPLE.agent_id, market_id: null, started_at: KILL_EXAMPLE.started_at, completed_at: KILL_EXAMPLE.completed_at, duration_ms: KILL_EXAMPLE.duration_ms, cancelled: KILL_EXAMPLE.cancelled, filled: [], failed: [], agent: { ...KILL_EXAMPLE.agent, breaker: { state: "closed", reason: null, since: null } } }] });

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
  duration_ms: t.Union([Type.Integer(), t.Null()]),
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
  duration_ms: Type.Integer(),
  agents: t.Array(FirmKillAgent),
}, { examples: [{ org_id: ORG, halted: true, halted_at: KILL_EXAMPLE.started_at, started_at: KILL_EXAMPLE.started_at, completed_at: KILL_EXAMPLE.completed_at, duration_ms: 7, agents: [{ agent_id: KILL_EXAMPLE.agent_id, kill_id: KILL_EXAMPLE.kill_id, duration_ms: 6, cancelled: KILL_EXAMPLE.cancelled, filled: [], failed: [], credentials_deleted: false, error: null }] }] });

export const FirmResumeResult = t.Object({ org_id: t.String(), halted: t.Literal(false), resumed: t.Array(t.String()) }, { examples: [{ org_id: ORG, halted: false, resumed: [KILL_EXAMPLE.agent_id] }] });
export const FirmState = t.Object(
  { org_id: t.String(), halted: t.Boolean(), halted_at: t.Union([t.String(), t.Null()]), agent_ids: t.Array(t.String()) },
  { examples: [{ org_id: ORG, halted: true, halted_at: KILL_EXAMPLE.started_at, agent_ids: [KILL_EXAMPLE.agent_id] }] },
);
