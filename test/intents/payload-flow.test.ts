/**
 * The payload-mode flow end to end over real HTTP: the service listens on 127.0.0.1 (Bun.serve on
 * an ephemeral port) and a client drives it with fetch: organization → agent with a viem wallet →
 * intent → signTypedData of the unsigned order as returned → submit-signed → GET the order, then a
 * resting order cancelled over HTTP, a risk rejection and an Idempotency-Key replay. On PGlite
 * and, when TEST_DATABASE_URL is set, PostgreSQL.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { hashTypedData, recoverTypedDataAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ADMIN_TOKEN, createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { CHECK_NAMES, DEM_YES, EXCHANGE_V2 } from "../support/payload.ts";

describeEachDatabase("payload flow over HTTP", (_kind, database) => {
  let t: TestApp;
  let server: ReturnType<typeof Bun.serve>;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp(await database());
    server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => t.app.handle(req) });
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    server?.stop(true);
    await t?.app.stop();
  });

  async function http(method: string, path: string, opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.key) headers["x-api-key"] = opts.key;
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${base}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
  }

  async function trader() {
    const org = await http("POST", "/v1/orgs", { body: { name: "payload flow" }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(org.status).toBe(201);
    const key: string = org.body.api_key.key;
    const account = privateKeyToAccount(generatePrivateKey());
    const agent = await http("POST", "/v1/agents", { key, body: { name: "flow", wallet_address: account.address } });
    expect(agent.status).toBe(201);
    expect(agent.body.mode).toBe("payload");
    return { key, account, agentId: agent.body.id as string };
  }

  test("intent → viem signature → submit-signed → GET order", async () => {
    const { key, account, agentId } = await trader();

    const market = await http("GET", `/v1/markets/${DEM_YES}`);
    expect(market.status).toBe(200);
    expect(Number(market.body.best_ask)).toBe(0.5);

    const intent = await http("POST", "/v1/orders/intent", {
      key,
      body: { agent_id: agentId, market_id: DEM_YES, side: "buy", size_usdc: 5.2, price: 0.52 },
    });
    expect(intent.status).toBe(201);
    expect(intent.headers.get("content-type")).toStartWith("application/json");
    expect(intent.body.status).toBe("awaiting_signature");
    expect(intent.body.risk.checks.map((c: any) => c.check)).toEqual([...CHECK_NAMES]);
    const unsigned = intent.body.unsigned_order;
    expect(unsigned.domain).toEqual({ name: "Polymarket CTF Exchange", version: "2", chainId: 137, verifyingContract: EXCHANGE_V2 });
    expect(unsigned.message.makerAmount).toBe("5200000");
    expect(unsigned.message.takerAmount).toBe("10000000");
    expect(intent.body.order_hash).toBe(hashTypedData(unsigned));

    // Signed exactly as it came over the wire.
    const signature = await account.signTypedData(unsigned);
    expect(await recoverTypedDataAddress({ ...unsigned, signature })).toBe(account.address);

    const submitted = await http("POST", "/v1/orders/submit-signed", { key, body: { order_id: intent.body.order_id, signature } });
    expect(submitted.status).toBe(200);
    expect(submitted.body.order_id).toBe(intent.body.order_id);
    expect(submitted.body.status).toBe("filled");
    expect(submitted.body.venue_order_id).toBe(intent.body.order_hash);

    const order = await http("GET", `/v1/orders/${intent.body.order_id}`, { key });
    expect(order.status).toBe(200);
    expect(order.body.status).toBe("filled");
    expect(order.body.venue_order_id).toBe(intent.body.order_hash);
    expect(order.body.filled_usdc).toBe(5);
    expect(order.body.history.map((h: any) => h.status)).toEqual(["awaiting_signature", "submitting", "filled"]);
    const atVenue = await t.app.services.venue.getOrder({ venue_order_id: intent.body.order_hash });
    expect(atVenue?.status).toBe("matched");

    // The same signature again is refused without echoing it.
    const again = await http("POST", "/v1/orders/submit-signed", { key, body: { order_id: intent.body.order_id, signature } });
    expect(again.status).toBe(409);
    expect(again.headers.get("content-type")).toStartWith("application/problem+json");
    expect(again.body.code).toBe("invalid_state");
    expect(again.text).not.toContain(signature.slice(2, 40));

    const agent = await http("GET", `/v1/agents/${agentId}`, { key });
    expect(agent.body.daily_volume.used_usdc).toBe(5.2);
    expect(agent.body.open_orders).toBe(0);
  });

  test("a resting order is open, listed, and cancelled at the venue over HTTP", async () => {
    const { key, account, agentId } = await trader();
    const intent = await http("POST", "/v1/orders/intent", {
      key,
      body: { agent_id: agentId, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.4 },
    });
    expect(intent.status).toBe(201);
    const signature = await account.signTypedData(intent.body.unsigned_order);
    const submitted = await http("POST", "/v1/orders/submit-signed", { key, body: { order_id: intent.body.order_id, signature } });
    expect(submitted.status).toBe(200);
    expect(submitted.body.status).toBe("open");

    const listed = await http("GET", `/v1/orders?agent_id=${agentId}&status=open`, { key });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((o: any) => o.id)).toEqual([intent.body.order_id]);

    const cancelled = await http("DELETE", `/v1/orders/${intent.body.order_id}`, { key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe("cancelled");
    expect((await t.app.services.venue.getOrder({ venue_order_id: intent.body.order_hash }))?.status).toBe("cancelled");
    expect((await http("GET", `/v1/orders?agent_id=${agentId}&status=open`, { key })).body.data).toEqual([]);
    expect((await http("GET", `/v1/agents/${agentId}`, { key })).body.daily_volume.used_usdc).toBe(0);
  });

  test("a risk rejection is a 422 problem over the wire, and Idempotency-Key replays an approval", async () => {
    const { key, agentId } = await trader();
    const rejected = await http("POST", "/v1/orders/intent", {
      key,
      body: { agent_id: agentId, market_id: DEM_YES, side: "buy", size_usdc: 150, price: 0.5 },
    });
    expect(rejected.status).toBe(422);
    expect(rejected.headers.get("content-type")).toStartWith("application/problem+json");
    expect(rejected.body.code).toBe("risk_rejected");
    expect(rejected.body.failures.map((f: any) => f.code)).toEqual(["order_too_large", "kelly_cap_exceeded"]);

    const body = { agent_id: agentId, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5 };
    const headers = { "idempotency-key": "flow-intent-1" };
    const first = await http("POST", "/v1/orders/intent", { key, body, headers });
    const second = await http("POST", "/v1/orders/intent", { key, body, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    const orders = await http("GET", `/v1/orders?agent_id=${agentId}`, { key });
    expect(orders.body.data.map((o: any) => o.id)).toEqual([first.body.order_id]);
    expect((await http("GET", `/v1/agents/${agentId}`, { key })).body.daily_volume.used_usdc).toBe(5);
  });
});
