/**
 * x402 end to end over real HTTP with the reference client: @x402/fetch wrapping fetch, @x402/evm's
 * exact scheme and a viem account. 402 → pay → intent approved → sign the unsigned order → submit-signed
 * paid again → order open; then who sees what, the admin listing, version 1 X-PAYMENT, a risk
 * rejection (served and settled), a venue outage (not settled) and the per-wallet rate limit.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { ExactEvmSchemeV1 } from "@x402/evm/v1";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ADMIN_TOKEN, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { hookedVenue } from "../support/hooked-venue.ts";
import { expectProblem, newTrader } from "../support/payload.ts";
import { clientPayment, footprint, handPayment, intent, newWallet, PAY_TO, paymentRequiredOf, paymentRows, USDC_BASE_SEPOLIA, x402App } from "./x402-support.ts";

describeEachDatabase("x402 with the reference client", (_kind, database) => {
  let t: TestApp;
  let server: ReturnType<typeof Bun.serve>;
  let base: string;

  beforeAll(async () => {
    t = await x402App(await database());
    server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => t.app.handle(req) });
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    server?.stop(true);
    await t?.app.stop();
  });

  function payingFetch(account = newWallet()) {
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: account });
    const pay = wrapFetchWithPayment(fetch, client);
    const json = async (method: string, path: string, body?: unknown) => {
      const res = await pay(`${base}${path}`, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null, text };
    };
    return { account, json };
  }

  test("402, pay, intent approved, sign, submit-signed paid again, order open", async () => {
    // Without a key or a payment: 402 with the x402 version 2 challenge.
    const bare = await fetch(`${base}/v1/orders/intent`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(intent()) });
    expect(bare.status).toBe(402);
    const required = decodePaymentRequiredHeader(bare.headers.get("payment-required")!);
    expect(required.x402Version).toBe(2);
    expect(required.resource.url).toBe(`${base}/v1/orders/intent`);
    expect(required.accepts).toEqual([
      { scheme: "exact", network: "eip155:84532", amount: "1000", asset: USDC_BASE_SEPOLIA, payTo: PAY_TO, maxTimeoutSeconds: 300, extra: { name: "USDC", version: "2" } },
    ]);
    expect((await bare.json()).code).toBe("payment_required");

    const { account, json } = payingFetch();
    const approved = await json("POST", "/v1/orders/intent", intent());
    expect(approved.status).toBe(201);
    expect(approved.body.status).toBe("awaiting_signature");
    const settled = decodePaymentResponseHeader(approved.headers.get("payment-response")!);
    expect(settled.success).toBe(true);
    expect(settled.network).toBe("eip155:84532");
    expect(settled.payer!.toLowerCase()).toBe(account.address.toLowerCase());
    // The paying wallet is the agent: the order's maker and signer.
    const unsigned = approved.body.unsigned_order;
    expect(unsigned.message.maker.toLowerCase()).toBe(account.address.toLowerCase());
    expect(unsigned.message.signer.toLowerCase()).toBe(account.address.toLowerCase());

    const signature = await account.signTypedData(unsigned);
    const submitted = await json("POST", "/v1/orders/submit-signed", { order_id: approved.body.order_id, signature });
    expect(submitted.status).toBe(200);
    expect(submitted.body.status).toBe("open");
    expect(decodePaymentResponseHeader(submitted.headers.get("payment-response")!).success).toBe(true);

    const order = await json("GET", `/v1/orders/${approved.body.order_id}`);
    expect(order.status).toBe(200);
    expect(order.body.status).toBe("open");

    const agent = await json("GET", `/v1/agents/${approved.body.agent_id}`);
    expect(agent.status).toBe(200);
    expect(agent.body.mode).toBe("payload");
    expect(agent.body.wallet_address).toBe(account.address.toLowerCase());
    expect(agent.body.open_orders).toBe(1);

    // Four paid requests, four settled payments with their nonces, all on this agent.
    const rows = await paymentRows(await database(), account.address);
    expect(rows.map((r) => [r.method, r.path, r.status, Number(r.response_status)])).toEqual([
      ["POST", "/v1/orders/intent", "settled", 201],
      ["POST", "/v1/orders/submit-signed", "settled", 200],
      ["GET", `/v1/orders/${approved.body.order_id}`, "settled", 200],
      ["GET", `/v1/agents/${approved.body.agent_id}`, "settled", 200],
    ]);
    expect(new Set(rows.map((r) => r.nonce)).size).toBe(4);
    expect(rows.every((r) => r.agent_id === approved.body.agent_id)).toBe(true);

    // The admin sees them; without the admin token there is nothing to see.
    const listed = await fetch(`${base}/v1/payments?agent_id=${approved.body.agent_id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(listed.status).toBe(200);
    const page = await listed.json();
    expect(page.data.length).toBe(4);
    expect(page.data[3]).toMatchObject({
      agent_id: approved.body.agent_id,
      payer: account.address.toLowerCase(),
      amount_usdc: 0.001,
      amount_units: "1000",
      status: "settled",
      request: { method: "POST", path: "/v1/orders/intent", status: 201 },
    });
    expect(page.data[3].nonce).toMatch(/^0x[0-9a-f]{64}$/);
    expect(JSON.stringify(page)).not.toContain("signature");
    expect((await fetch(`${base}/v1/payments`)).status).toBe(401);
  });

  test("the payer acts on its own agent only; organizations and payers never see each other (404)", async () => {
    const { account, json } = payingFetch();
    const mine = await json("GET", "/v1/agents");
    expect(mine.status).toBe(200);
    expect(mine.body.data.length).toBe(1);
    const myAgent = mine.body.data[0];
    expect(myAgent.wallet_address).toBe(account.address.toLowerCase());
    // The same wallet's later payments land on the same agent.
    expect((await json("GET", "/v1/agents")).body.data[0].id).toBe(myAgent.id);

    const org = await newTrader(t);
    expect((await json("GET", `/v1/agents/${org.agent.id}`)).status).toBe(404);
    expect((await json("POST", `/v1/agents/${org.agent.id}/kill`)).status).toBe(404);
    expect((await json("POST", "/v1/orders/intent", intent({ agent_id: org.agent.id }))).status).toBe(404);
    expect((await json("GET", `/v1/orders?agent_id=${org.agent.id}`)).status).toBe(404);
    const orgOrder = await t.call("POST", "/v1/orders/intent", { key: org.key, body: intent({ agent_id: org.agent.id }) });
    expect(orgOrder.status).toBe(201);
    expect((await json("GET", `/v1/orders/${orgOrder.body.order_id}`)).status).toBe(404);
    expect((await json("DELETE", `/v1/orders/${orgOrder.body.order_id}`)).status).toBe(404);
    expectProblem(await t.call("GET", `/v1/agents/${myAgent.id}`, { key: org.key }), 404, "not_found");
    const orgList = await t.call("GET", "/v1/agents", { key: org.key });
    expect(orgList.body.data.map((a: any) => a.id)).toEqual([org.agent.id]);

    // Delegated mode and the organization's own routes stay organization-only: no x402 there.
    const creds = await t.call("POST", `/v1/agents/${myAgent.id}/creds`, { body: { api_key: "k", api_secret: "s", scopes: ["order:place"] } });
    expectProblem(creds, 401, "unauthenticated");
    expectProblem(await t.call("POST", "/v1/agents", { body: { wallet_address: account.address } }), 401, "unauthenticated");
    expectProblem(await t.call("GET", "/v1/api-keys"), 401, "unauthenticated");
  });

  test("a paying agent turns its own dead-man switch on, beats and turns it off; another's is 404; approvals stay with API keys (401)", async () => {
    const { account, json } = payingFetch();
    const myAgent = (await json("GET", "/v1/agents")).body.data[0];
    expect(myAgent.heartbeat).toBeNull();

    const on = await json("PUT", `/v1/agents/${myAgent.id}/heartbeat`, { interval_s: 60 });
    expect(on.status).toBe(200);
    expect(on.body.heartbeat).toMatchObject({ interval_s: 60 });
    expect(decodePaymentResponseHeader(on.headers.get("payment-response")!).success).toBe(true);
    await Bun.sleep(5);
    const beat = await json("POST", `/v1/agents/${myAgent.id}/heartbeat`);
    expect(beat.status).toBe(200);
    expect(Date.parse(beat.body.heartbeat.deadline_at)).toBeGreaterThan(Date.parse(on.body.heartbeat.deadline_at));
    const off = await json("DELETE", `/v1/agents/${myAgent.id}/heartbeat`);
    expect(off.status).toBe(200);
    expect(off.body.heartbeat).toBeNull();

    const rows = await paymentRows(await database(), account.address);
    expect(rows.map((r) => [r.method, r.path, r.status, Number(r.response_status)]).slice(-3)).toEqual([
      ["PUT", `/v1/agents/${myAgent.id}/heartbeat`, "settled", 200],
      ["POST", `/v1/agents/${myAgent.id}/heartbeat`, "settled", 200],
      ["DELETE", `/v1/agents/${myAgent.id}/heartbeat`, "settled", 200],
    ]);

    // Another organization's agent is not found; its switch does not move.
    const org = await newTrader(t);
    expect((await json("PUT", `/v1/agents/${org.agent.id}/heartbeat`, { interval_s: 60 })).status).toBe(404);
    expect((await t.call("GET", `/v1/agents/${org.agent.id}`, { key: org.key })).body.heartbeat).toBeNull();

    // Approvals are for people: without an API key there is no payment offer, only 401.
    const pending = await t.call("PATCH", `/v1/agents/${org.agent.id}/limits`, { key: org.key, body: { approval_threshold_usdc: 1 } });
    expect(pending.status).toBe(200);
    const placed = await t.call("POST", "/v1/orders/intent", { key: org.key, body: intent({ agent_id: org.agent.id }) });
    expect(placed.status).toBe(202);
    expectProblem(await t.call("POST", `/v1/orders/${placed.body.order_id}/approve`), 401, "unauthenticated");
    expectProblem(await t.call("POST", `/v1/orders/${placed.body.order_id}/reject`), 401, "unauthenticated");
  });

  test("version 1: X-PAYMENT is accepted and answered with X-PAYMENT-RESPONSE", async () => {
    const account = newWallet();
    const bare = await t.call("GET", "/v1/agents");
    expect(bare.status).toBe(402);
    const v1 = bare.body.accepts[0];
    expect(bare.body.x402Version).toBe(1);
    expect(v1).toMatchObject({ scheme: "exact", network: "base-sepolia", maxAmountRequired: "1000", asset: USDC_BASE_SEPOLIA, payTo: PAY_TO });
    const payload = await new ExactEvmSchemeV1(account).createPaymentPayload(1, v1);
    const res = await t.call("GET", "/v1/agents", { headers: { "x-payment": encodePaymentSignatureHeader(payload as any) } });
    expect(res.status).toBe(200);
    expect(res.body.data[0].wallet_address).toBe(account.address.toLowerCase());
    expect(decodePaymentResponseHeader(res.headers.get("x-payment-response")!).success).toBe(true);
    expect((await paymentRows(await database(), account.address))[0]).toMatchObject({ x402_version: 1, status: "settled" });
  });

  test("a risk rejection is served and settled", async () => {
    const { account, json } = payingFetch();
    const rejected = await json("POST", "/v1/orders/intent", intent({ size_usdc: 500 }));
    expectProblem({ ...rejected, text: rejected.text } as any, 422, "risk_rejected");
    expect(decodePaymentResponseHeader(rejected.headers.get("payment-response")!).success).toBe(true);
    expect((await paymentRows(await database(), account.address))[0]).toMatchObject({ status: "settled", response_status: 422 });
  });
});

describeEachDatabase("x402 and client errors", (_kind, database) => {
  test("answers below 500 are served and settled, client errors included (invalid body, unknown id)", async () => {
    const t = await x402App(await database());
    try {
      const cases = [
        { method: "POST", path: "/v1/orders/intent", body: intent({ side: "hold" }) },
        { method: "POST", path: "/v1/orders/intent", raw: "{not json" },
        { method: "GET", path: "/v1/agents/agt_00000000000000000000" },
      ];
      for (const c of cases) {
        const a = newWallet();
        const res = await t.call(c.method, c.path, { body: c.body, raw: c.raw, headers: { "payment-signature": await handPayment(a) } });
        expect(res.status === 400 || res.status === 404).toBe(true);
        expect(decodePaymentResponseHeader(res.headers.get("payment-response")!).success).toBe(true);
        expect((await paymentRows(await database(), a.address)).map((r) => [r.status, r.response_status])).toEqual([["settled", res.status]]);
      }
    } finally {
      await t.app.stop();
    }
  });
});

describeEachDatabase("x402 and Idempotency-Key", (_kind, database) => {
  test("a 402 is not kept for replay; the paid retry with the same key runs, and its replay charges nothing more", async () => {
    const t = await x402App(await database());
    try {
      const a = newWallet();
      const key = { "idempotency-key": `idem-${crypto.randomUUID()}` };
      const first = await t.call("POST", "/v1/orders/intent", { body: intent(), headers: key });
      expect(first.status).toBe(402);
      // Asked again with the same key (and another body): answered afresh, with its challenge header.
      const again = await t.call("POST", "/v1/orders/intent", { body: intent({ size_usdc: 6 }), headers: key });
      expect(again.status).toBe(402);
      expect(again.headers.get("idempotent-replayed")).toBeNull();
      expect(again.headers.get("payment-required")).not.toBeNull();
      const header = await clientPayment(a, decodePaymentRequiredHeader(first.headers.get("payment-required")!) as any);
      const paid = await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { ...key, "payment-signature": header } });
      expect(paid.status).toBe(201);
      const replay = await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { ...key, "payment-signature": header } });
      expect(replay.status).toBe(201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body.order_id).toBe(paid.body.order_id);
      expect(await footprint(await database(), a.address)).toEqual({ payments: 1, wallets: 1, agents: 1, orders: 1 });
    } finally {
      await t.app.stop();
    }
  });
});

describeEachDatabase("x402 and failures of the service", (_kind, database) => {
  test("a venue outage (5xx) is not settled: the payment is failed, its nonce stays used", async () => {
    const hooked = hookedVenue();
    const t = await x402App(await database(), { venue: hooked.venue });
    try {
      hooked.overrides.getBook = async () => {
        throw new Error("venue down");
      };
      const account = newWallet();
      const header = await clientPayment(account, await paymentRequiredOf(t, "POST", "/v1/orders/intent"));
      const res = await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { "payment-signature": header } });
      expectProblem(res, 503, "venue_unavailable");
      expect(res.headers.get("payment-response")).toBeNull();
      const [row] = await paymentRows(await database(), account.address);
      expect(row.status).toBe("failed");
      expect(row.failure_reason).toContain("503");
      expect((await footprint(await database(), account.address)).orders).toBe(0);
      delete hooked.overrides.getBook;
      const again = await t.call("POST", "/v1/orders/intent", { body: intent(), headers: { "payment-signature": header } });
      expect(expectProblem(again, 402, "payment_refused").reason).toBe("invalid_exact_evm_nonce_already_used");
    } finally {
      await t.app.stop();
    }
  });

  test("the per-wallet rate limit (RATE_LIMIT_PER_S) applies to paying wallets; a limited payment is not used up", async () => {
    const t = await x402App(await database(), { env: { RATE_LIMIT_PER_S: "1" } });
    try {
      const account = newWallet();
      const required = await paymentRequiredOf(t);
      const headers = await Promise.all([1, 2, 3].map(() => clientPayment(account, required)));
      expect((await t.call("GET", "/v1/agents", { headers: { "payment-signature": headers[0] } })).status).toBe(200);
      expect((await t.call("GET", "/v1/agents", { headers: { "payment-signature": headers[1] } })).status).toBe(200);
      const limited = await t.call("GET", "/v1/agents", { headers: { "payment-signature": headers[2] } });
      expectProblem(limited, 429, "rate_limited");
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // Another wallet has its own bucket.
      const other = await clientPayment(newWallet(), required);
      expect((await t.call("GET", "/v1/agents", { headers: { "payment-signature": other } })).status).toBe(200);
      expect((await paymentRows(await database(), account.address)).length).toBe(2);
      await Bun.sleep(1100);
      expect((await t.call("GET", "/v1/agents", { headers: { "payment-signature": headers[2] } })).status).toBe(200);
    } finally {
      await t.app.stop();
    }
  });
});
