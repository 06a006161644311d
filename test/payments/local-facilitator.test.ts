/** The local verifier on its own: version 2 and version 1 requirements, its clock, and what it refuses. */
import { expect, test } from "bun:test";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactEvmSchemeV1 } from "@x402/evm/v1";
import { LocalFacilitator } from "../../src/modules/payments/local-facilitator.ts";
import { requirementsV1, termsFrom } from "../../src/modules/payments/requirements.ts";
import { newWallet, PAY_TO, REQUIREMENTS } from "./x402-support.ts";

const terms = termsFrom({ enabled: true, payTo: PAY_TO, network: "eip155:84532", priceUsdc: "0.001", facilitatorUrl: null });

test("a version 2 payment made by @x402/evm's client verifies and settles (no transaction: kept for later)", async () => {
  const a = newWallet();
  const made = await new ExactEvmScheme(a).createPaymentPayload(2, REQUIREMENTS);
  const payload = { ...made, accepted: REQUIREMENTS, resource: { url: "http://localhost/v1/agents" } } as any;
  const local = new LocalFacilitator();
  expect(await local.verify(payload, REQUIREMENTS)).toEqual({ isValid: true, payer: a.address });
  expect(await local.settle(payload, REQUIREMENTS)).toEqual({ success: true, payer: a.address, transaction: "", network: "eip155:84532" });
});

test("a version 1 payment verifies against version 1 requirements, and its time window follows the clock", async () => {
  const a = newWallet();
  const v1 = requirementsV1(terms, "http://localhost/v1/agents");
  const payload = (await new ExactEvmSchemeV1(a).createPaymentPayload(1, v1 as any)) as any;
  expect((await new LocalFacilitator().verify(payload, v1)).isValid).toBe(true);
  // Ten minutes on, the authorization (valid for 300 s) has expired; twenty minutes back it was not valid yet.
  expect((await new LocalFacilitator(() => Date.now() + 600_000).verify(payload, v1)).invalidReason).toBe("invalid_exact_evm_payload_authorization_valid_before");
  expect((await new LocalFacilitator(() => Date.now() - 1_200_000).verify(payload, v1)).invalidReason).toBe("invalid_exact_evm_payload_authorization_valid_after");
  // Settling after expiry fails with the same reason.
  const late = await new LocalFacilitator(() => Date.now() + 600_000).settle(payload, v1);
  expect(late).toMatchObject({ success: false, errorReason: "invalid_exact_evm_payload_authorization_valid_before" });
});

test("a tampered authorization (value raised after signing) and a Permit2 payload are refused", async () => {
  const a = newWallet();
  const made = (await new ExactEvmScheme(a).createPaymentPayload(2, REQUIREMENTS)) as any;
  const tampered = { ...made, accepted: REQUIREMENTS, payload: { ...made.payload, authorization: { ...made.payload.authorization, value: "2000" } } };
  expect((await new LocalFacilitator().verify(tampered, REQUIREMENTS)).invalidReason).toBe("invalid_exact_evm_signature");
  const permit2 = { ...made, accepted: REQUIREMENTS, payload: { permit2Authorization: {}, signature: "0x00" } };
  expect((await new LocalFacilitator().verify(permit2, REQUIREMENTS)).invalidReason).toBe("unsupported_payload_type");
});
