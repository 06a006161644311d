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
      response: {
        200: t.Object(
          { data: t.Array(PaymentModel), next_cursor: t.Union([t.String(), t.Null()]) },
          {
            examples: [
              {
                data: [
                  {
                    id: "pay_20ew3zsej28okquo0w2x",
                    agent_id: "agt_20ew3zsej28okquo0w2y",
                    payer: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
                    amount_usdc: 0.001,
                    amount_units: "1000",
                    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
                    network: "eip155:84532",
                    pay_to: "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
                    nonce: `0x${"ab".repeat(32)}`,
                    x402_version: 2,
                    status: "settled",
                    failure_reason: null,
                    transaction: null,
                    request: { method: "POST", path: "/v1/orders/intent", status: 201 },
                    created_at: "2026-11-24T03:20:22.460Z",
                    updated_at: "2026-11-24T03:20:22.470Z",
                  },
                ],
                next_cursor: null,
              },
            ],
          },
        ),
      },
      detail: { summary: "List x402 payments (admin)", tags: ["payments"] },
    });
}
