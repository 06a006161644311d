import { Elysia } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { requestMeta } from "../../http/request-meta.ts";
import { ordersDetail } from "../orders/model.ts";
import { IntentBody, IntentQuery } from "./model.ts";
import type { IntentService } from "./service.ts";

export function intentsModule(deps: { intents: IntentService; auth: ReturnType<typeof authPlugin> }) {
  const { intents } = deps;
  return new Elysia({ name: "intents", prefix: "/v1/orders" }).use(deps.auth).post(
    "/intent",
    async ({ caller, body, query, set, request }) => {
      const answer = await intents.submit(caller, body, query.dry_run === true, requestMeta(request)?.reservedId);
      set.status = answer.status;
      return answer.body;
    },
    {
      auth: true,
      body: IntentBody,
      query: IntentQuery,
      detail: ordersDetail.intent,
    },
  );
}
