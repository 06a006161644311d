import { Elysia, t } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { DecisionBody, ListOrdersQuery, OrderIdParam, OrderModel, ordersDetail, SubmitSignedBody } from "./model.ts";
import type { OrderService } from "./service.ts";

export function ordersModule(deps: { orders: OrderService; auth: ReturnType<typeof authPlugin> }) {
  const { orders } = deps;
  return new Elysia({ name: "orders", prefix: "/v1/orders" })
    .use(deps.auth)
    .post("/submit-signed", ({ caller, body }) => orders.submitSigned(caller, body), {
      auth: true,
      body: SubmitSignedBody,
      detail: ordersDetail.submitSigned,
    })
    .get("", ({ caller, query }) => orders.list(caller, query), {
      auth: true,
      query: ListOrdersQuery,
      detail: ordersDetail.list,
    })
    .get("/:id", ({ caller, params }) => orders.get(caller, params.id), {
      auth: true,
      params: OrderIdParam,
      response: { 200: OrderModel },
      detail: ordersDetail.get,
    })
    .post("/:id/approve", ({ caller, params, body }) => orders.approve(caller, params.id, body), {
      auth: true,
      params: OrderIdParam,
      body: t.Optional(DecisionBody),
      detail: ordersDetail.approve,
    })
    .post("/:id/reject", ({ caller, params, body }) => orders.reject(caller, params.id, body), {
      auth: true,
      params: OrderIdParam,
      body: t.Optional(DecisionBody),
      response: { 200: OrderModel },
      detail: ordersDetail.reject,
    })
    .delete("/:id", ({ caller, params }) => orders.cancel(caller, params.id), {
      auth: true,
      params: OrderIdParam,
      response: { 200: OrderModel },
      detail: ordersDetail.cancel,
    });
}
