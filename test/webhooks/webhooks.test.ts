/** Issue 25 item 4: webhooks (docs/webhooks.md), on PGlite and PostgreSQL. */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import type { Database } from "../../src/db/database.ts";
import { startJobs } from "../../src/jobs.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";
import { approved, expectProblem, newTrader, postIntent, sleep } from "../support/payload.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

const FAST = { allowPrivate: true, retryScheduleMs: [100, 200, 300, 300, 300, 300, 300, 300, 300, 300], timeoutMs: 1000, concurrency: 8 };

/** The org's events after `after`, as the log holds them. */
async function logged(database: Database, orgId: string, after: number, where = ""): Promise<{ id: number; type: string; agent_id: string | null }[]> {
  const rows = await rowsOf(database, sql.raw(`select id, type, agent_id from events where org_id = '${orgId}' and id > ${after} ${where} order by id`));
  return rows.map((r) => ({ id: Number(r.id), type: String(r.type), agent_id: (r.agent_id as string | null) ?? null }));
}

async function createEndpoint(t: TestApp, key: string, body: Record<string, unknown>, receiver?: Receiver) {
  const res = await t.call("POST", "/v1/webhooks", { key, body });
  if (res.status !== 201) throw new Error(`webhook creation failed: ${res.status} ${res.text}`);
  if (receiver) receiver.secret = res.body.secret;
  return res.body;
}

/** Asserts a receiver's messages: each verified, in event order, every one of `expected` once per webhook-id. */
function expectDelivered(receiver: Receiver, expected: number[]) {
  expect(receiver.rejected).toEqual([]);
  const ids = receiver.received.map((m) => m.body.id as number);
  // In order: a repeat (at least once) is only ever of the message just sent again, never an older one.
  for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThanOrEqual(ids[i - 1]);
  expect(receiver.distinct().map((m) => m.body.id)).toEqual(expected);
  for (const m of receiver.received) expect(m.webhookId).toBe(`evt_${m.body.id}`);
}

