/**
 * X402_FACILITATOR_URL: the service asks a remote facilitator over the x402 facilitator API. A
 * stand-in (a small Bun server speaking POST /verify and POST /settle) answers as told; when
 * settlement fails nothing the request created remains and the answer says why.
 */
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { randomBytes } from "node:crypto";
import { ADMIN_TOKEN, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { expectProblem } from "../support/payload.ts";
import { expectPaymentKeptOutOfLogs, footprint, handPayment, intent, newWallet, paymentRows, REQUIREMENTS, x402App } from "./x402-support.ts";

type Mode = { verify: "ok" | "refuse" | "refuse400" | "down"; settle: "ok" | "fail" | "fail400" | "error" };

describeEachDatabase("x402 through an HTTP facilitator", (_kind, database) => {
  let t: TestApp;
  let facilitator: ReturnType<typeof Bun.serve>;
  const mode: Mode = { verify: "ok", settle: "ok" };
  const seen: { path: string; body: any }[] = [];

  beforeAll(async () => {
    facilitator = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        const path = new URL(req.url).pathname;
        const body = (await req.json()) as any;
        seen.push({ path, body });
        const payer = body.paymentPayload?.payload?.authorization?.from;
        const network = body.paymentRequirements?.network;
        if (path === "/verify") {
          if (mode.verify === "down") return new Response("bad gateway", { status: 502 });
          if (mode.verify === "refuse") return Response.json({ isValid: false, invalidReason: "invalid_exact_evm_insufficient_balance", payer });
          if (mode.verify === "refuse400") return Response.json({ isValid: false, invalidReason: "invalid_exact_evm_nonce_already_used", payer }, { status: 400 });
          return Response.json({ isValid: true, payer });
        }
        if (path === "/settle") {
          if (mode.settle === "error") return new Response("oops", { status: 500 });
          if (mode.settle === "fail400") return Response.json({ success: false, errorReason: "invalid_exact_evm_transaction_failed", transaction: "", network, payer }, { status: 400 });
          if (mode.settle === "fail") return Response.json({ success: false, errorReason: "invalid_exact_evm_insufficient_balance", transaction: "", network, payer });
          return Response.json({ success: true, transaction: `0x${randomBytes(32).toString("hex")}`, network, payer });
        }
        return new Response("not found", { status: 404 });
      },
    });
    t = await x402App(await database(), { env: { X402_FACILITATOR_URL: `http://127.0.0.1:${facilitator.port}` } });
  });
  afterAll(async () => {
    await t?.app.stop();
    facilitator?.stop(true);
  });
  beforeEach(() => {
    mode.verify = "ok";
    mode.settle = "ok";
    seen.length = 0;
  });

  const paid = async (account: ReturnType<typeof newWallet>, method: string, path: string, body?: unknown) =>
    t.call(method, path, { body, headers: { "payment-signature": await handPayment(account) } });

  test("verify and settle are asked with the x402 facilitator API's request body; the transaction comes back", async () => {
    const a = newWallet();
    const res = await paid(a, "GET", "/v1/agents");
    expect(res.status).toBe(200);
    expect(seen.map((s) => s.path)).toEqual(["/verify", "/settle"]);
    for (const s of seen) {
      expect(s.body.x402Version).toBe(2);
      expect(s.body.paymentRequirements).toEqual(REQUIREMENTS);
      expect(s.body.paymentPayload.accepted).toEqual(REQUIREMENTS);
      expect(s.body.paymentPayload.payload.authorization.from).toBe(a.address);
    }
    const settled = decodePaymentResponseHeader(res.headers.get("payment-response")!);
    expect(settled.success).toBe(true);
    const [row] = await paymentRows(await database(), a.address);
    expect(row.status).toBe("settled");
    expect(row.transaction).toBe(settled.transaction);
  });

  test("settlement fails on a wallet's first request: 402 with the reason, no order and no agent remain", async () => {
    const a = newWallet();
    mode.settle = "fail";
    const res = await paid(a, "POST", "/v1/orders/intent", intent());
    const problem = expectProblem(res, 402, "payment_failed");
    expect(problem.reason).toBe("invalid_exact_evm_insufficient_balance");
    expect(problem.detail).toContain("could not be settled");
    const response = decodePaymentResponseHeader(res.headers.get("payment-response")!);
    expect(response.success).toBe(false);
    expect(response.errorReason).toBe("invalid_exact_evm_insufficient_balance");
    expect(res.headers.get("payment-required")).not.toBeNull();
    expect(await footprint(await database(), a.address)).toEqual({ payments: 1, wallets: 0, agents: 0, orders: 0 });
    const [row] = await paymentRows(await database(), a.address);
    // The handler had approved the intent (201) before settlement failed.
    expect(row).toMatchObject({ status: "failed", agent_id: null, response_status: 201 });
    expect(row.failure_reason).toContain("invalid_exact_evm_insufficient_balance");
    const listed = await t.call("GET", `/v1/payments?payer=${a.address}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(listed.body.data.map((p: any) => p.status)).toEqual(["failed"]);
  });

  test("settlement fails for an agent that exists: its order is removed and its reservation released, the agent stays", async () => {
    const a = newWallet();
    const first = await paid(a, "GET", "/v1/agents");
    const agentId = first.body.data[0].id;
    mode.settle = "fail";
    const res = await paid(a, "POST", "/v1/orders/intent", intent({ size_usdc: 10 }));
    expectProblem(res, 402, "payment_failed");
    expect(await footprint(await database(), a.address)).toEqual({ payments: 2, wallets: 1, agents: 1, orders: 0 });
    expect((await paymentRows(await database(), a.address)).map((r) => [r.status, r.response_status])).toEqual([
      ["settled", 200],
      ["failed", 201],
    ]);
    mode.settle = "ok";
    const agent = await paid(a, "GET", `/v1/agents/${agentId}`);
    expect(agent.status).toBe(200);
    expect(agent.body.open_orders).toBe(0);
    expect(agent.body.daily_volume.used_usdc).toBe(0);
    // Served again once paid: the same intent is approved.
    expect((await paid(a, "POST", "/v1/orders/intent", intent({ size_usdc: 10 }))).status).toBe(201);
  });

  test("settlement of submit-signed fails: the forwarded order is cancelled at the venue", async () => {
    const a = newWallet();
    const approved = await paid(a, "POST", "/v1/orders/intent", intent());
    expect(approved.status).toBe(201);
    mode.settle = "fail";
    const signature = await a.signTypedData(approved.body.unsigned_order);
    const res = await paid(a, "POST", "/v1/orders/submit-signed", { order_id: approved.body.order_id, signature });
    expectProblem(res, 402, "payment_failed");
    mode.settle = "ok";
    const order = await paid(a, "GET", `/v1/orders/${approved.body.order_id}`);
    expect(order.body.status).toBe("cancelled");
    expect(order.body.history.map((h: any) => h.status)).toEqual(["awaiting_signature", "submitting", "open", "cancelled"]);
  });

  test("a facilitator that cannot settle (HTTP 500): 402, nothing remains", async () => {
    const a = newWallet();
    mode.settle = "error";
    const res = await paid(a, "POST", "/v1/orders/intent", intent());
    expect(expectProblem(res, 402, "payment_failed").reason).toBe("facilitator_unavailable");
    expect((await paymentRows(await database(), a.address))[0].response_status).toBe(201);
    expect(await footprint(await database(), a.address)).toEqual({ payments: 1, wallets: 0, agents: 0, orders: 0 });
  });

  test("the facilitator refuses the payment at verify: 402 with its reason, nothing recorded", async () => {
    const a = newWallet();
    mode.verify = "refuse";
    const res = await paid(a, "POST", "/v1/orders/intent", intent());
    expect(expectProblem(res, 402, "payment_refused").reason).toBe("invalid_exact_evm_insufficient_balance");
    expect(seen.map((s) => s.path)).toEqual(["/verify"]);
    expect(await footprint(await database(), a.address)).toEqual({ payments: 0, wallets: 0, agents: 0, orders: 0 });
  });

  test("no log line holds a signature or a payment header", () => expectPaymentKeptOutOfLogs(t));

  test("refusals answered with HTTP 400 by the facilitator carry its reason too", async () => {
    const a = newWallet();
    mode.verify = "refuse400";
    expect(expectProblem(await paid(a, "GET", "/v1/agents"), 402, "payment_refused").reason).toBe("invalid_exact_evm_nonce_already_used");
    mode.verify = "ok";
    mode.settle = "fail400";
    expect(expectProblem(await paid(a, "GET", "/v1/agents"), 402, "payment_failed").reason).toBe("invalid_exact_evm_transaction_failed");
    expect(await footprint(await database(), a.address)).toEqual({ payments: 1, wallets: 0, agents: 0, orders: 0 });
  });

  test("the facilitator is down at verify: 503 facilitator_unavailable, nothing recorded, the payment can be used later", async () => {
    const a = newWallet();
    const header = await handPayment(a);
    mode.verify = "down";
    const res = await t.call("GET", "/v1/agents", { headers: { "payment-signature": header } });
    expectProblem(res, 503, "facilitator_unavailable");
    expect(res.headers.get("retry-after")).toBe("2");
    expect(await footprint(await database(), a.address)).toEqual({ payments: 0, wallets: 0, agents: 0, orders: 0 });
    mode.verify = "ok";
    expect((await t.call("GET", "/v1/agents", { headers: { "payment-signature": header } })).status).toBe(200);
  });
});
