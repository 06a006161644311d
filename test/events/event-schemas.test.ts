/**
 * The documented shapes are the real ones: every event of a session that produces each type (an
 * approval, a refusal, fills at the paper venue, a breaker trip, a kill, an endpoint disabled after
 * its retries) is read off GET /v1/events as a client reads it and off a webhook receiver that
 * verifies each message; each must match its schema (components.schemas.BrokerEvent and
 * WebhookMessage of GET /openapi) with no field the schema does not name. The SDK's `events()` reads
 * the same stream and yields every one of them, the organization's `webhook_disabled` included.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { BrokerClient, type BrokerEvent } from "../../packages/sdk/src/client.ts";
import { EVENT_TYPES } from "../../src/db/schema.ts";
import { BrokerEventModel, EVENTS_EXAMPLE } from "../../src/modules/events/model.ts";
import { WebhookMessageModel } from "../../src/modules/webhooks/model.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { DEM_YES, newTrader, type Trader } from "../support/payload.ts";
import { undocumented } from "../support/schema-exact.ts";
import { connect } from "../support/sse.ts";
import { type Receiver, startReceiver } from "../webhooks/receiver.ts";

const FAST = { allowPrivate: true, retryScheduleMs: [50, 50, 50], timeoutMs: 1000, concurrency: 8 };

test("the checker finds a field the schema does not name, a wrong type and a missing field", () => {
  const ok = { id: 1, type: "webhook_disabled", agent_id: null, created_at: "x", data: { webhook_id: "w", url: "u", attempts: 1, last_error: "e", last_event_id: 0, disabled_at: "d" } };
  expect(undocumented(BrokerEventModel, ok)).toEqual([]);
  expect(undocumented(BrokerEventModel, { ...ok, data: { ...ok.data, extra: 1 } })).toEqual(["/data/extra: not in the schema"]);
  expect(undocumented(BrokerEventModel, { ...ok, id: "1" })).toEqual(["/: matches no variant"]);
  const { url: _, ...noUrl } = ok.data;
  expect(undocumented(BrokerEventModel, { ...ok, data: noUrl })).toEqual(["/: matches no variant"]);
});

test("the stream example of the OpenAPI document is made of documented events", () => {
  const frames = EVENTS_EXAMPLE.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
  expect(frames.length).toBeGreaterThanOrEqual(2);
  expect(frames.flatMap((f) => undocumented(BrokerEventModel, f))).toEqual([]);
});

describeEachDatabase("events and webhook messages match their documented schemas", (_kind, database) => {
  let t: TestApp;
  const receivers: Receiver[] = [];
  let orgId = "";
  beforeAll(async () => {
    t = await createTestApp(await database(), { config: { webhooks: FAST } });
    t.app.services.webhookDispatcher.start();
  });
  afterAll(async () => {
    await t.app.services.webhookDispatcher.stop();
    // Endpoints of this suite must not receive during another (every test app shares the database).
    await (await database()).db.execute(sql`update webhooks set status = 'disabled' where org_id = ${orgId}`);
    for (const r of receivers) r.close();
  });

  test("every type, on the stream, through the SDK and at a webhook endpoint", async () => {
    const { orgId: org, key } = await t.newOrg("event schemas");
    orgId = org;
    const all = startReceiver();
    const failing = startReceiver();
    receivers.push(all, failing);
    failing.failWith = 500;
    const endpoint = async (r: Receiver, body: Record<string, unknown>) => {
      const res = await t.call("POST", "/v1/webhooks", { key, body: { url: r.url, ...body } });
      expect(res.status).toBe(201);
      r.secret = res.body.secret;
      return res.body.id as string;
    };
    const allId = await endpoint(all, {});
    await endpoint(failing, { event_types: ["risk_rejected"] });
    const stream = await connect(t, key, "");
    const sdkEvents: BrokerEvent[] = [];
    const sdk = new BrokerClient({ baseUrl: "http://localhost", apiKey: key, fetch: ((input: RequestInfo | URL, init?: RequestInit) => t.app.handle(new Request(input, init))) as typeof fetch });
    const abort = new AbortController();
    const reading = (async () => {
      for await (const e of sdk.events({ signal: abort.signal, maxReconnects: 0 })) sdkEvents.push(e);
    })().catch(() => undefined);

    const trader = async (delegated: boolean): Promise<Trader> => {
      const tr = await newTrader(t, { key });
      if (delegated) {
        const creds = await t.call("POST", `/v1/agents/${tr.agent.id}/creds`, { key, body: { api_key: crypto.randomUUID(), api_secret: "c2VjcmV0LXNlY3JldC1zZWNyZXQ=", passphrase: "p", scopes: ["order:place", "order:cancel"] } });
        expect(creds.status).toBe(200);
      }
      return tr;
    };
    const intent = (tr: Trader, body: Record<string, unknown>) => t.call("POST", "/v1/orders/intent", { key, body: { agent_id: tr.agent.id, market_id: DEM_YES, ...body } });
    const payload = await trader(false);
    const maker = await trader(true);
    const taker = await trader(true);
    // order (awaiting_signature), and risk_rejected (too large).
    expect((await intent(payload, { side: "buy", size_usdc: 5, price: 0.49 })).status).toBe(201);
    expect((await intent(payload, { side: "buy", size_usdc: 500, price: 0.49 })).status).toBe(422);
    // The maker's bid inside the spread (0.48/0.50), the taker's buy at the ask (filled by the book), then
    // the taker's sell into the maker's bid: order events with fills, the paper venue's.
    const bid = await intent(maker, { side: "buy", size_usdc: 4.9, price: 0.49 });
    expect(bid.body.status).toBe("open");
    expect((await intent(taker, { side: "buy", size_usdc: 10, price: 0.5 })).body.status).toBe("filled");
    expect((await intent(taker, { side: "sell", size_usdc: 4.9, price: 0.49 })).body.status).toBe("filled");
    // breaker (manual), and a kill (breaker, order cancels, kill).
    expect((await t.call("POST", `/v1/agents/${taker.agent.id}/breaker`, { key })).status).toBe(200);
    expect((await intent(payload, { side: "buy", size_usdc: 5, price: 0.47 })).status).toBe(201);
    expect((await t.call("POST", `/v1/agents/${payload.agent.id}/kill`, { key, body: { reason: "schema check" } })).status).toBe(200);
    // The test message.
    expect((await t.call("POST", `/v1/webhooks/${allId}/test`, { key })).body.delivered).toBe(true);

    // webhook_disabled: the failing endpoint gives up on the refusal after its retries.
    await stream.until((es) => es.some((e) => e.event === "webhook_disabled"), "the webhook_disabled event", 15_000);
    const events = stream.events();
    await all.until((r) => r.distinct().filter((m) => m.body.id !== null).length >= events.length, "every event at the endpoint", 15_000);
    const until = Date.now() + 5000;
    while (sdkEvents.length < events.length && Date.now() < until) await Bun.sleep(20);
    abort.abort();
    await stream.close();
    await reading;

    // Every type was seen, and a fill with it.
    expect([...new Set(events.map((e) => e.event))].sort()).toEqual([...EVENT_TYPES].sort());
    expect(events.some((e) => e.event === "order" && e.data.data.fill)).toBe(true);
    expect(events.some((e) => e.event === "breaker" && e.data.data.reason === "manual")).toBe(true);
    // The stream: each frame's data is the documented envelope of its type, nothing more.
    for (const e of events) {
      expect({ id: e.id, event: e.event, undocumented: undocumented(BrokerEventModel, e.data) }).toEqual({ id: String(e.data.id), event: e.data.type, undocumented: [] });
    }
    // The webhook endpoint: the same events, each message the documented one, and the test message.
    const messages = all.distinct().map((m) => m.body);
    for (const m of messages) expect({ id: m.id, type: m.type, undocumented: undocumented(WebhookMessageModel, m) }).toEqual({ id: m.id, type: m.type, undocumented: [] });
    expect(messages.filter((m) => m.id !== null).map((m) => [m.id, m.type, m.data])).toEqual(events.map((e) => [e.data.id, e.data.type, e.data.data]));
    expect(messages.filter((m) => m.type === "webhook_test")).toHaveLength(1);
    // The SDK yields every event of the stream, webhook_disabled included, as it came.
    expect(sdkEvents.map((e) => [e.id, e.type, e.agent_id, e.created_at, e.data])).toEqual(events.map((e) => [e.id, e.data.type, e.data.agent_id, e.data.created_at, e.data.data]));
  }, 60_000);
});
