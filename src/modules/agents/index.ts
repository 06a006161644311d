import { requestMeta } from "../../http/request-meta.ts";
import { Elysia, t } from "elysia";
import { authPlugin } from "../../http/auth.ts";
import { PageQuery } from "../../http/pagination.ts";
import { AgentIdParam, AgentModel, agentsDetail, CreateAgentBody, PatchLimitsBody } from "./model.ts";
import type { AgentService } from "./service.ts";

export function agentsModule(deps: { agents: AgentService; auth: ReturnType<typeof authPlugin> }) {
  const { agents } = deps;
  return new Elysia({ name: "agents", prefix: "/v1/agents" })
    .use(deps.auth)
    .post("", async ({ caller, body, set, request }) => {
      set.status = 201;
      return agents.create(caller, body, requestMeta(request)?.reservedId);
    }, { auth: true, body: CreateAgentBody, response: { 201: AgentModel }, detail: agentsDetail.create })
    .get("", ({ caller, query }) => agents.list(caller, { limit: query.limit ?? 50, cursor: query.cursor }), {
      auth: true,
      query: t.Object(PageQuery, { additionalProperties: false }),
      detail: agentsDetail.list,
    })
    .get("/:id", ({ caller, params }) => agents.get(caller, params.id), {
      auth: true,
      params: AgentIdParam,
      response: { 200: AgentModel },
      detail: agentsDetail.get,
    })
    .patch("/:id/limits", ({ caller, params, body }) => agents.patchLimits(caller, params.id, body), {
      auth: true,
      params: AgentIdParam,
      body: PatchLimitsBody,
      response: { 200: AgentModel },
      detail: agentsDetail.patchLimits,
    })
    .post("/:id/breaker", ({ caller, params }) => agents.tripBreaker(caller, params.id), {
      auth: true,
      params: AgentIdParam,
      response: { 200: AgentModel },
      detail: agentsDetail.breaker,
    })
    .post("/:id/resume", ({ caller, params }) => agents.resume(caller, params.id), {
      auth: true,
      params: AgentIdParam,
      response: { 200: AgentModel },
      detail: agentsDetail.resume,
    });
}
