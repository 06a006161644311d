import { Elysia } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { ListOrdersQuery, OrderIdParam, OrderModel, SubmitSignedBody } from "./model.ts";
import type { OrderService } from "./service.ts";

export function ordersModule(deps: { orders: OrderService; auth: ReturnType<typeof authPlugin> }) {
  const { orders } = deps;
  return new Elysia({ name: "orders", prefix: "/v1/orders" })
    .use(deps.auth)
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
