/** The SDK's webhook methods against the live service over HTTP, with events pushed to a receiver that verifies them. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BrokerClient, ForbiddenError, InvalidRequestError, NotFoundError, type WebhookMessage } from "../../packages/sdk/src/client.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { DEM_YES } from "../support/payload.ts";
import { newOrgClient, serveTestApp, type LiveService } from "../sdk/serve.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

describeEachDatabase("sdk webhooks", (_kind, database) => {
  let live: LiveService;
  let receiver: Receiver;
  beforeAll(async () => {
    live = await serveTestApp(await database(), { config: { webhooks: { allowPrivate: true, retryScheduleMs: [100, 100], timeoutMs: 1000, concurrency: 4 } } });
    live.t.app.services.webhookDispatcher.start();
    receiver = startReceiver();
  });
  afterAll(async () => {
    await live?.t.app.services.webhookDispatcher.stop();
    await live?.stop();
    receiver?.close();
    await (await database()).db.execute(sql.raw("delete from webhooks"));
  });

  test("create (secret once), list, get, test, push of an intent's event, enable, delete; an agent key is refused", async () => {
    const { client } = await newOrgClient(live.url);
    const agent = await client.createAgent({ wallet_address: privateKeyToAccount(generatePrivateKey()).address });
    const created = await client.createWebhook({ url: receiver.url, event_types: ["order"], agent_id: agent.id, description: "sdk" });
    receiver.secret = created.secret;
    expect(created.secret).toStartWith("whsec_");
    expect((await client.listWebhooks()).data.map((w) => w.id)).toEqual([created.id]);
    expect((await client.listWebhooks()).data[0]).not.toHaveProperty("secret");
    expect(await client.getWebhook(created.id)).toMatchObject({ url: receiver.url, event_types: ["order"], agent_id: agent.id, status: "enabled" });
    const tested = await client.testWebhook(created.id);
    expect(tested).toMatchObject({ delivered: true, status: 204 });

    const placed = await client.placeIntent({ agent_id: agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5 });
    await receiver.until((r) => r.received.some((m) => m.body.type === "order"), "the order event");
    const message = receiver.received.find((m) => m.body.type === "order")!.body as WebhookMessage;
    expect(message.agent_id).toBe(agent.id);
    expect((message.data as any).order.id).toBe(placed.order_id);

    expect(await client.enableWebhook(created.id)).toMatchObject({ status: "enabled", attempts: 0 });
    const agentKey = await client.createApiKey({ agent_id: agent.id });
    const scoped = new BrokerClient({ baseUrl: live.url, apiKey: agentKey.key });
    expect(await scoped.listWebhooks().catch((e) => e)).toBeInstanceOf(ForbiddenError);
    expect(await client.createWebhook({ url: "http://user:pw@127.0.0.1/x" }).catch((e) => e)).toBeInstanceOf(InvalidRequestError);
    await client.deleteWebhook(created.id);
    expect(await client.getWebhook(created.id).catch((e) => e)).toBeInstanceOf(NotFoundError);
  });
});
