import { Elysia } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { AgentIdParam, AgentModel } from "../agents/model.ts";
import { CredentialsBody, credentialsResponses } from "./model.ts";
import type { CredentialsService } from "./service.ts";

export function credentialsModule(deps: { credentials: CredentialsService; auth: ReturnType<typeof authPlugin> }) {
  const { credentials } = deps;
  return new Elysia({ name: "credentials", prefix: "/v1/agents" })
    .use(deps.auth)
    .post("/:id/creds", ({ caller, params, body }) => credentials.submit(caller, params.id, body), {
      auth: true,
      params: AgentIdParam,
      body: CredentialsBody,
      response: { 200: AgentModel },
      detail: {
        summary: "Submit venue credentials: the agent moves to delegated mode",
        description:
          "Scopes must be a non-empty subset of order:place, order:cancel (withdraw, transfer, balance_modify: 400 forbidden_scope; " +
          "anything else: 400 invalid_scope). The venue confirms the credentials (refusal: 400 invalid_credentials; unreachable: 503 " +
          "venue_unavailable); they are then sealed to the service's public key. A kill-halted agent answers 409 agent_halted. " +
          "The answer shows scopes and a key hint, never the secret.",
        tags: ["agents"],
        responses: credentialsResponses.submit,
      },
    })
    .delete("/:id/creds", ({ caller, params }) => credentials.remove(caller, params.id), {
      auth: true,
      params: AgentIdParam,
      response: { 200: AgentModel },
      detail: {
        summary: "Delete the agent's credentials: back to payload mode",
        description: "Idempotent: an agent without credentials answers 200 too.",
        tags: ["agents"],
        responses: credentialsResponses.remove,
      },
    });
}
