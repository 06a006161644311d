/**
 * Optional x402 payment: the SDK with `x402Fetch` (the reference @x402/fetch + @x402/evm exact scheme)
 * answers a 402 challenge (CONTRACT 10: x402 version 2, PAYMENT-REQUIRED / PAYMENT-SIGNATURE headers)
 * with an EIP-3009 USDC authorization signed by the wallet, on the same Idempotency-Key: first against
 * a small x402 resource written with @x402/core's header encoding that checks the signature with viem,
 * then as an anonymous agent against the live service with X402_ENABLED (local verifier). Without
 * x402 the challenge is a PaymentRequiredError.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import { getAddress, verifyTypedData } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BrokerClient, PaymentRequiredError, type PayloadIntentAnswer } from "../../packages/sdk/src/client.ts";
import { x402Fetch } from "../../packages/sdk/src/x402.ts";
import { ADMIN_TOKEN } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { DEM_YES } from "../support/payload.ts";
import { X402_ENV } from "../payments/x402-support.ts";
import { serveTestApp, type LiveService } from "./serve.ts";

const USDC_BASE_SEPOLIA = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const PAY_TO = "0x1111111111111111111111111111111111111111";
const seen: { paid: boolean; key: string | null; payer?: string; verified?: boolean }[] = [];
let server: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      const requirements = {
        scheme: "exact",
        network: "eip155:84532",
        amount: "1000",
        asset: USDC_BASE_SEPOLIA,
        payTo: PAY_TO,
        maxTimeoutSeconds: 60,
        extra: { name: "USDC", version: "2" },
      };
      const header = req.headers.get("payment-signature");
      if (!header) {
        seen.push({ paid: false, key: req.headers.get("idempotency-key") });
        const challenge = encodePaymentRequiredHeader({
          x402Version: 2,
          error: "payment required",
          resource: { url: url.toString(), description: "agent route", mimeType: "application/json" },
          accepts: [requirements],
        } as any);
        return Response.json(
          { type: "about:blank", title: "Payment required", status: 402, code: "payment_required", detail: "pay with x402" },
          { status: 402, headers: { "PAYMENT-REQUIRED": challenge, "content-type": "application/problem+json" } },
        );
      }
      const payment = decodePaymentSignatureHeader(header) as any;
      const auth = payment.payload.authorization;
      const verified = await verifyTypedData({
        address: auth.from,
        domain: { name: "USDC", version: "2", chainId: 84532, verifyingContract: USDC_BASE_SEPOLIA },
        types: {
          TransferWithAuthorization: [
            { name: "from", type: "address" },
            { name: "to", type: "address" },
            { name: "value", type: "uint256" },
            { name: "validAfter", type: "uint256" },
            { name: "validBefore", type: "uint256" },
            { name: "nonce", type: "bytes32" },
          ],
        },
        primaryType: "TransferWithAuthorization",
        message: { ...auth, value: BigInt(auth.value), validAfter: BigInt(auth.validAfter), validBefore: BigInt(auth.validBefore) },
        signature: payment.payload.signature,
      });
      const ok = verified && getAddress(auth.to) === getAddress(PAY_TO) && auth.value === "1000";
      seen.push({ paid: true, key: req.headers.get("idempotency-key"), payer: auth.from, verified: ok });
      if (!ok) return Response.json({ type: "about:blank", title: "bad payment", status: 402, code: "payment_required" }, { status: 402 });
      const settled = encodePaymentResponseHeader({ success: true, transaction: `0x${"ab".repeat(32)}`, network: "eip155:84532", payer: auth.from } as any);
      return Response.json({ id: "agt_paid", wallet_address: auth.from, mode: "payload" }, { status: 201, headers: { "PAYMENT-RESPONSE": settled } });
    },
  });
});
afterAll(() => server?.stop(true));

test("without x402 a 402 is a PaymentRequiredError", async () => {
  const client = new BrokerClient({ baseUrl: `http://127.0.0.1:${server.port}` });
  const err = await client.createAgent({ wallet_address: PAY_TO }).catch((e) => e);
  expect(err).toBeInstanceOf(PaymentRequiredError);
  expect(err.status).toBe(402);
  expect(err.code).toBe("payment_required");
});

test("with x402Fetch the wallet pays the challenge with a valid EIP-3009 authorization, on the same Idempotency-Key", async () => {
  seen.length = 0;
  const wallet = privateKeyToAccount(generatePrivateKey());
  const client = new BrokerClient({ baseUrl: `http://127.0.0.1:${server.port}`, fetch: x402Fetch(wallet) });
  const agent = await client.createAgent({ wallet_address: wallet.address });
  expect(agent.id).toBe("agt_paid");
  expect(seen.map((s) => s.paid)).toEqual([false, true]);
  expect(seen[1]!.verified).toBe(true);
  expect(getAddress(seen[1]!.payer!)).toBe(wallet.address);
  expect(seen[0]!.key).toBeTruthy();
  expect(seen[1]!.key).toBe(seen[0]!.key);
});

describeEachDatabase("x402 through the SDK against the live service", (_kind, database) => {
  let live: LiveService;
  beforeAll(async () => {
    live = await serveTestApp(await database(), { env: X402_ENV });
  });
  afterAll(() => live?.stop());

  test("an anonymous agent pays per request: intent approved, signed and submitted, order read; the payments are recorded", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const anonymous = new BrokerClient({ baseUrl: live.url });
    expect(await anonymous.placeIntent({ market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.45 }).catch((e) => e)).toBeInstanceOf(PaymentRequiredError);

    const paying = new BrokerClient({ baseUrl: live.url, fetch: x402Fetch(wallet) });
    const answer = (await paying.placeIntent({ market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.45 })) as PayloadIntentAnswer;
    expect(answer.status).toBe("awaiting_signature");
    expect(answer.unsigned_order.message.maker.toLowerCase()).toBe(wallet.address.toLowerCase());
    const submitted = await paying.signAndSubmit(answer, wallet);
    expect(submitted.status).toBe("open");
    expect((await paying.getOrder(answer.order_id)).status).toBe("open");

    const admin = new BrokerClient({ baseUrl: live.url, adminToken: ADMIN_TOKEN });
    const payments = await admin.listPayments({ payer: wallet.address });
    expect(payments.data.length).toBe(3);
    expect(payments.data.every((p) => p.agent_id === answer.agent_id && p.amount_units === "1000")).toBe(true);
  });
});
