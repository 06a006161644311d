/**
 * The local verifier (X402_FACILITATOR_URL unset): it checks the EIP-3009 `transferWithAuthorization`
 * itself — the signature over the token's EIP-712 domain (viem, with @x402/evm's authorization
 * types), the payee, the amount, the time window and the network — and "settles" by accepting the
 * authorization, which the payments table keeps (payload column) for an operator to submit on chain
 * before its validBefore. It has no chain access: the payer must be an EOA (no ERC-1271 or ERC-6492
 * smart-wallet signatures) and balances are not checked. The nonce is checked by the payment service
 * against its own durable record, for both facilitators. Reasons are x402's `exact` EVM reason codes.
 */
import type { PaymentRequirements, PaymentRequirementsV1, SettleResponse, VerifyResponse } from "@x402/core/types";
import { authorizationTypes } from "@x402/evm";
import { getEvmChainIdV1 } from "@x402/evm/v1";
import { getAddress, isAddressEqual, verifyTypedData } from "viem";
import type { AnyPaymentPayload, AnyPaymentRequirements, PaymentFacilitator } from "./facilitator.ts";
import type { Eip3009Payload } from "./model.ts";

export const REASONS = {
  scheme: "invalid_exact_evm_scheme",
  network: "invalid_exact_evm_network_mismatch",
  domain: "invalid_exact_evm_missing_eip712_domain",
  payload: "unsupported_payload_type",
  signature: "invalid_exact_evm_signature",
  recipient: "invalid_exact_evm_recipient_mismatch",
  expired: "invalid_exact_evm_payload_authorization_valid_before",
  notYetValid: "invalid_exact_evm_payload_authorization_valid_after",
  value: "invalid_exact_evm_payload_authorization_value_mismatch",
} as const;

/** validBefore must leave this many seconds for settlement (as @x402/evm's facilitator requires). */
const SETTLE_MARGIN_S = 6n;

export class LocalFacilitator implements PaymentFacilitator {
  readonly kind = "local";

  constructor(private readonly clock: () => number = Date.now) {}

  async verify(payload: AnyPaymentPayload, requirements: AnyPaymentRequirements): Promise<VerifyResponse> {
    const inner = payload.payload as Partial<Eip3009Payload>;
    const auth = inner.authorization;
    if (!auth || typeof inner.signature !== "string") return { isValid: false, invalidReason: REASONS.payload };
    const payer = auth.from;
    const fail = (invalidReason: string, invalidMessage: string): VerifyResponse => ({ isValid: false, invalidReason, invalidMessage, payer });

    const v1 = isV1(requirements);
    const scheme = "accepted" in payload ? payload.accepted.scheme : payload.scheme;
    const network = "accepted" in payload ? payload.accepted.network : payload.network;
    if (scheme !== "exact" || requirements.scheme !== "exact") return fail(REASONS.scheme, "only the exact scheme is accepted");
    if (network !== requirements.network) return fail(REASONS.network, `the payment is for ${network}, not ${requirements.network}`);
    const { name, version } = requirements.extra as { name?: string; version?: string };
    if (!name || !version) return fail(REASONS.domain, "the requirements lack the token's EIP-712 domain");
    const amount = v1 ? requirements.maxAmountRequired : requirements.amount;

    const valid = await verifyTypedData({
      address: getAddress(auth.from),
      domain: { name, version, chainId: chainIdOf(requirements), verifyingContract: getAddress(requirements.asset) },
      types: authorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: {
        from: getAddress(auth.from),
        to: getAddress(auth.to),
        value: BigInt(auth.value),
        validAfter: BigInt(auth.validAfter),
        validBefore: BigInt(auth.validBefore),
        nonce: auth.nonce as `0x${string}`,
      },
      signature: inner.signature as `0x${string}`,
    }).catch(() => false);
    if (!valid) return fail(REASONS.signature, "the signature does not recover to the payer over this token's domain");
    if (!isAddressEqual(getAddress(auth.to), getAddress(requirements.payTo))) return fail(REASONS.recipient, "the authorization pays another address");
    const now = BigInt(Math.floor(this.clock() / 1000));
    if (BigInt(auth.validBefore) < now + SETTLE_MARGIN_S) return fail(REASONS.expired, "the authorization has expired");
    if (BigInt(auth.validAfter) > now) return fail(REASONS.notYetValid, "the authorization is not valid yet");
    if (BigInt(auth.value) !== BigInt(amount)) return fail(REASONS.value, `the authorization is for ${auth.value} units, the price is ${amount}`);
    return { isValid: true, payer };
  }

  /** Re-checks the authorization and accepts it; the payments table keeps it for settlement on chain. */
  async settle(payload: AnyPaymentPayload, requirements: AnyPaymentRequirements): Promise<SettleResponse> {
    const check = await this.verify(payload, requirements);
    if (!check.isValid) {
      return { success: false, errorReason: check.invalidReason, errorMessage: check.invalidMessage, payer: check.payer, transaction: "", network: requirements.network };
    }
    return { success: true, payer: check.payer, transaction: "", network: requirements.network };
  }
}

function isV1(r: AnyPaymentRequirements): r is PaymentRequirementsV1 {
  return "maxAmountRequired" in r;
}

/** The EVM chain id of a requirement's network: CAIP-2 (`eip155:84532`) in version 2, a name in version 1. */
function chainIdOf(r: AnyPaymentRequirements): number {
  if (!isV1(r)) return Number((r as PaymentRequirements).network.split(":")[1]);
  return getEvmChainIdV1(r.network as Parameters<typeof getEvmChainIdV1>[0]);
}
