/**
 * The facilitator port (issue 13): verifies an x402 payment and settles it. Two implementations:
 * @x402/core's HTTPFacilitatorClient (`/verify`, `/settle` of the x402 facilitator API) when
 * X402_FACILITATOR_URL is set, and the LocalFacilitator (local-facilitator.ts) when it is not.
 * The answers are @x402/core's VerifyResponse and SettleResponse; a refusal is an answer with a
 * reason, and only an unreachable or garbled facilitator is an exception (FacilitatorUnavailableError).
 */
import { HTTPFacilitatorClient } from "@x402/core/http";
import { SettleError, VerifyError } from "@x402/core/types";
import type { PaymentPayload, PaymentPayloadV1, PaymentRequirements, PaymentRequirementsV1, SettleResponse, VerifyResponse } from "@x402/core/types";

export type AnyPaymentPayload = PaymentPayload | PaymentPayloadV1;
export type AnyPaymentRequirements = PaymentRequirements | PaymentRequirementsV1;

export interface PaymentFacilitator {
  readonly kind: "http" | "local";
  verify(payload: AnyPaymentPayload, requirements: AnyPaymentRequirements): Promise<VerifyResponse>;
  settle(payload: AnyPaymentPayload, requirements: AnyPaymentRequirements): Promise<SettleResponse>;
}

/** The facilitator could not be asked (network error, time-out, an answer that is not the protocol's). */
export class FacilitatorUnavailableError extends Error {
  override name = "FacilitatorUnavailableError";
}

/** A remote facilitator through @x402/core's HTTP client; its refusals come back as answers. */
export class HttpFacilitator implements PaymentFacilitator {
  readonly kind = "http";
  private readonly client: HTTPFacilitatorClient;

  constructor(url: string, timeoutMs: number) {
    this.client = new HTTPFacilitatorClient({ url, timeoutMs });
  }

  async verify(payload: AnyPaymentPayload, requirements: AnyPaymentRequirements): Promise<VerifyResponse> {
    try {
      return await this.client.verify(payload as PaymentPayload, requirements as PaymentRequirements);
    } catch (error) {
      if (error instanceof VerifyError) return { isValid: false, invalidReason: error.invalidReason ?? "verification_failed", payer: error.payer };
      throw new FacilitatorUnavailableError(describe(error));
    }
  }

  async settle(payload: AnyPaymentPayload, requirements: AnyPaymentRequirements): Promise<SettleResponse> {
    try {
      return await this.client.settle(payload as PaymentPayload, requirements as PaymentRequirements);
    } catch (error) {
      if (error instanceof SettleError) {
        return { success: false, errorReason: error.errorReason ?? "settlement_failed", errorMessage: error.errorMessage, payer: error.payer, transaction: error.transaction ?? "", network: error.network };
      }
      throw new FacilitatorUnavailableError(describe(error));
    }
  }
}

/** For logs: the error's name and message, cut short, with long hex strings (signatures) left out. */
function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}`.replace(/0x[0-9a-fA-F]{80,}/g, "0x…").slice(0, 300) : "facilitator error";
}
