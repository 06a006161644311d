/**
 * The SDK's order-management methods against the live service over HTTP (paper venue): cancelAll of
 * one market and of everything (the agent keeps trading), killAll / getFirmKill / resumeAll with an
 * organization key, ForbiddenError for an agent-scoped key, and getBook.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BrokerClient, ForbiddenError } from "../../packages/sdk/src/client.ts";
import { sharedPglite } from "../support/databases.ts";
import { BTC_YES, DEM_YES } from "../support/payload.ts";
import { newOrgClient, serveTestApp, type LiveService } from "./serve.ts";

let live: LiveService;
beforeAll(async () => {
  live = await serveTestApp(await sharedPglite());
});
afterAll(() => live?.stop());

test("cancelAll, killAll, resumeAll, getFirmKill, getBook through the SDK", async () => {
  const { client, orgId } = await newOrgClient(live.url);
  const account = privateKeyToAccount(generatePrivateKey());
  const agent = await client.createAgent({ wallet_address: account.address });
  const place = async (market_id: string, price: number) => {
    const a = await client.placeIntent({ agent_id: agent.id, market_id, side: "buy", size_usdc: 5, price });
    if (a.mode !== "payload" || a.status !== "awaiting_signature") throw new Error(`unexpected ${a.status}`);
    return (await client.signAndSubmit(a, account)).order_id;
  };
  const dem = await place(DEM_YES, 0.45);
  const btc = await place(BTC_YES, 0.3);

  const one = await client.cancelAll(agent.id, { market_id: DEM_YES });
  expect(one).toMatchObject({ agent_id: agent.id, market_id: DEM_YES, cancelled: [dem], failed: [], filled: [] });
  expect((await client.getOrder(btc)).status).toBe("open");
  const all = await client.cancelAll(agent.id);
  expect(all.cancelled).toEqual([btc]);
  expect(all.agent.breaker.state).toBe("closed");
  await place(DEM_YES, 0.44); // still trading

  const scoped = await client.createApiKey({ agent_id: agent.id });
  const agentClient = new BrokerClient({ baseUrl: live.url, apiKey: scoped.key, retry: { retries: 0 } });
  await expect(agentClient.killAll()).rejects.toBeInstanceOf(ForbiddenError);
  await expect(agentClient.resumeAll()).rejects.toBeInstanceOf(ForbiddenError);

  const killed = await client.killAll({ reason: "sdk test" });
  expect(killed).toMatchObject({ org_id: orgId, halted: true });
  expect(killed.agents.map((a) => a.agent_id)).toEqual([agent.id]);
  expect(killed.agents[0].cancelled).toHaveLength(1);
  expect((await client.getFirmKill()).halted).toBe(true);
  expect((await client.createAgent({ wallet_address: account.address })).breaker).toMatchObject({ state: "tripped", reason: "kill" });
  const resumed = await client.resumeAll();
  expect(resumed.resumed).toHaveLength(2);
  expect((await client.getAgent(agent.id)).breaker.state).toBe("closed");
  expect(await client.getFirmKill()).toMatchObject({ halted: false, agent_ids: [] });

  const book = await client.getBook(DEM_YES, { depth: 2 });
  expect(book.market_id).toBe(DEM_YES);
  expect(book.bids).toHaveLength(2);
  expect(book.bid_levels).toBeGreaterThanOrEqual(2);
  expect(Number(book.bids[0].price)).toBeGreaterThan(Number(book.bids[1].price));
  const tradable = await client.listMarkets({ active: true, closed: false, accepting_orders: true, q: "bitcoin" });
  expect(tradable.data.map((m) => m.market_id)).toContain(BTC_YES);
  expect(tradable.data.every((m) => m.question.toLowerCase().includes("bitcoin") && m.accepting_orders)).toBe(true);
}, 30_000);
