import { Elysia, t } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { CancelBody, DecisionBody, ListOrdersQuery, OrderIdParam, OrderModel, ordersDetail, SubmitSignedBody } from "./model.ts";
import type { OrderService } from "./service.ts";
import { InvalidRequestError } from "../../errors/errors.ts";

/** An optional JSON object body: none or empty (parsed to null) is undefined; anything but an object is refused. */
function optionalObject<T>(body: T | null | undefined): T | undefined {
  if (body === null || body === undefined) return undefined;
  if (typeof body !== "object" || Array.isArray(body)) {
    throw new InvalidRequestError("the body must be a JSON object, or empty", [{ path: "/", message: "must be an object" }]);
  }
  return body;
}

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
    .delete("/:id", ({ caller, params, body }) => orders.cancel(caller, params.id, optionalObject(body)), {
      auth: true,
      params: OrderIdParam,
      body: t.Optional(CancelBody),
      response: { 200: OrderModel },
      detail: ordersDetail.cancel,
    });
}