describeEachDatabase("webhooks", (_kind, database) => {
  let t: TestApp;
  const receivers: Receiver[] = [];
  const receiver = () => {
    const r = startReceiver();
    receivers.push(r);
    return r;
  };
  beforeAll(async () => {
    t = await createTestApp(await database(), { config: { webhooks: FAST } });
    t.app.services.webhookDispatcher.start();
  });
  afterEach(async () => {
    // Endpoints of one test must not receive during the next (every test app shares the database).
    await (await database()).db.execute(sql.raw("update webhooks set status = 'disabled'"));
  });
  afterAll(async () => {
    await t.app.services.webhookDispatcher.stop();
    await (await database()).db.execute(sql.raw("delete from webhooks"));
    for (const r of receivers) r.close();
  });

  test("create answers the secret once; list, read, test, delete; an agent key gets 403", async () => {
    const tr = await newTrader(t);
    const r = receiver();
    const created = await createEndpoint(t, tr.key, { url: r.url, event_types: ["order", "kill"], description: "ops" }, r);
    expect(created.id).toMatch(/^whk_[0-9a-z]{20}$/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created).toMatchObject({ url: r.url, event_types: ["order", "kill"], agent_id: null, description: "ops", status: "enabled", attempts: 0 });
    const list = await t.call("GET", "/v1/webhooks", { key: tr.key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((w: any) => w.id)).toEqual([created.id]);
    expect(list.text).not.toContain(created.secret);
    expect(list.text).not.toContain("secret");
    const read = await t.call("GET", `/v1/webhooks/${created.id}`, { key: tr.key });
    // The cursor moves on with other organizations' events (the log's ids are global): the rest is the same.
    expect({ ...read.body, last_event_id: 0 }).toEqual({ ...list.body.data[0], last_event_id: 0 });
    // The stored row holds no plain secret.
    const [row] = await rowsOf(await database(), sql.raw(`select * from webhooks where id = '${created.id}'`));
    expect(JSON.stringify(row)).not.toContain(created.secret.slice(6, 30));

    // Test message: signed (the receiver verifies it), answered with what the endpoint did.
    const tested = await t.call("POST", `/v1/webhooks/${created.id}/test`, { key: tr.key });
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({ webhook_id: created.id, delivered: true, status: 204, error: null });
    const msg = r.received.find((m) => m.webhookId === tested.body.message_id);
    expect(msg?.body).toMatchObject({ type: "webhook_test", id: null, data: { webhook_id: created.id } });
    r.failWith = 500;
    const failing = await t.call("POST", `/v1/webhooks/${created.id}/test`, { key: tr.key });
    expect(failing.body).toMatchObject({ delivered: false, status: 500, error: "the endpoint answered 500" });
    r.failWith = null;

    // Organization keys only; another organization's endpoint is not found.
    const agentKey = await t.call("POST", "/v1/api-keys", { key: tr.key, body: { agent_id: tr.agent.id } });
    for (const [method, path] of [
      ["POST", "/v1/webhooks"],
      ["GET", "/v1/webhooks"],
      ["GET", `/v1/webhooks/${created.id}`],
      ["POST", `/v1/webhooks/${created.id}/test`],
      ["POST", `/v1/webhooks/${created.id}/enable`],
      ["DELETE", `/v1/webhooks/${created.id}`],
    ] as const) {
      expectProblem(await t.call(method, path, { key: agentKey.body.key, body: method === "POST" && path === "/v1/webhooks" ? { url: r.url } : undefined }), 403, "forbidden");
    }
    const other = await t.newOrg("other");
    expectProblem(await t.call("GET", `/v1/webhooks/${created.id}`, { key: other.key }), 404, "not_found");
    expectProblem(await t.call("DELETE", `/v1/webhooks/${created.id}`, { key: other.key }), 404, "not_found");
    expectProblem(await t.call("POST", "/v1/webhooks", { key: other.key, body: { url: r.url, agent_id: tr.agent.id } }), 404, "not_found");
    expectProblem(await t.call("GET", "/v1/webhooks", { key: "bk_nope" }), 401, "unauthenticated");

    // Bad input: problem details, nothing stored.
    for (const body of [
      {},
      { url: r.url, event_types: ["orders"] },
      { url: r.url, event_types: [] },
      { url: r.url, event_types: ["order", "order"] },
      { url: r.url, extra: 1 },
      { url: 42 },
      { url: r.url, agent_id: "agt_x" },
    ]) {
      expectProblem(await t.call("POST", "/v1/webhooks", { key: tr.key, body }), 400, "invalid_request");
    }
    expectProblem(await t.call("POST", "/v1/webhooks", { key: tr.key, raw: "{not json" }), 400, "invalid_request");
    expectProblem(await t.call("GET", "/v1/webhooks/whk_nope", { key: tr.key }), 400, "invalid_request");
    expect((await t.call("GET", "/v1/webhooks", { key: tr.key })).body.data).toHaveLength(1);

    expect((await t.call("DELETE", `/v1/webhooks/${created.id}`, { key: tr.key })).status).toBe(204);
    expectProblem(await t.call("GET", `/v1/webhooks/${created.id}`, { key: tr.key }), 404, "not_found");
    expectProblem(await t.call("DELETE", `/v1/webhooks/${created.id}`, { key: tr.key }), 404, "not_found");
  });

  test("a receiver that goes down and comes back gets every event, in order, once per webhook-id, seconds after it is back", async () => {
    const tr = await newTrader(t);
    const r = receiver();
    const endpoint = await createEndpoint(t, tr.key, { url: r.url }, r);
    for (let i = 0; i < 5; i++) await approved(t, tr, { size_usdc: 5 + i });
    await r.until((x) => x.distinct().length >= 5, "the first five events");
    r.down();
    for (let i = 0; i < 10; i++) await approved(t, tr, { size_usdc: 5 + i });
    expectProblem(await postIntent(t, tr, { size_usdc: 500 }), 422, "risk_rejected");
    await sleep(1500); // down for a while: the deliveries fail and are retried
    const failing = (await t.call("GET", `/v1/webhooks/${endpoint.id}`, { key: tr.key })).body;
    expect(failing.attempts).toBeGreaterThan(0);
    expect(failing.last_error).toMatch(/connection failed/);
    expect(failing.status).toBe("enabled");
    const backAt = Date.now();
    r.up();
    const expected = (await logged(await database(), tr.agent.org_id ?? (await orgOf(t, tr.key)), endpoint.last_event_id)).map((e) => e.id);
    expect(expected.length).toBe(16);
    await r.until((x) => x.distinct().length >= expected.length, "every event");
    // Retries start within seconds: the backlog arrives within the schedule's step, not minutes.
    expect(r.distinct().at(-1)!.at - backAt).toBeLessThan(5_000);
    expectDelivered(r, expected);
    const last = r.distinct().at(-1)!.body;
    expect(last).toMatchObject({ type: "risk_rejected", agent_id: tr.agent.id });
    expect(typeof last.timestamp).toBe("string");
    expect(last.data.failures[0].code).toBe("order_too_large");
    const order = r.distinct()[0].body;
    expect(order.type).toBe("order");
    expect(order.data.order.agent_id).toBe(tr.agent.id);
    // The cursor is in the database (written right after the last answer).
    let after: any;
    for (let i = 0; i < 100; i++) {
      after = (await t.call("GET", `/v1/webhooks/${endpoint.id}`, { key: tr.key })).body;
      if (after.last_event_id >= expected.at(-1)!) break;
      await sleep(20);
    }
    expect(after).toMatchObject({ attempts: 0, last_error: null, status: "enabled" });
    expect(after.last_event_id).toBeGreaterThanOrEqual(expected.at(-1)!);
    // Delivery metrics.
    const metrics = await t.call("GET", "/metrics");
    expect(metrics.text).toMatch(/webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
    expect(metrics.text).toMatch(/webhook_deliveries_total\{outcome="failed"\} [1-9]/);
    expect(metrics.text).toContain("webhook_delivery_duration_seconds_bucket");
  });

  test("agent filter and event-type filter", async () => {
    const a = await newTrader(t);
    const b = await newTrader(t, { key: a.key });
    const ra = receiver();
    const rt = receiver();
    const ea = await createEndpoint(t, a.key, { url: ra.url, agent_id: a.agent.id }, ra);
    await createEndpoint(t, a.key, { url: rt.url, event_types: ["risk_rejected", "breaker"] }, rt);
    await approved(t, a, { size_usdc: 5 });
    await approved(t, b, { size_usdc: 6 });
    expectProblem(await postIntent(t, b, { size_usdc: 500 }), 422, "risk_rejected");
    await approved(t, a, { size_usdc: 7 });
    expect((await t.call("POST", `/v1/agents/${b.agent.id}/breaker`, { key: b.key })).status).toBe(200);
    const orgId = await orgOf(t, a.key);
    const all = await logged(await database(), orgId, ea.last_event_id);
    const ofA = all.filter((e) => e.agent_id === a.agent.id).map((e) => e.id);
    const typed = all.filter((e) => e.type === "risk_rejected" || e.type === "breaker").map((e) => e.id);
    expect(ofA.length).toBe(2);
    expect(typed.length).toBe(2);
    await ra.until((x) => x.distinct().length >= ofA.length, "agent A's events");
    await rt.until((x) => x.distinct().length >= typed.length, "the typed events");
    await sleep(300); // nothing else arrives
    expectDelivered(ra, ofA);
    expectDelivered(rt, typed);
    expect(ra.received.every((m) => m.body.agent_id === a.agent.id)).toBe(true);
    expect(rt.received.map((m) => m.body.type)).toEqual(["risk_rejected", "breaker"]);
  });

  test("a failing endpoint is disabled after its retries, with an event; re-enabled, it resumes with the event that failed", async () => {
    const tr = await newTrader(t);
    const r = receiver();
    const watcher = receiver();
    r.failWith = 500;
    const endpoint = await createEndpoint(t, tr.key, { url: r.url, event_types: ["order"] }, r);
    const watch = await createEndpoint(t, tr.key, { url: watcher.url, event_types: ["webhook_disabled"] }, watcher);
    await approved(t, tr, { size_usdc: 5 });
    await approved(t, tr, { size_usdc: 6 });
    await watcher.until((x) => x.distinct().length >= 1, "the webhook_disabled event");
    const disabled = watcher.distinct()[0].body;
    expect(disabled).toMatchObject({ type: "webhook_disabled", agent_id: null, data: { webhook_id: endpoint.id, url: r.url, attempts: FAST.retryScheduleMs.length + 1, last_error: "the endpoint answered 500" } });
    // Every attempt was of the first event (in order: the second waits behind it).
    const first = r.received[0].body.id;
    expect(r.received.length).toBe(FAST.retryScheduleMs.length + 1);
    expect(r.received.every((m) => m.body.id === first)).toBe(true);
    const view = (await t.call("GET", `/v1/webhooks/${endpoint.id}`, { key: tr.key })).body;
    expect(view).toMatchObject({ status: "disabled", last_error: "the endpoint answered 500", attempts: FAST.retryScheduleMs.length + 1 });
    expect(view.disabled_at).not.toBeNull();
    // The event is in the organization's log (no agent), and the stream of an agent key does not carry it.
    const stored = await logged(await database(), await orgOf(t, tr.key), watch.last_event_id, "and type = 'webhook_disabled'");
    expect(stored).toEqual([{ id: disabled.id, type: "webhook_disabled", agent_id: null }]);
    await sleep(500);
    expect(r.received.length).toBe(FAST.retryScheduleMs.length + 1); // nothing more while disabled

    r.failWith = null;
    const enabled = await t.call("POST", `/v1/webhooks/${endpoint.id}/enable`, { key: tr.key });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ status: "enabled", attempts: 0, disabled_at: null, last_error: null });
    const orders = (await logged(await database(), await orgOf(t, tr.key), endpoint.last_event_id, "and type = 'order'")).map((e) => e.id);
    await r.until((x) => x.distinct().length >= orders.length, "both orders after the re-enable");
    expectDelivered(r, orders);
  });

  test("a re-created service on the same database resumes from the cursor", async () => {
    const tr = await newTrader(t);
    const r = receiver();
    r.delayMs = 30;
    const endpoint = await createEndpoint(t, tr.key, { url: r.url }, r);
    for (let i = 0; i < 20; i++) await approved(t, tr, { size_usdc: 5 + (i % 5) });
    await r.until((x) => x.distinct().length >= 3, "the first deliveries");
    // Stop mid-delivery: the receiver holds the message under way past the deadline, so it is received
    // and its answer lost, as when a process dies between a delivery and its cursor write.
    r.delayMs = 2_000;
    await t.app.services.webhookDispatcher.stop();
    const stoppedAt = r.distinct().length;
    const expected = (await logged(await database(), await orgOf(t, tr.key), endpoint.last_event_id)).map((e) => e.id);
    expect(stoppedAt).toBeLessThan(expected.length);
    r.delayMs = 0;
    const second = await createTestApp(await database(), { config: { webhooks: FAST } });
    const jobs = startJobs(second.app.services);
    try {
      await r.until((x) => x.distinct().length >= expected.length, "every event after the restart");
      expectDelivered(r, expected);
      let view: any;
      for (let i = 0; i < 100; i++) {
        view = (await second.call("GET", `/v1/webhooks/${endpoint.id}`, { key: tr.key })).body;
        if (view.last_event_id >= expected.at(-1)!) break;
        await sleep(20);
      }
      expect(view.last_event_id).toBeGreaterThanOrEqual(expected.at(-1)!);
    } finally {
      await jobs.stop();
      t = second; // the rest of the suite runs on the new service
      t.app.services.webhookDispatcher.start();
    }
  });
});

