import { Elysia, t } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { ListPaymentsQuery, PaymentModel } from "./model.ts";
import type { PaymentService } from "./payment-service.ts";

/** `GET /v1/payments` (admin token): x402 payments, newest first, with their agent, payer, status and the request served. */
export function paymentsModule(deps: { payments: PaymentService; auth: ReturnType<typeof authPlugin> }) {
  return new Elysia({ name: "payments", prefix: "/v1/payments" })
    .use(deps.auth)
    .get("", ({ query }) => deps.payments.list(query), {
      admin: true,
      query: ListPaymentsQuery,
      response: { 200: t.Object({ data: t.Array(PaymentModel), next_cursor: t.Union([t.String(), t.Null()]) }) },
      detail: { summary: "List x402 payments (admin)", tags: ["payments"] },
    });
}
