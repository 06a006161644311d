/**
 * Retries through a fault-injecting proxy: the service handles the request, the proxy drops the
 * answer (the socket is destroyed) or answers 503; the SDK retries with the same Idempotency-Key and
 * the service replays the first answer, so no order is placed twice.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BrokerClient, NetworkError, type PayloadIntentAnswer } from "../../packages/sdk/src/client.ts";
import { DEM_YES } from "../support/payload.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { hookedVenue } from "../support/hooked-venue.ts";
import { type FaultProxy, startProxy } from "./fault-proxy.ts";
import { newOrgClient, serveTestApp, type LiveService } from "./serve.ts";

describeEachDatabase("sdk retries through a fault-injecting proxy", (_kind, database) => {
  let live: LiveService;
  let proxy: FaultProxy;
  beforeAll(async () => {
    live = await serveTestApp(await database());
    proxy = await startProxy(live.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await live?.stop();
  });

  test("a dropped intent answer and a 503 are retried with the same key: one order, the first answer", async () => {
    const { key } = await newOrgClient(live.url);
    const client = new BrokerClient({ baseUrl: proxy.url, apiKey: key, retry: { retries: 4, baseDelayMs: 10 } });
    const account = privateKeyToAccount(generatePrivateKey());
    const agent = await client.createAgent({ wallet_address: account.address });

    proxy.seen.length = 0;
    proxy.plan.set("/v1/orders/intent", ["drop", "503", "drop"]);
    const answer = (await client.placeIntent({ agent_id: agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5 })) as PayloadIntentAnswer;
    const tries = proxy.seen.filter((s) => s.path === "/v1/orders/intent");
    expect(tries).toHaveLength(4);
    expect(tries.filter((s) => s.forwarded)).toHaveLength(3); // the service saw it three times
    expect(new Set(tries.map((s) => s.key)).size).toBe(1);
    expect(tries[0]!.key).toMatch(/^[0-9a-f-]{36}$/);

    const orders = await client.listOrders({ agent_id: agent.id });
    expect(orders.data.map((o) => o.id)).toEqual([answer.order_id]);
    expect((await client.getAgent(agent.id)).open_orders).toBe(1);

    // submit-signed: its answer dropped twice; the order goes to the venue once.
    proxy.plan.set("/v1/orders/submit-signed", ["drop", "drop"]);
    const submitted = await client.signAndSubmit(answer, account);
    expect(["open", "filled"]).toContain(submitted.status);
    const order = await client.getOrder(answer.order_id);
    expect(order.history.filter((h) => h.status === "submitting")).toHaveLength(1);
    expect(proxy.seen.filter((s) => s.path === "/v1/orders/submit-signed")).toHaveLength(3);
  });

  test("every attempt dropped: NetworkError after the retries, with the key it used", async () => {
    const { key } = await newOrgClient(live.url);
    const client = new BrokerClient({ baseUrl: proxy.url, apiKey: key, retry: { retries: 2, baseDelayMs: 5 } });
    proxy.plan.set("/v1/agents", ["drop", "drop", "drop"]);
    const body = { wallet_address: privateKeyToAccount(generatePrivateKey()).address };
    const err = await client.createAgent(body).catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.request.attempts).toBe(3);
    // The agent was created once; calling again with the same key replays it without a second one.
    const again = await client.createAgent(body, { idempotencyKey: err.request.idempotencyKey });
    expect(again.wallet_address.toLowerCase()).toBe(body.wallet_address.toLowerCase());
    expect((await client.listAgents()).data.map((a) => a.id)).toEqual([again.id]);
  });
});

describeEachDatabase("sdk retries while the first attempt is still running", (_kind, database) => {
  let live: LiveService;
  let proxy: FaultProxy;
  const hooked = hookedVenue();
  let posts = 0;
  beforeAll(async () => {
    // The venue takes 600 ms to accept an order, so the service is still working when the retry comes.
    hooked.overrides.postSignedOrder = async (...args: any[]) => {
      posts++;
      await Bun.sleep(600);
      return (hooked.paper.postSignedOrder as any)(...args);
    };
    live = await serveTestApp(await database(), { venue: hooked.venue });
    proxy = await startProxy(live.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await live?.stop();
  });

  test("a cut-off submit is retried through 409 in-progress answers until the first answer is replayed; the venue gets it once", async () => {
    const { key } = await newOrgClient(live.url);
    const client = new BrokerClient({ baseUrl: proxy.url, apiKey: key, retry: { retries: 10, baseDelayMs: 100, maxDelayMs: 400 } });
    const account = privateKeyToAccount(generatePrivateKey());
    const agent = await client.createAgent({ wallet_address: account.address });
    const answer = (await client.placeIntent({ agent_id: agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.45 })) as PayloadIntentAnswer;
    proxy.seen.length = 0;
    proxy.plan.set("/v1/orders/submit-signed", ["cut"]);
    const submitted = await client.signAndSubmit(answer, account);
    expect(submitted.status).toBe("open");
    const tries = proxy.seen.filter((s) => s.path === "/v1/orders/submit-signed");
    expect(tries.length).toBeGreaterThanOrEqual(3);
    expect(tries.some((s) => s.status === 409)).toBe(true);
    expect(tries.at(-1)!.status).toBe(200);
    expect(new Set(tries.map((s) => s.key)).size).toBe(1);
    expect(posts).toBe(1);
  });
});
