/**
 * The answers of the x402 flow. Every refusal is 402 with a PAYMENT-REQUIRED header (x402 version 2,
 * its `error` naming the reason) so a client can pay again, and a problem-details body whose
 * `reason` is the x402 reason code. A malformed payment header is a 400 invalid_request instead.
 */
import { ProblemError } from "../../errors/problem-error.ts";

export type PaymentProblemCode = "payment_required" | "payment_refused" | "payment_failed";

export class PaymentProblem extends ProblemError {
  constructor(code: PaymentProblemCode, reason: string, detail: string, headers: Record<string, string>) {
    const title = code === "payment_required" ? "Payment required" : code === "payment_refused" ? "Payment refused" : "Payment not settled";
    super(402, code, title, detail, { extra: { reason }, headers });
  }
}

/** 503: the facilitator could not be asked; nothing was reserved or changed. */
export class FacilitatorUnavailableProblem extends ProblemError {
  constructor() {
    super(503, "facilitator_unavailable", "Payment facilitator unavailable", "the payment facilitator could not be reached; nothing was charged or changed, try again later", {
      headers: { "retry-after": "2" },
    });
  }
}
