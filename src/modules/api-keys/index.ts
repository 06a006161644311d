import { Elysia, t } from "elysia";
import { ForbiddenError } from "../../errors/errors.ts";
import type { authPlugin } from "../../http/auth.ts";
import { requestMeta } from "../../http/request-meta.ts";
import { PageQuery } from "../../http/pagination.ts";
import { apiKeysDetail, IssueKeyBody, IssuedKey, KeyIdParam } from "./model.ts";
import type { ApiKeyService } from "./service.ts";

export function apiKeysModule(deps: { apiKeys: ApiKeyService; auth: ReturnType<typeof authPlugin> }) {
  const { apiKeys } = deps;
  return new Elysia({ name: "api-keys", prefix: "/v1/api-keys" })
    .use(deps.auth)
    .post(
      "",
      async ({ caller, body, set, request }) => {
        if (caller.agentId) throw new ForbiddenError("an agent-scoped key cannot issue keys");
        set.status = 201;
        const reserved = requestMeta(request)?.reservedId;
        return apiKeys.issue(caller.orgId, { name: body.name, agentId: body.agent_id }, undefined, reserved ? `key_${reserved}` : undefined);
      },
      { auth: true, body: IssueKeyBody, response: { 201: IssuedKey }, detail: apiKeysDetail.issue },
    )
    .get(
      "",
      ({ caller, query }) => {
        if (caller.agentId) throw new ForbiddenError("an agent-scoped key cannot list keys");
        return apiKeys.list(caller.orgId, { limit: query.limit ?? 50, cursor: query.cursor });
      },
      { auth: true, query: t.Object(PageQuery, { additionalProperties: false }), detail: apiKeysDetail.list },
    )
    .delete(
      "/:id",
      async ({ caller, params, set }) => {
        if (caller.agentId) throw new ForbiddenError("an agent-scoped key cannot revoke keys");
        await apiKeys.revoke(caller.orgId, params.id);
        set.status = 204;
        return null;
      },
      { auth: true, params: KeyIdParam, detail: apiKeysDetail.revoke },
    );
}
