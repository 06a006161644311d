import { Elysia, t } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { AgentIdParam, AgentModel } from "../agents/model.ts";
import type { KillService } from "./service.ts";

export const KillBody = t.Object({ reason: t.Optional(t.String({ maxLength: 500 })) }, { additionalProperties: false });

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
});

export function killModule(deps: { kill: KillService; auth: ReturnType<typeof authPlugin> }) {
  return new Elysia({ name: "kill", prefix: "/v1/agents" }).use(deps.auth).post(
    "/:id/kill",
    // The body is optional: none, an empty body, or {reason}; parsed and limited like every other body.
    ({ caller, params, body }) => deps.kill.kill(caller, params.id, body?.reason ?? null),
    {
      auth: true,
      params: AgentIdParam,
      body: t.Optional(KillBody),
      response: { 200: KillResult },
      detail: {
        summary: "Kill switch: trip the breaker, cancel every open order within the deadline, delete delegated credentials",
        tags: ["agents"],
      },
    },
  );
}