async function orgOf(t: TestApp, key: string): Promise<string> {
  const agents = await t.call("GET", "/v1/agents", { key });
  return agents.body.data[0].org_id;
}

describeEachDatabase("webhook URLs", (_kind, database) => {
  let strict: TestApp;
  let open: TestApp;
  beforeAll(async () => {
    strict = await createTestApp(await database(), { config: { webhooks: { ...FAST, allowPrivate: false } } });
    open = await createTestApp(await database(), { config: { webhooks: FAST } });
  });
  afterAll(async () => {
    await (await database()).db.execute(sql.raw("delete from webhooks"));
  });

  const refused = (app: () => TestApp, url: string, reason: RegExp) =>
    test(`${url} is refused (${reason.source})`, async () => {
      const { key } = await app().newOrg();
      const res = await app().call("POST", "/v1/webhooks", { key, body: { url } });
      const problem = expectProblem(res, 400, "invalid_request");
      expect(problem.detail).toMatch(reason);
      expect(problem.errors[0].path).toBe("/body/url");
      // The submitted URL is not repeated.
      const host = url.includes("://") ? url.split("://")[1].split("/")[0] : "";
      if (host) expect(res.text).not.toContain(host);
      expect((await app().call("GET", "/v1/webhooks", { key })).body.data).toEqual([]);
    });

  // Without WEBHOOK_ALLOW_PRIVATE.
  for (const [url, reason] of [
    ["http://127.0.0.1:8080/hook", /loopback/],
    ["http://127.1/hook", /loopback/],
    ["http://2130706433/hook", /loopback/],
    ["http://0x7f.0.0.1/hook", /loopback/],
    ["http://10.1.2.3/hook", /private/],
    ["http://172.16.0.1/hook", /private/],
    ["https://192.168.1.10/hook", /private/],
    ["http://169.254.169.254/latest/meta-data", /link-local/],
    ["http://0.0.0.0/hook", /unspecified/],
    ["http://100.64.0.1/hook", /carrier-grade NAT/],
    ["http://[::1]/hook", /loopback/],
    ["http://[fe80::1]/hook", /link-local/],
    ["http://[fd00::1]/hook", /unique-local/],
    ["http://[::ffff:127.0.0.1]/hook", /an IPv4-mapped loopback/],
    ["http://[::ffff:a00:1]/hook", /private/],
    ["http://[::127.0.0.1]/hook", /IPv4-compatible|non-public/],
    ["http://[64:ff9b::7f00:1]/hook", /non-public|NAT/],
    ["http://localhost:9/hook", /resolves to a loopback address \((127\.0\.0\.1|::1)\)/],
    ["http://user:pass@example.com/hook", /user name or password/],
    ["http://token@example.com/hook", /user name or password/],
    ["ftp://example.com/hook", /http or https/],
    ["file:///etc/passwd", /http or https/],
    ["javascript:alert(1)", /http or https/],
    ["not a url", /does not parse/],
    ["http://no-such-host.invalid/hook", /does not resolve/],
  ] as const) {
    refused(() => strict, url, reason);
  }

  test("a public address is accepted without WEBHOOK_ALLOW_PRIVATE", async () => {
    const { key } = await strict.newOrg();
    const res = await strict.call("POST", "/v1/webhooks", { key, body: { url: "https://1.1.1.1/hook" } });
    expect(res.status).toBe(201);
    await strict.call("DELETE", `/v1/webhooks/${res.body.id}`, { key });
  });

  // With WEBHOOK_ALLOW_PRIVATE=true: private addresses pass, the URL's form is still checked.
  for (const url of ["http://127.0.0.1:8080/hook", "http://localhost:9/hook", "http://10.1.2.3/hook", "http://[::1]:8080/hook", "http://169.254.169.254/"]) {
    test(`${url} is accepted with WEBHOOK_ALLOW_PRIVATE=true`, async () => {
      const { key } = await open.newOrg();
      const res = await open.call("POST", "/v1/webhooks", { key, body: { url } });
      expect(res.status).toBe(201);
    });
  }
  for (const [url, reason] of [
    ["http://user:pass@127.0.0.1/hook", /user name or password/],
    ["ftp://127.0.0.1/hook", /http or https/],
  ] as const) {
    refused(() => open, url, reason);
  }

  test("WEBHOOK_ALLOW_PRIVATE comes from the environment", async () => {
    const { loadConfig } = await import("../../src/config.ts");
    expect(loadConfig({}).webhooks.allowPrivate).toBe(false);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: "true" }).webhooks.allowPrivate).toBe(true);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: "10,20" }).webhooks.retryScheduleMs).toEqual([10, 20]);
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: "yes" })).toThrow(/WEBHOOK_ALLOW_PRIVATE/);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: "1s" })).toThrow(/WEBHOOK_RETRY_SCHEDULE_MS/);
  });

  test("the address is checked again at each delivery: an endpoint stored while private ones were allowed is refused after", async () => {
    const r = startReceiver();
    try {
      const { key } = await open.newOrg();
      const endpoint = await createEndpoint(open, key, { url: r.url.replace("127.0.0.1", "localhost") }, r);
      const allowed = await open.call("POST", `/v1/webhooks/${endpoint.id}/test`, { key });
      expect(allowed.body).toMatchObject({ delivered: true, status: 204 });
      const before = r.received.length;
      const refusedNow = await strict.call("POST", `/v1/webhooks/${endpoint.id}/test`, { key });
      expect(refusedNow.status).toBe(200);
      expect(refusedNow.body).toMatchObject({ delivered: false, status: null });
      expect(refusedNow.body.error).toMatch(/host resolves to a loopback address/);
      expect(r.received.length).toBe(before);
    } finally {
      r.close();
    }
  });
});

