/**
 * An anonymous agent paying with x402 through the SDK (x402Fetch: the reference @x402/fetch with
 * @x402/evm and a viem account) loses the answer to its intent (the fault proxy drops it after the
 * service placed the order). The SDK retries with the same Idempotency-Key and a fresh payment (a new
 * EIP-3009 nonce, so a new PAYMENT-SIGNATURE): the service recognises the wallet's retry and replays
 * the first answer. One order, one settled payment; the retry's payment is not charged.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BrokerClient, type PayloadIntentAnswer } from "../../packages/sdk/src/client.ts";
import { x402Fetch } from "../../packages/sdk/src/x402.ts";
import { ADMIN_TOKEN } from "../support/app.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";
import { DEM_YES } from "../support/payload.ts";
import { footprint, X402_ENV } from "../payments/x402-support.ts";
import { type FaultProxy, startProxy } from "./fault-proxy.ts";
import { serveTestApp, type LiveService } from "./serve.ts";

describeEachDatabase("x402 retries through a fault-injecting proxy", (_kind, database) => {
  let live: LiveService;
  let proxy: FaultProxy;
  beforeAll(async () => {
    live = await serveTestApp(await database(), { env: X402_ENV });
    proxy = await startProxy(live.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await live?.stop();
  });

  test("a dropped paid intent answer is retried with a new payment: one order, one settled payment, the first answer", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const paying = new BrokerClient({ baseUrl: proxy.url, fetch: x402Fetch(wallet), retry: { retries: 3, baseDelayMs: 10 } });
    proxy.seen.length = 0;
    // The unpaid try gets its 402 challenge; the paid one is handled and its answer dropped.
    proxy.plan.set("/v1/orders/intent", ["pass", "drop"]);
    const answer = (await paying.placeIntent({ market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.45 })) as PayloadIntentAnswer;
    expect(answer.status).toBe("awaiting_signature");

    const tries = proxy.seen.filter((s) => s.path === "/v1/orders/intent");
    expect(tries.map((s) => s.status)).toEqual([402, 201, 402, 201]);
    expect(new Set(tries.map((s) => s.key)).size).toBe(1);

    // Exactly one order: the one the first, dropped answer carried and the replay repeats.
    const db = await database();
    expect(await footprint(db, wallet.address)).toEqual({ payments: 2, wallets: 1, agents: 1, orders: 1 });
    const orders = await rowsOf(db, sql`select o.id from orders o join agents a on a.id = o.agent_id where a.wallet_address = ${wallet.address.toLowerCase()}`);
    expect(orders.map((o) => o.id)).toEqual([answer.order_id]);

    // One settled payment (the first); the retry's payment was not charged.
    const admin = new BrokerClient({ baseUrl: live.url, adminToken: ADMIN_TOKEN });
    const payments = (await admin.listPayments({ payer: wallet.address })).data;
    expect(payments.filter((p) => p.status === "settled")).toHaveLength(1);
    const notCharged = payments.filter((p) => p.status !== "settled");
    expect(notCharged.map((p) => p.status)).toEqual(["failed"]);
    expect(notCharged[0]!.failure_reason).toContain("Idempotency-Key");
    expect(notCharged[0]!.transaction).toBeNull();
  });
});
