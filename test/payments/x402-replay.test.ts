/**
 * Idempotency-Key records of paid requests belong to the payer (the wallet), not to the payment
 * header: a payer's retry with a new payment replays the stored answer and that payment is not
 * charged; another body under the key is 409; another payer's key is its own. A used payment is
 * accepted again only, as the very authorization recorded, to replay a stored answer of its payer:
 * nothing is verified, settled or created again. Any other use of its nonce is 402
 * invalid_exact_evm_nonce_already_used, and a record that is gone by the time the replay claims it
 * leaves the request refused, not run unpaid.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from "@x402/core/http";
import { sql } from "drizzle-orm";
import type { TestApp } from "../support/app.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";
import { expectProblem } from "../support/payload.ts";
import { clientPayment, footprint, handPayment, intent, newWallet, paymentRequiredOf, paymentRows, x402App } from "./x402-support.ts";

describeEachDatabase("x402 replays under Idempotency-Key", (_kind, database) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await x402App(await database());
  });
  afterAll(async () => {
    await t?.app.stop();
  });

  /** A paid POST /v1/orders/intent under a new Idempotency-Key: the payer, its header, the key and the 201. */
  async function paidIntent() {
    const payer = newWallet();
    const header = await clientPayment(payer, await paymentRequiredOf(t, "POST", "/v1/orders/intent"));
    const key = `idem-${crypto.randomUUID()}`;
    const paid = await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { "idempotency-key": key, "payment-signature": header } });
    expect(paid.status).toBe(201);
    expect(paid.headers.get("payment-response")).not.toBeNull();
    return { payer, header, key, paid };
  }

  const nonceUsed = (res: Awaited<ReturnType<TestApp["call"]>>) => {
    expect(expectProblem(res, 402, "payment_refused").reason).toBe("invalid_exact_evm_nonce_already_used");
    expect(decodePaymentRequiredHeader(res.headers.get("payment-required")!).accepts.length).toBe(1);
    expect(res.headers.get("idempotent-replayed")).toBeNull();
  };

  test("the same payment, key and request replay the stored answer, again and again, charging nothing", async () => {
    const { payer, header, key, paid } = await paidIntent();
    for (let i = 0; i < 2; i++) {
      const replay = await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { "idempotency-key": key, "payment-signature": header } });
      expect(replay.status).toBe(201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toEqual(paid.body);
    }
    expect(await footprint(await database(), payer.address)).toEqual({ payments: 1, wallets: 1, agents: 1, orders: 1 });
    expect((await paymentRows(await database(), payer.address)).map((r) => r.status)).toEqual(["settled"]);
  });

  test("a used nonce on anything that is not that replay is 402: another body, key, route, or no key", async () => {
    const { payer, header, key } = await paidIntent();
    const pay = { "payment-signature": header };
    nonceUsed(await t.call("POST", "/v1/orders/intent", { body: intent({ size_usdc: 6 }), headers: { ...pay, "idempotency-key": key } }));
    nonceUsed(await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { ...pay, "idempotency-key": `${key}-other` } }));
    nonceUsed(await t.call("POST", "/v1/orders/intent", { body: intent(), headers: pay }));
    nonceUsed(await t.call("POST", "/v1/orders/submit-signed", { body: intent(), headers: { ...pay, "idempotency-key": key } }));
    nonceUsed(await t.call("GET", "/v1/agents", { headers: { ...pay, "idempotency-key": key } }));
    // Another authorization over the used nonce (not the one verified and recorded) proves nothing: 402, not a replay,
    // whether another key signed it for the payer or the payer re-signed the nonce with other terms.
    const nonce = (decodePaymentSignatureHeader(header) as any).payload.authorization.nonce;
    nonceUsed(await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { "idempotency-key": key, "payment-signature": await handPayment(payer, { nonce, signer: newWallet() }) } }));
    nonceUsed(await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { "idempotency-key": key, "payment-signature": await handPayment(payer, { nonce, validBefore: String(Math.floor(Date.now() / 1000) + 200) }) } }));
    expect(await footprint(await database(), payer.address)).toEqual({ payments: 1, wallets: 1, agents: 1, orders: 1 });
  });

  test("the payer's retry with a new payment (same key and body) replays the answer; that payment is not charged", async () => {
    const { payer, key, paid } = await paidIntent();
    for (let i = 0; i < 2; i++) {
      const fresh = await clientPayment(payer, await paymentRequiredOf(t, "POST", "/v1/orders/intent"));
      const again = await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { "payment-signature": fresh, "idempotency-key": key } });
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.headers.get("payment-response")).toBeNull();
      expect(again.body).toEqual(paid.body);
      // The retry's own header now replays too: its authorization was verified and recorded (failed, not charged).
      const exact = await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { "payment-signature": fresh, "idempotency-key": key } });
      expect(exact.status).toBe(201);
      expect(exact.body).toEqual(paid.body);
    }
    expect(await footprint(await database(), payer.address)).toEqual({ payments: 3, wallets: 1, agents: 1, orders: 1 });
    const rows = await paymentRows(await database(), payer.address);
    expect(rows.map((r) => r.status)).toEqual(["settled", "failed", "failed"]);
    for (const r of rows.slice(1)) {
      expect(r.failure_reason).toBe("not charged: answered from the Idempotency-Key record (its stored answer was replayed)");
      expect(r.transaction).toBeNull();
      expect(r.response_status).toBe(201);
    }
  });

  test("the same key with another body from the payer is 409, not charged; another payer's same key is its own", async () => {
    const { payer, key, paid } = await paidIntent();
    const fresh = await clientPayment(payer, await paymentRequiredOf(t, "POST", "/v1/orders/intent"));
    const conflict = await t.call("POST", "/v1/orders/intent", { body: intent({ size_usdc: 6 }), headers: { "payment-signature": fresh, "idempotency-key": key } });
    expectProblem(conflict, 409, "idempotency_conflict");
    expect(conflict.headers.get("payment-response")).toBeNull();
    expect((await paymentRows(await database(), payer.address)).map((r) => [r.status, r.failure_reason])).toEqual([
      ["settled", null],
      ["failed", "not charged: answered from the Idempotency-Key record (409, another request under the key)"],
    ]);

    // Another wallet, the same key and body: a request of its own, run and charged; nothing of the first payer's shows.
    const other = newWallet();
    const theirs = await t.call("POST", "/v1/orders/intent", {
      body: intent(),
      headers: { "payment-signature": await clientPayment(other, await paymentRequiredOf(t, "POST", "/v1/orders/intent")), "idempotency-key": key },
    });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.headers.get("payment-response")).not.toBeNull();
    expect(theirs.body.order_id).not.toBe(paid.body.order_id);
    expect(theirs.text).not.toContain(paid.body.agent_id);
    expect(await footprint(await database(), other.address)).toEqual({ payments: 1, wallets: 1, agents: 1, orders: 1 });
    expect((await paymentRows(await database(), other.address)).map((r) => r.status)).toEqual(["settled"]);
    expect(await footprint(await database(), payer.address)).toEqual({ payments: 2, wallets: 1, agents: 1, orders: 1 });
  });

  test("a record gone between the check and the claim leaves the request refused (402), not run unpaid", async () => {
    const { payer, header, key } = await paidIntent();
    const store = t.app.services.idempotency;
    const hasAnswer = store.hasAnswer.bind(store);
    const db = await database();
    // The record expires (or is released) right after the payment check saw it.
    store.hasAnswer = async (scope, k, hash, now) => {
      const seen = await hasAnswer(scope, k, hash, now);
      await db.db.execute(sql`delete from idempotency_keys where scope = ${scope} and key = ${k}`);
      return seen;
    };
    try {
      nonceUsed(await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { "idempotency-key": key, "payment-signature": header } }));
    } finally {
      store.hasAnswer = hasAnswer;
    }
    // Nothing ran, and the claim the refused replay made is not left behind "in progress".
    expect(await footprint(await database(), payer.address)).toEqual({ payments: 1, wallets: 1, agents: 1, orders: 1 });
    expect(await rowsOf(await database(), sql`select status from idempotency_keys where key = ${key}`)).toEqual([]);
    nonceUsed(await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { "idempotency-key": key, "payment-signature": header } }));
  });

  test("an API key wins over the payment header: a revoked key gets 401, never the payment's stored answer", async () => {
    const { header, key, paid } = await paidIntent();
    const { key: orgKey } = await t.newOrg();
    const issued = await t.call("POST", "/v1/api-keys", { key: orgKey, body: { name: "short-lived" } });
    expect((await t.call("DELETE", `/v1/api-keys/${issued.body.id}`, { key: orgKey })).status).toBe(204);
    const res = await t.call("POST", "/v1/orders/intent", { key: issued.body.key, body: intent(), headers: { "idempotency-key": key, "payment-signature": header } });
    expectProblem(res, 401, "unauthenticated");
    expect(res.text).not.toContain(paid.body.order_id);
  });
});