test("the signature is the Standard Webhooks one: verified by the library, refused with another secret or a changed body", async () => {
  const { sendWebhook } = await import("../../src/modules/webhooks/sender.ts");
  const r = startReceiver();
  try {
    const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    r.secret = secret;
    const now = new Date();
    const body = JSON.stringify({ id: 1, type: "order", timestamp: now.toISOString(), agent_id: "agt_x", data: {} });
    const ok = await sendWebhook(r.url, secret, { id: "evt_1", body }, { now, timeoutMs: 1000, allowPrivate: true });
    expect(ok).toMatchObject({ ok: true, status: 204 });
    r.secret = `whsec_${Buffer.alloc(32, 8).toString("base64")}`;
    const bad = await sendWebhook(r.url, secret, { id: "evt_2", body }, { now, timeoutMs: 1000, allowPrivate: true });
    expect(bad).toMatchObject({ ok: false, status: 400 });
    expect(r.rejected).toHaveLength(1);
    // The headers verify only with the exact body.
    const signature = new Webhook(secret).sign("evt_3", now, body);
    const headers = { "webhook-id": "evt_3", "webhook-timestamp": String(Math.floor(now.getTime() / 1000)), "webhook-signature": signature };
    expect(new Webhook(secret).verify(body, headers)).toMatchObject({ id: 1 });
    expect(() => new Webhook(secret).verify(body.replace('"order"', '"kill"'), headers)).toThrow();
    // Not sent at all to a refused address, and a timeout is a failure.
    const refused = await sendWebhook(r.url, secret, { id: "evt_4", body }, { now, timeoutMs: 1000, allowPrivate: false });
    expect(refused).toMatchObject({ ok: false, status: null });
    expect(refused.error).toMatch(/loopback/);
    r.secret = secret;
    // At delivery the name is resolved again and every address checked: a name re-pointed at an inside
    // address (DNS rebinding), or one of whose addresses is inside, is refused before any connection.
    const rebind = `http://rebind.example:${r.port}/hooks`;
    const before = r.received.length;
    const toLoopback = async () => [{ address: "127.0.0.1", family: 4 }];
    const rebound = await sendWebhook(rebind, secret, { id: "evt_6", body }, { now, timeoutMs: 1000, allowPrivate: false, resolve: toLoopback });
    expect(rebound).toMatchObject({ ok: false, status: null });
    expect(rebound.error).toMatch(/resolves to a loopback address \(127\.0\.0\.1\)/);
    const mixed = await sendWebhook(rebind, secret, { id: "evt_7", body }, { now, timeoutMs: 1000, allowPrivate: false, resolve: async () => [{ address: "1.1.1.1", family: 4 }, { address: "::ffff:10.0.0.1", family: 6 }] });
    expect(mixed.error).toMatch(/IPv4-mapped private/);
    expect(r.received.length).toBe(before);
    // The connection goes to the address the checked lookup answered (the name itself resolves nowhere).
    const pinned = await sendWebhook(rebind, secret, { id: "evt_8", body }, { now, timeoutMs: 1000, allowPrivate: true, resolve: toLoopback });
    expect(pinned).toMatchObject({ ok: true, status: 204 });
    expect(r.received.at(-1)?.webhookId).toBe("evt_8");
    r.delayMs = 500;
    const slow = await sendWebhook(r.url, secret, { id: "evt_5", body }, { now, timeoutMs: 100, allowPrivate: true });
    expect(slow).toMatchObject({ ok: false, status: null, error: "no answer within 100 ms" });
  } finally {
    r.close();
  }
});
