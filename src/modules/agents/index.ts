import { requestMeta } from "../../http/request-meta.ts";
import { Elysia, t } from "elysia";
import { authPlugin } from "../../http/auth.ts";
import { PageQuery } from "../../http/pagination.ts";
import { LimitsPatchSchema } from "../../risk/limits.ts";
import { AgentIdParam, AgentModel, CreateAgentBody } from "./model.ts";
import type { AgentService } from "./service.ts";

export function agentsModule(deps: { agents: AgentService; auth: ReturnType<typeof authPlugin> }) {
  const { agents } = deps;
  return new Elysia({ name: "agents", prefix: "/v1/agents" })
    .use(deps.auth)
    .post("", async ({ caller, body, set, request }) => {
      set.status = 201;
      return agents.create(caller, body, requestMeta(request)?.reservedId);
    }, { auth: true, body: CreateAgentBody, response: { 201: AgentModel }, detail: { summary: "Create an agent (starts in payload mode)", tags: ["agents"] } })
    .get("", ({ caller, query }) => agents.list(caller, { limit: query.limit ?? 50, cursor: query.cursor }), {
      auth: true,
      query: t.Object(PageQuery, { additionalProperties: false }),
      detail: { summary: "List agents", tags: ["agents"] },
    })
    .get("/:id", ({ caller, params }) => agents.get(caller, params.id), {
      auth: true,
      params: AgentIdParam,
      response: { 200: AgentModel },
      detail: { summary: "Get an agent", tags: ["agents"] },
    })
    .patch("/:id/limits", ({ caller, params, body }) => agents.patchLimits(caller, params.id, body), {
      auth: true,
      params: AgentIdParam,
      body: LimitsPatchSchema,
      response: { 200: AgentModel },
      detail: { summary: "Change some of an agent's risk limits", tags: ["agents"] },
    })
    .post("/:id/breaker", ({ caller, params }) => agents.tripBreaker(caller, params.id), {
      auth: true,
      params: AgentIdParam,
      response: { 200: AgentModel },
      detail: { summary: "Trip the agent's breaker by hand", tags: ["agents"] },
    })
    .post("/:id/resume", ({ caller, params }) => agents.resume(caller, params.id), {
      auth: true,
      params: AgentIdParam,
      response: { 200: AgentModel },
      detail: { summary: "Close the breaker after a kill or a manual trip", tags: ["agents"] },
    });
}
