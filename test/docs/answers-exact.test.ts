/**
 * Every JSON answer is what its route documents, and nothing more: a session through the SDK calls
 * every route to a success (each documented 2xx status at least once), and each answer is checked
 * against the schema the service documents for that route and status (the OpenAPI document is made
 * of the same schemas), with no field the schema does not name. A field added to an answer without
 * its schema, or a schema that promises what the answer does not carry, fails here. On PGlite and,
 * with TEST_DATABASE_URL, PostgreSQL (their drivers give some column types back differently).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "../../src/db/database.ts";
import { sql } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BrokerClient } from "../../packages/sdk/src/client.ts";
import { ADMIN_TOKEN, createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { DEM_YES } from "../support/payload.ts";
import { undocumented } from "../support/schema-exact.ts";
import { type Receiver, startReceiver } from "../webhooks/receiver.ts";

interface Answer {
  route: string;
  status: number;
  body: unknown;
}

describeEachDatabase("answers and their schemas", (_kind, database: () => Promise<Database>) => {
  let t: TestApp;
  let receiver: Receiver;
  const answers: Answer[] = [];
  /** Each served route: its pattern, and its JSON schemas by 2xx status. */
  let routes: { key: string; pattern: RegExp; schemas: Map<number, unknown> }[] = [];

  function routeOf(method: string, path: string): string {
    const candidates = routes.filter((r) => r.key.startsWith(`${method} `) && r.pattern.test(path));
    // A static route before one with a parameter (none overlap today, but the rule is the router's).
    candidates.sort((a, b) => (a.key.split(":").length - b.key.split(":").length));
    return candidates[0]?.key ?? `${method} ${path} (no route)`;
  }

  beforeAll(async () => {
    t = await createTestApp(await database(), { config: { webhooks: { allowPrivate: true, retryScheduleMs: [50], timeoutMs: 1000, concurrency: 2 } } });
    receiver = startReceiver();
    for (const r of (t.app.elysia as any).routes as any[]) {
      const schemas = new Map<number, unknown>();
      for (const [code, s] of Object.entries<any>(r.hooks?.response ?? {})) if (code.startsWith("2")) schemas.set(Number(code), s);
      for (const [code, v] of Object.entries<any>(r.hooks?.detail?.responses ?? {})) {
        const s = v?.content?.["application/json"]?.schema;
        if (code.startsWith("2") && s && !schemas.has(Number(code))) schemas.set(Number(code), s);
      }
      const pattern = new RegExp(`^${String(r.path).replace(/:[a-z_]+/g, "[^/]+").replace(/\*/g, ".*")}$`);
      routes.push({ key: `${r.method} ${r.path}`, pattern, schemas });
    }
  });
  afterAll(async () => {
    await (await database()).db.execute(sql`update webhooks set status = 'disabled' where url = ${receiver.url}`);
    receiver.close();
  });

  /** A fetch over app.handle that keeps every JSON answer with its route. */
  const recording = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const res = await t.app.handle(request);
    if ((res.headers.get("content-type") ?? "").includes("application/json") && res.status < 300) {
      answers.push({ route: routeOf(request.method, new URL(request.url).pathname), status: res.status, body: await res.clone().json() });
    }
    return res;
  }) as typeof fetch;

  test("every route's answers: each 2xx JSON answer has exactly the fields its schema documents", async () => {
    const admin = new BrokerClient({ baseUrl: "http://localhost", adminToken: ADMIN_TOKEN, fetch: recording });
    const { api_key } = await admin.createOrg({ name: "answers" });
    const c = new BrokerClient({ baseUrl: "http://localhost", apiKey: api_key.key, fetch: recording });
    await c.health();
    await c.ready();
    await admin.listPayments({ limit: 2 });
    await c.listMarkets({ limit: 2 });
    await c.getMarket(DEM_YES);
    await c.getBook(DEM_YES, { depth: 2 });

    const account = privateKeyToAccount(generatePrivateKey());
    const payload = await c.createAgent({ name: "payload", wallet_address: account.address });
    const delegated = await c.createAgent({ name: "delegated", wallet_address: privateKeyToAccount(generatePrivateKey()).address });
    await c.createApiKey({ name: "scoped", agent_id: payload.id });
    await c.listApiKeys({ limit: 5 });
    await c.listAgents({ limit: 5 });
    await c.getAgent(payload.id);
    await c.updateLimits(payload.id, { max_order_usdc: 50 });
    await c.tripBreaker(payload.id);
    await c.resume(payload.id);
    await c.setCredentials(delegated.id, { api_key: crypto.randomUUID(), api_secret: "c2VjcmV0LXNlY3JldC1zZWNyZXQ=", passphrase: "p", scopes: ["order:place", "order:cancel"] });

    // Intents: a dry run approved and one refused (200), placed (201) in both modes, above a threshold (202).
    await c.checkIntent({ agent_id: payload.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.49 });
    await c.checkIntent({ agent_id: payload.id, market_id: DEM_YES, side: "buy", size_usdc: 500, price: 0.49 });
    const placed = await c.placeIntent({ agent_id: payload.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.47 });
    if (placed.mode !== "payload" || placed.status !== "awaiting_signature") throw new Error(`a payload order awaiting its signature, not ${placed.status}`);
    const submitted = await c.signAndSubmit(placed, account);
    expect(submitted.status).toBe("open");
    const resting = await c.placeIntent({ agent_id: delegated.id, market_id: DEM_YES, side: "buy", size_usdc: 4.9, price: 0.48 });
    expect(resting.status).toBe("open");
    // A fill (the delegated agent buys at the ask): positions and the fills of its order.
    const bought = await c.placeIntent({ agent_id: delegated.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5 });
    expect(bought.status).toBe("filled");
    await c.getOrder(bought.order_id);
    await c.updateLimits(delegated.id, { approval_threshold_usdc: 1 });
    const pending = await c.placeIntent({ agent_id: delegated.id, market_id: DEM_YES, side: "buy", size_usdc: 3, price: 0.47 });
    const pending2 = await c.placeIntent({ agent_id: delegated.id, market_id: DEM_YES, side: "buy", size_usdc: 3, price: 0.46 });
    expect([pending.status, pending2.status]).toEqual(["pending_approval", "pending_approval"]);
    await c.approveOrder(pending.order_id, { reason: "checked" });
    await c.rejectOrder(pending2.order_id, { reason: "no" });
    await c.updateLimits(delegated.id, { approval_threshold_usdc: null });
    await c.getOrder(submitted.order_id);
    await c.listOrders({ agent_id: delegated.id, limit: 10 });
    await c.cancelOrder(resting.order_id);
    await c.getExposure(delegated.id);
    await c.getPositions(delegated.id);
    await c.listDecisions({ limit: 5 });
    await c.riskSummary({ hours: 2, days: 2 });

    // Guards and the kill switches.
    await c.setHeartbeat(payload.id, { interval_s: 60 });
    await c.heartbeat(payload.id);
    await c.clearHeartbeat(payload.id);
    await c.placeIntent({ agent_id: delegated.id, market_id: DEM_YES, side: "buy", size_usdc: 3, price: 0.45 });
    await c.cancelAll(delegated.id);
    await c.kill(payload.id, { reason: "answers" });
    await c.resume(payload.id);
    await c.killAll({ reason: "answers" });
    await c.getFirmKill();
    await c.resumeAll();
    await c.deleteCredentials(delegated.id);

    // Webhooks.
    const hook = await c.createWebhook({ url: receiver.url, event_types: ["kill"] });
    receiver.secret = hook.secret;
    await c.listWebhooks({ limit: 5 });
    await c.getWebhook(hook.id);
    await c.testWebhook(hook.id);
    await c.enableWebhook(hook.id);
    await c.deleteWebhook(hook.id);

    // Each answer: exactly its documented shape.
    const problems = answers.flatMap((a) => {
      const schema = routes.find((r) => r.key === a.route)?.schemas.get(a.status);
      if (!schema) return [`${a.route} ${a.status}: no schema documented`];
      return undocumented(schema, a.body).map((p) => `${a.route} ${a.status}: ${p}`);
    });
    expect(problems).toEqual([]);
    // Every documented JSON success was seen.
    const seen = new Set(answers.map((a) => `${a.route} ${a.status}`));
    const unseen = routes.flatMap((r) => [...r.schemas.keys()].map((code) => `${r.key} ${code}`)).filter((k) => !seen.has(k));
    expect(unseen).toEqual([]);
  }, 60_000);

  test("every documented answer example has exactly the fields of its schema", async () => {
    const doc = await (await t.app.handle(new Request("http://localhost/openapi"))).json();
    const problems: string[] = [];
    let checked = 0;
    for (const r of routes) {
      const [method, path] = r.key.split(" ");
      const op = doc.paths?.[path.replace(/:([a-z_]+)/g, "{$1}")]?.[method.toLowerCase()];
      for (const [code, schema] of r.schemas) {
        const media = op?.responses?.[String(code)]?.content?.["application/json"];
        const examples = [media?.example, ...Object.values<any>(media?.examples ?? {}).map((e) => e?.value), ...(media?.schema?.examples ?? [])].filter((e) => e !== undefined);
        for (const e of examples) {
          problems.push(...undocumented(schema, e).map((p) => `${r.key} ${code} example: ${p}`));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(40);
    expect(problems).toEqual([]);
  });
});
