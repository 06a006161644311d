/**
 * Every refused payment answers 402 (400 for a malformed header) with a reason and leaves nothing
 * behind: no payment row, no agent, no order. Then replays: twenty concurrent requests carrying one
 * payment are served once, and a nonce stays used across a restart.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { ExactEvmSchemeV1 } from "@x402/evm/v1";
import { randomBytes } from "node:crypto";
import type { LocalAccount } from "viem";
import { openDatabase } from "../../src/db/database.ts";
import type { TestApp } from "../support/app.ts";
import { copyOfTemplate, describeEachDatabase } from "../support/databases.ts";
import { expectProblem } from "../support/payload.ts";
import { clientPayment, expectPaymentKeptOutOfLogs, footprint, handPayment, intent, newWallet, PAY_TO, paymentRequiredOf, paymentRows, REQUIREMENTS, USDC_BASE, x402App } from "./x402-support.ts";

const NOW = () => Math.floor(Date.now() / 1000);

describeEachDatabase("x402 refusals", (_kind, database) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await x402App(await database());
  });
  afterAll(async () => {
    await t?.app.stop();
  });

  /** Sends an intent with `header` and checks the refusal and that the payer left nothing behind. */
  async function refused(account: LocalAccount, headers: Record<string, string>, status: 400 | 402, reason?: string) {
    const res = await t.call("POST", "/v1/orders/intent", { body: intent(), headers });
    const problem = expectProblem(res, status, status === 400 ? "invalid_request" : "payment_refused");
    if (reason) expect(problem.reason).toBe(reason);
    if (status === 402) {
      // The challenge comes again, its `error` naming the reason.
      const again = decodePaymentRequiredHeader(res.headers.get("payment-required")!);
      expect(again.error).toBe(reason);
      expect(again.accepts[0]).toEqual(REQUIREMENTS);
    }
    expect(res.text).not.toMatch(/0x[0-9a-fA-F]{130}/); // no signature in the answer
    expect(await footprint(await database(), account.address)).toEqual({ payments: 0, wallets: 0, agents: 0, orders: 0 });
    return problem;
  }

  const sig = (h: string) => ({ "payment-signature": h });

  test("bad signature: signed by another key", async () => {
    const a = newWallet();
    await refused(a, sig(await handPayment(a, { signer: newWallet() })), 402, "invalid_exact_evm_signature");
  });

  test("wrong amount: offered below the price, or signed for less than it says", async () => {
    const a = newWallet();
    await refused(a, sig(await handPayment(a, { value: "999", accepted: { amount: "999" } })), 402, "invalid_exact_evm_payload_authorization_value_mismatch");
    await refused(a, sig(await handPayment(a, { value: "999" })), 402, "invalid_exact_evm_payload_authorization_value_mismatch");
  });

  test("wrong payee: addressed to another wallet, or signed to pay another one", async () => {
    const a = newWallet();
    const other = newWallet().address;
    await refused(a, sig(await handPayment(a, { to: other, accepted: { payTo: other } })), 402, "invalid_exact_evm_recipient_mismatch");
    await refused(a, sig(await handPayment(a, { to: other })), 402, "invalid_exact_evm_recipient_mismatch");
  });

  test("wrong asset: another token offered, or the signature made over another token's domain", async () => {
    const a = newWallet();
    await refused(a, sig(await handPayment(a, { accepted: { asset: USDC_BASE } })), 402, "invalid_exact_evm_asset_mismatch");
    await refused(a, sig(await handPayment(a, { domain: { verifyingContract: USDC_BASE } })), 402, "invalid_exact_evm_signature");
    // The Base mainnet domain name ("USD Coin") is not Base Sepolia's ("USDC").
    await refused(a, sig(await handPayment(a, { domain: { name: "USD Coin" } })), 402, "invalid_exact_evm_signature");
  });

  test("expired and not yet valid", async () => {
    const a = newWallet();
    await refused(a, sig(await handPayment(a, { validBefore: String(NOW() - 1) })), 402, "invalid_exact_evm_payload_authorization_valid_before");
    await refused(a, sig(await handPayment(a, { validAfter: String(NOW() + 3600), validBefore: String(NOW() + 7200) })), 402, "invalid_exact_evm_payload_authorization_valid_after");
  });

  test("wrong network: offered on Base, or signed for Base's chain id", async () => {
    const a = newWallet();
    await refused(a, sig(await handPayment(a, { accepted: { network: "eip155:8453" } })), 402, "invalid_exact_evm_network_mismatch");
    await refused(a, sig(await handPayment(a, { domain: { chainId: 8453 } })), 402, "invalid_exact_evm_signature");
  });

  test("version mismatch: a version 1 payment in PAYMENT-SIGNATURE, a version 2 one in X-PAYMENT", async () => {
    const a = newWallet();
    const bare = await t.call("GET", "/v1/agents");
    const v1 = await new ExactEvmSchemeV1(a).createPaymentPayload(1, bare.body.accepts[0]);
    await refused(a, sig(encodePaymentSignatureHeader(v1 as any)), 402, "invalid_x402_version");
    await refused(a, { "x-payment": await handPayment(a) }, 402, "invalid_x402_version");
    await refused(a, sig(await handPayment(a, { x402Version: 3 })), 402, "invalid_x402_version");
  });

  test("malformed or oversized header: 400", async () => {
    const a = newWallet();
    await refused(a, sig("%%% not base64 %%%"), 400);
    await refused(a, sig(Buffer.from("not json").toString("base64")), 400);
    await refused(a, sig(Buffer.from(JSON.stringify({ x402Version: 2, accepted: 1 })).toString("base64")), 400);
    const good = JSON.parse(Buffer.from(await handPayment(a), "base64").toString());
    good.payload.authorization.nonce = "0x1234";
    await refused(a, sig(Buffer.from(JSON.stringify(good)).toString("base64")), 400);
    await refused(a, sig("A".repeat(20_000)), 400);
    const p = await refused(a, sig(Buffer.from(JSON.stringify({ ...good, pad: "x".repeat(9000) })).toString("base64")), 400);
    expect(p.errors[0].path).toBe("/headers/payment-signature");
  });

  test("reused nonce: the second use is refused and creates nothing more", async () => {
    const a = newWallet();
    const header = await handPayment(a);
    const first = await t.call("POST", "/v1/orders/intent", { body: intent(), headers: sig(header) });
    expect(first.status).toBe(201);
    const before = await footprint(await database(), a.address);
    expect(before).toEqual({ payments: 1, wallets: 1, agents: 1, orders: 1 });
    const second = await t.call("POST", "/v1/orders/intent", { body: intent(), headers: sig(header) });
    expect(expectProblem(second, 402, "payment_refused").reason).toBe("invalid_exact_evm_nonce_already_used");
    // The same nonce signed again (a new signature) is refused too.
    const nonce = JSON.parse(Buffer.from(header, "base64").toString()).payload.authorization.nonce;
    const resigned = await t.call("POST", "/v1/orders/intent", { body: intent(), headers: sig(await handPayment(a, { nonce, validBefore: String(NOW() + 200) })) });
    expect(expectProblem(resigned, 402, "payment_refused").reason).toBe("invalid_exact_evm_nonce_already_used");
    expect(await footprint(await database(), a.address)).toEqual(before);
  });

  test("twenty concurrent requests carrying one payment: exactly one is served", async () => {
    const a = newWallet();
    const header = await clientPayment(a, await paymentRequiredOf(t, "POST", "/v1/orders/intent"));
    const answers = await Promise.all(Array.from({ length: 20 }, () => t.call("POST", "/v1/orders/intent", { body: intent(), headers: sig(header) })));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201).length).toBe(1);
    expect(statuses.filter((s) => s === 402).length).toBe(19);
    for (const r of answers.filter((x) => x.status === 402)) expect(r.body.reason).toBe("invalid_exact_evm_nonce_already_used");
    expect(await footprint(await database(), a.address)).toEqual({ payments: 1, wallets: 1, agents: 1, orders: 1 });
  });

  test("first payments of one wallet in parallel (distinct nonces) share one agent", async () => {
    const a = newWallet();
    const headers = await Promise.all(Array.from({ length: 6 }, () => handPayment(a)));
    const answers = await Promise.all(headers.map((h) => t.call("GET", "/v1/agents", { headers: sig(h) })));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(answers.map((r) => r.body.data[0].id)).size).toBe(1);
    expect(await footprint(await database(), a.address)).toEqual({ payments: 6, wallets: 1, agents: 1, orders: 0 });
  });

  test("no log line holds a signature or a payment header", () => expectPaymentKeptOutOfLogs(t));

  test("a payment to another payee than X402_PAY_TO, made by the reference client from a doctored challenge, is refused", async () => {
    const a = newWallet();
    const required = await paymentRequiredOf(t);
    required.accepts[0].payTo = newWallet().address;
    await refused(a, sig(await clientPayment(a, required)), 402, "invalid_exact_evm_recipient_mismatch");
    expect(required.accepts[0].payTo).not.toBe(PAY_TO);
  });
});

describeEachDatabase("x402 nonces across a restart", (kind, database) => {
  test("a restart between two uses of one nonce: the second is still refused", async () => {
    // PGlite: the database itself is closed and opened again; PostgreSQL: a new service on the same database.
    const own = kind === "pglite" ? await copyOfTemplate() : null;
    const open = async () => (own ? openDatabase({ kind: "pglite", dataDir: own }) : database());
    const db1 = await open();
    const a = newWallet();
    const header = await handPayment(a, { nonce: `0x${randomBytes(32).toString("hex")}` });
    const first = await x402App(db1);
    expect((await first.call("GET", "/v1/agents", { headers: { "payment-signature": header } })).status).toBe(200);
    await first.app.stop();
    if (own) await db1.close();

    const db2 = await open();
    const second = await x402App(db2);
    try {
      const again = await second.call("GET", "/v1/agents", { headers: { "payment-signature": header } });
      expect(expectProblem(again, 402, "payment_refused").reason).toBe("invalid_exact_evm_nonce_already_used");
      expect((await paymentRows(db2, a.address)).map((r) => r.status)).toEqual(["settled"]);
    } finally {
      await second.app.stop();
      if (own) await db2.close();
    }
  });
});
