import { Elysia, t } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { InvalidRequestError, NotFoundError } from "../../errors/errors.ts";
import { problemResponses } from "../../errors/problem-model.ts";
import { AgentIdParam, AgentModel } from "../agents/model.ts";
import { VenueAuthSchema } from "../orders/model.ts";
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
