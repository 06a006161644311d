import { Elysia, t } from "elysia";
import { ForbiddenError } from "../../errors/errors.ts";
import type { authPlugin } from "../../http/auth.ts";
import type { Caller } from "../../http/caller.ts";
import { PageQuery } from "../../http/pagination.ts";
import { requestMeta } from "../../http/request-meta.ts";
import { CreateWebhookBody, WebhookIdParam, webhooksDetail } from "./model.ts";
import type { WebhookService } from "./service.ts";

/** Webhooks are the organization's: an agent-scoped key (or an x402 payer's agent) may not manage them. */
function orgOf(caller: Caller): string {
  if (caller.agentId) throw new ForbiddenError("an agent-scoped key cannot manage webhooks");
  return caller.orgId;
}

export function webhooksModule(deps: { webhooks: WebhookService; auth: ReturnType<typeof authPlugin> }) {
  const { webhooks } = deps;
  return new Elysia({ name: "webhooks", prefix: "/v1/webhooks" })
    .use(deps.auth)
    .post(
      "",
      async ({ caller, body, set, request }) => {
        const orgId = orgOf(caller);
        const reserved = requestMeta(request)?.reservedId;
        const created = await webhooks.create(orgId, body, reserved ? `whk_${reserved}` : undefined);
        set.status = 201;
        return created;
      },
      { auth: true, body: CreateWebhookBody, detail: webhooksDetail.create },
    )
    .get("", ({ caller, query }) => webhooks.list(orgOf(caller), { limit: query.limit ?? 50, cursor: query.cursor }), {
      auth: true,
      query: t.Object(PageQuery, { additionalProperties: false }),
      detail: webhooksDetail.list,
    })
    .get("/:id", ({ caller, params }) => webhooks.get(orgOf(caller), params.id), { auth: true, params: WebhookIdParam, detail: webhooksDetail.get })
    .post("/:id/test", ({ caller, params }) => webhooks.test(orgOf(caller), params.id), { auth: true, params: WebhookIdParam, detail: webhooksDetail.test })
    .post("/:id/enable", ({ caller, params }) => webhooks.enable(orgOf(caller), params.id), { auth: true, params: WebhookIdParam, detail: webhooksDetail.enable })
    .delete(
      "/:id",
      async ({ caller, params, set }) => {
        await webhooks.remove(orgOf(caller), params.id);
        set.status = 204;
        return null;
      },
      { auth: true, params: WebhookIdParam, detail: webhooksDetail.remove },
    );
}
