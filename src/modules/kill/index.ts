import { Elysia, t } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { findNul } from "../../http/no-nul.ts";
import { NotFoundError } from "../../errors/errors.ts";
import { problemResponses } from "../../errors/problem-model.ts";
import { AgentIdParam, AgentModel } from "../agents/model.ts";
import type { KillService } from "./service.ts";

export const KillBody = t.Object({ reason: t.Optional(t.String({ maxLength: 500 })) }, { additionalProperties: false, examples: [{ reason: "strategy misbehaving" }] });

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
}, { examples: [{"kill_id": "kil_20ew38z9zpcds2kng153", "agent_id": "agt_20ew38ygo3k92ke1kcen", "started_at": "2026-11-24T03:13:45.735Z", "completed_at": "2026-11-24T03:13:45.741Z", "duration_ms": 6, "cancelled": ["ord_20ew38ypczk6rwcdelno"], "filled": [], "failed": [], "credentials_deleted": false, "agent": {"id": "agt_20ew38ygo3k92ke1kcen", "org_id": "org_20ew38y1x4wvanve4gs1", "name": "quickstart", "mode": "payload", "wallet_address": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", "signer_address": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", "signature_type": 0, "limits": {"min_order_usdc": 1, "max_order_usdc": 100, "daily_volume_usdc": 1000, "capital_usdc": 1000, "max_market_exposure_pct": 0.2, "kelly_fraction": 0.25, "kelly_fallback_pct": 0.02, "price_band": 0.1, "max_slippage": 0.02, "max_depth_share": 0.25, "book_max_age_s": 60, "min_time_to_end_s": 3600, "market_deny": [], "category_deny": [], "category_allow": [], "max_venue_errors": 5, "breaker_cooldown_s": 60}, "breaker": {"state": "tripped", "reason": "kill", "since": "2026-11-24T03:13:45.735Z"}, "daily_volume": {"used_usdc": 0, "limit_usdc": 1000, "resets_at": "2026-11-25T00:00:00.000Z"}, "open_orders": 0, "credentials": null, "created_at": "2026-11-24T03:13:45.401Z"}}] });

export function killModule(deps: { kill: KillService; auth: ReturnType<typeof authPlugin> }) {
  return new Elysia({ name: "kill", prefix: "/v1/agents" }).use(deps.auth).post(
    "/:id/kill",
    async ({ caller, params, request }) => {
      // The body is optional: none, an empty body, or {reason}.
      const text = await request.text().catch(() => "");
      let reason: string | null = null;
      if (text.trim()) {
        const { Value } = await import("@sinclair/typebox/value");
        const { InvalidRequestError } = await import("../../errors/errors.ts");
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw new InvalidRequestError("the request body is not valid JSON", [{ path: "/", message: "malformed JSON" }]);
        }
        const errors = [...Value.Errors(KillBody, parsed)].map((e) => ({ path: e.path || "/", message: e.message }));
        const nul = findNul(parsed);
        if (nul) errors.push({ path: nul, message: "must not contain the NUL character" });
        if (errors.length) throw new InvalidRequestError(`${errors[0].path}: ${errors[0].message}`, errors);
        reason = (parsed as { reason?: string }).reason ?? null;
      }
      return deps.kill.kill(caller, params.id, reason);
    },
    {
      auth: true,
      params: AgentIdParam,
      parse: "none",
      response: { 200: KillResult },
      detail: {
        summary: "Kill switch: trip the breaker, cancel every open order within the deadline, delete delegated credentials",
        description: "The body is optional: none, an empty body, or `{reason}` (docs/api.md#post-v1agentsidkill).",
        tags: ["agents"],
        // The body is read by hand (parse: "none"), so it is documented here rather than by a schema.
        requestBody: { required: false, content: { "application/json": { schema: KillBody, example: { reason: "strategy misbehaving" } } } },
        responses: problemResponses(new NotFoundError("agent")),
      },
    },
  );
}
