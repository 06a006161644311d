import { Elysia, t } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { findNul } from "../../http/no-nul.ts";
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
        tags: ["agents"],
      },
    },
  );
}
