/**
 * The Elysia side of the x402 flow: after a paid request's handler (or its error) has produced the
 * answer, the payment service settles it (below 500) and the answer gets PAYMENT-RESPONSE, or is
 * replaced by a 402 when settlement fails. Registered before the routes (its hooks are global).
 * The paid caller itself comes from the auth plugin, which asks the service (PaymentHook) when a
 * request has no X-API-Key.
 */
import { Elysia } from "elysia";
import type { PaymentService } from "./payment-service.ts";

export function x402Plugin(payments: PaymentService) {
  return new Elysia({ name: "x402" })
    .mapResponse({ as: "global" }, async ({ request, responseValue, set }) => {
      if (!payments.hasSession(request)) return;
      const isResponse = responseValue instanceof Response;
      const status = isResponse ? responseValue.status : typeof set.status === "number" ? set.status : 200;
      const body = isResponse ? await readJson(responseValue) : responseValue;
      const outcome = await payments.finish(request, status, body);
      if (!outcome) return;
      if ("response" in outcome) return outcome.response;
      if (isResponse) {
        for (const [k, v] of Object.entries(outcome.headers)) responseValue.headers.set(k, v);
        return responseValue;
      }
      for (const [k, v] of Object.entries(outcome.headers)) set.headers[k] = v;
    })
    .onAfterResponse({ as: "global" }, async ({ request }) => {
      await payments.abandon(request);
    });
}

async function readJson(response: Response): Promise<unknown> {
  try {
    return await response.clone().json();
  } catch {
    return null;
  }
}
