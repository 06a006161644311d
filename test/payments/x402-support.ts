/**
 * Helpers of the x402 suites: an app with X402_ENABLED, payments made the way the reference client
 * makes them (@x402/core's x402Client with @x402/evm's exact scheme and a viem account), and
 * payments signed by hand with one field changed, for the refusals.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { authorizationTypes } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { sql } from "drizzle-orm";
import { expect } from "bun:test";
import { randomBytes } from "node:crypto";
import type { LocalAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Database } from "../../src/db/database.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { rowsOf } from "../support/databases.ts";
import { DEM_YES } from "../support/payload.ts";

export const PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
/** USDC on Base Sepolia and its EIP-712 domain, as the x402 tables list it. */
export const USDC_BASE_SEPOLIA = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
export const USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
export const X402_ENV = { X402_ENABLED: "true", X402_PAY_TO: PAY_TO, X402_NETWORK: "eip155:84532", X402_PRICE_USDC: "0.001" };

export function x402App(database: Database, opts: Parameters<typeof createTestApp>[1] = {}): Promise<TestApp> {
  return createTestApp(database, { ...opts, env: { ...X402_ENV, ...(opts.env ?? {}) } });
}

export const newWallet = (): LocalAccount => privateKeyToAccount(generatePrivateKey());

export function intent(body: Record<string, unknown> = {}) {
  return { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.45, ...body };
}

/** The PAYMENT-REQUIRED of a request without payment, decoded. */
export async function paymentRequiredOf(t: TestApp, method = "GET", path = "/v1/agents"): Promise<PaymentRequired> {
  const res = await t.call(method, path, method === "POST" ? { body: intent() } : {});
  if (res.status !== 402) throw new Error(`expected 402, got ${res.status}: ${res.text}`);
  return decodePaymentRequiredHeader(res.headers.get("payment-required")!);
}

/** A PAYMENT-SIGNATURE made by the reference client for the service's 402. */
export async function clientPayment(account: LocalAccount, required: PaymentRequired): Promise<string> {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
}

export interface HandMade {
  signer?: LocalAccount;
  to?: string;
  value?: string;
  validAfter?: string;
  validBefore?: string;
  nonce?: `0x${string}`;
  /** The token domain signed over. */
  domain?: { name?: string; version?: string; chainId?: number; verifyingContract?: string };
  accepted?: Partial<PaymentRequirements>;
  x402Version?: number;
}

export const REQUIREMENTS: PaymentRequirements = {
  scheme: "exact",
  network: "eip155:84532",
  amount: "1000",
  asset: USDC_BASE_SEPOLIA,
  payTo: PAY_TO,
  maxTimeoutSeconds: 300,
  extra: { name: "USDC", version: "2" },
};

/** A version 2 payment signed by hand, each field overridable. */
export async function handPayment(account: LocalAccount, o: HandMade = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: account.address,
    to: o.to ?? PAY_TO,
    value: o.value ?? "1000",
    validAfter: o.validAfter ?? "0",
    validBefore: o.validBefore ?? String(now + 300),
    nonce: o.nonce ?? (`0x${randomBytes(32).toString("hex")}` as `0x${string}`),
  };
  const signature = await (o.signer ?? account).signTypedData({
    domain: { name: "USDC", version: "2", chainId: 84532, verifyingContract: USDC_BASE_SEPOLIA, ...(o.domain ?? {}) } as any,
    types: authorizationTypes,
    primaryType: "TransferWithAuthorization",
    message: {
      from: authorization.from,
      to: authorization.to as `0x${string}`,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce,
    },
  });
  return encodePaymentSignatureHeader({
    x402Version: o.x402Version ?? 2,
    resource: { url: "http://localhost/v1/agents" },
    accepted: { ...REQUIREMENTS, ...(o.accepted ?? {}) },
    payload: { authorization, signature },
  } as any);
}

/**
 * Sends one payment with an intent twice (served or refused, then refused as used) and checks that
 * no log line holds its signature, its header or any 65-byte hex string, while the requests were logged.
 */
export async function expectPaymentKeptOutOfLogs(t: TestApp): Promise<void> {
  const a = newWallet();
  const header = await handPayment(a);
  const signature = JSON.parse(Buffer.from(header, "base64").toString()).payload.signature;
  await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { "payment-signature": header } });
  await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { "payment-signature": header } });
  const logs = t.logs.join("\n");
  expect(logs).toContain("request");
  expect(logs).not.toContain(signature.slice(2, 40));
  expect(logs).not.toContain(header.slice(0, 60));
  expect(logs).not.toMatch(/[0-9a-fA-F]{130}/);
}

/** What a payer left in the database: payments, wallet agents, agents and orders. */
export async function footprint(database: Database, payer: string) {
  const p = payer.toLowerCase();
  const count = async (q: ReturnType<typeof sql>) => Number((await rowsOf(database, q))[0].n);
  return {
    payments: await count(sql`select count(*)::int as n from payments where payer = ${p}`),
    wallets: await count(sql`select count(*)::int as n from x402_wallets where payer = ${p}`),
    agents: await count(sql`select count(*)::int as n from agents where wallet_address = ${p}`),
    orders: await count(sql`select count(*)::int as n from orders o join agents a on a.id = o.agent_id where a.wallet_address = ${p}`),
  };
}

export async function paymentRows(database: Database, payer: string) {
  return rowsOf(database, sql`select * from payments where payer = ${payer.toLowerCase()} order by created_at`);
}
