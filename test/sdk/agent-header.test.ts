/**
 * The SDK sends X-Agent-Id on every call about one agent (issue 23: a proxy in front of several
 * instances hashes on it, deploy/haproxy.cfg): agent routes, intents, and the order routes of orders
 * it has seen. Against the real service over HTTP, the headers read from the requests as sent.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { DEM_YES } from "../support/payload.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { newOrgClient, serveTestApp, type LiveService } from "./serve.ts";

describeEachDatabase("sdk: X-Agent-Id on every call about an agent", (_kind, database) => {
  let live: LiveService;
  beforeAll(async () => {
    live = await serveTestApp(await database());
  });
  afterAll(() => live?.stop());

  test("agent routes, intents, and the orders it saw carry their agent's id; calls about no agent carry none", async () => {
    const sent: { method: string; path: string; agent: string | null }[] = [];
    const recording: typeof fetch = Object.assign(
      async (input: RequestInfo | URL, init?: RequestInit) => {
        const u = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
        sent.push({ method: init?.method ?? "GET", path: u.pathname, agent: new Headers(init?.headers).get("x-agent-id") });
        return fetch(input, init);
      },
      { preconnect: fetch.preconnect },
    );
    const { client } = await newOrgClient(live.url, { fetch: recording });
    const account = privateKeyToAccount(generatePrivateKey());
    const agent = await client.createAgent({ wallet_address: account.address });
    await client.getAgent(agent.id);
    await client.updateLimits(agent.id, { max_order_usdc: 50 });
    const order = await client.placeIntent({ agent_id: agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5 });
    await client.getOrder(order.order_id);
    await client.cancelOrder(order.order_id);
    await client.listMarkets({ limit: 1 });
    const about = (pred: (s: (typeof sent)[number]) => boolean) => sent.filter(pred).map((s) => s.agent);
    expect(about((s) => s.path === `/v1/agents/${agent.id}`)).toEqual([agent.id]);
    expect(about((s) => s.path === `/v1/agents/${agent.id}/limits`)).toEqual([agent.id]);
    expect(about((s) => s.path === "/v1/orders/intent")).toEqual([agent.id]);
    expect(about((s) => s.path === `/v1/orders/${order.order_id}`)).toEqual([agent.id, agent.id]);
    expect(about((s) => s.path === "/v1/markets")).toEqual([null]);
    expect(about((s) => s.path === "/v1/agents" && s.method === "POST")).toEqual([null]);
  });
});
