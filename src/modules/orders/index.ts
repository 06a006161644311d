import { Elysia } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { requestMeta } from "../../http/request-meta.ts";
import { IntentBody, IntentQuery, ListOrdersQuery, OrderIdParam, OrderModel, SubmitSignedBody } from "./model.ts";
import type { IntentService } from "./intent-service.ts";
import type { OrderService } from "./order-service.ts";

export function ordersModule(deps: { intents: IntentService; orders: OrderService; auth: ReturnType<typeof authPlugin> }) {
  const { intents, orders } = deps;
  return new Elysia({ name: "orders", prefix: "/v1/orders" })
    .use(deps.auth)
    .post(
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
        detail: { summary: "Submit an order intent: eight risk checks, then an unsigned order (payload) or a placed order (delegated)", tags: ["orders"] },
      },
    )
    .post("/submit-signed", ({ caller, body }) => orders.submitSigned(caller, body), {
      auth: true,
      body: SubmitSignedBody,
      detail: { summary: "Forward the signed order to the venue (payload mode)", tags: ["orders"] },
    })
    .get("", ({ caller, query }) => orders.list(caller, query), {
      auth: true,
      query: ListOrdersQuery,
      detail: { summary: "List orders", tags: ["orders"] },
    })
    .get("/:id", ({ caller, params }) => orders.get(caller, params.id), {
      auth: true,
      params: OrderIdParam,
      response: { 200: OrderModel },
      detail: { summary: "Get an order with its status history", tags: ["orders"] },
    })
    .delete("/:id", ({ caller, params }) => orders.cancel(caller, params.id), {
      auth: true,
      params: OrderIdParam,
      response: { 200: OrderModel },
      detail: { summary: "Cancel one order", tags: ["orders"] },
    });
}
