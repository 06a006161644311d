/**
 * The SDK cannot drift from the service unnoticed: every SDK method is called against a recording
 * fetch, and what it sends (method, path, query parameters, body fields) is compared with the
 * service's OpenAPI document (GET /openapi) and the request-body schemas of the served routes.
 */
import { beforeAll, expect, test } from "bun:test";
import { BrokerClient, type CreateAgentRequest, type CredentialsRequest, type DecisionRequest, type IntentRequest, type Limits, type ListMarketsQuery, type ListDecisionsQuery, type ListOrdersQuery, type ListPaymentsQuery, type RiskSummaryQuery, type SubmitSignedRequest } from "../../packages/sdk/src/client.ts";
import type { CreateWebhookRequest } from "../../packages/sdk/src/client.ts";
import { sharedPglite } from "../support/databases.ts";
import { createTestApp, type TestApp } from "../support/app.ts";

/** Contract routes the SDK speaks that this service build does not serve yet (none now; a new one is listed here until served). */
const PENDING_ROUTES = new Set<string>([]);
/** Contract request fields the SDK sends that the served schemas do not have yet (none now). */
const PENDING_FIELDS: Record<string, string[]> = {};

interface Sent {
  route: string;
  query: string[];
  body: string[] | null;
}

const ID = "__ID__";
const sent: Sent[] = [];
const recordingFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const url = new URL(String(input));
  const route = `${init?.method ?? "GET"} ${url.pathname.split("/").map((s) => (s === ID ? "{*}" : s)).join("/")}`;
  const body = typeof init?.body === "string" ? Object.keys(JSON.parse(init.body)) : null;
  sent.push({ route, query: [...url.searchParams.keys()], body });
  return new Response(route.startsWith("GET /v1/events") ? "" : "{}", { status: 200, headers: { "content-type": "application/json" } });
}) as typeof fetch;

const limits: Required<Omit<Limits, string & {}>> = {
  min_order_usdc: 1, max_order_usdc: 1, daily_volume_usdc: 1, capital_usdc: 1, max_market_exposure_pct: 0.1, kelly_fraction: 0.1, kelly_fallback_pct: 0.1,
  price_band: 0.1, max_slippage: 0.1, max_depth_share: 0.1, book_max_age_s: 1, min_time_to_end_s: 1, market_deny: [], category_deny: [], category_allow: [],
  max_venue_errors: 1, breaker_cooldown_s: 1, max_orders_per_minute: 1, max_open_orders: 1, duplicate_window_s: 1, runaway_trip_count: 1, approval_threshold_usdc: null,
} as any;
const intent: Required<IntentRequest> = { market_id: "1", side: "buy", size_usdc: 1, price: 0.5, agent_id: ID, probability: 0.5, order_type: "GTD", expires_at: "x", client_order_id: "c" };
const agent: Required<CreateAgentRequest> = { name: "n", wallet_address: "0x", signer_address: "0x", signature_type: 0, owner_address: "0x", limits: {} };
const creds: Required<CredentialsRequest> = { api_key: "k", api_secret: "s", passphrase: "p", scopes: ["order:place"] };
const submit: Required<SubmitSignedRequest> = { order_id: ID, signature: "0x", venue_auth: { api_key: "k", passphrase: "p", timestamp: "1", signature: "s" } };
const marketsQ: Required<ListMarketsQuery> = { limit: 1, cursor: "c", category: "x", active: true, closed: false, accepting_orders: true, q: "q" };
const ordersQ: Required<ListOrdersQuery> = { limit: 1, cursor: "c", agent_id: ID, status: "open" };

/** Every public method of the client, with every field it can send. */
async function callEverything(c: BrokerClient): Promise<void> {
  await c.health(); await c.ready(); await c.metrics(); await c.apiReference();
  await c.listPayments({ limit: 1, cursor: "c", agent_id: ID, payer: "0x", status: "settled" } satisfies Required<ListPaymentsQuery>);
  await c.createOrg({ name: "n" }); await c.createApiKey({ name: "n", agent_id: ID }); await c.listApiKeys({ limit: 1, cursor: "c" }); await c.revokeApiKey(ID);
  await c.listMarkets(marketsQ); await c.getMarket(ID);
  await c.createAgent(agent); await c.listAgents({ limit: 1, cursor: "c" }); await c.getAgent(ID); await c.updateLimits(ID, limits);
  await c.tripBreaker(ID); await c.resume(ID); await c.setCredentials(ID, creds); await c.deleteCredentials(ID); await c.kill(ID, { reason: "r" });
  await c.kill(ID, { reason: "r", venue_auth: submit.venue_auth });
  await c.setHeartbeat(ID, { interval_s: 5 }); await c.heartbeat(ID); await c.clearHeartbeat(ID);
  await c.checkIntent(intent); await c.placeIntent(intent); await c.submitSigned(submit);
  await c.getExposure(ID);
  await c.getPositions(ID);
  await c.listDecisions({ limit: 1, cursor: "c", agent_id: ID, approved: false } satisfies Required<ListDecisionsQuery>);
  await c.riskSummary({ agent_id: ID, hours: 1, days: 1 } satisfies Required<RiskSummaryQuery>);
  await c.getOrder(ID); await c.listOrders(ordersQ); await c.cancelOrder(ID); await c.cancelOrder(ID, { venue_auth: submit.venue_auth }); await c.approveOrder(ID, { reason: "r" } satisfies Required<DecisionRequest>); await c.rejectOrder(ID, { reason: "r" });
  await c.events({ agent_id: ID, after: "1", maxReconnects: 0, reconnectDelayMs: 1 }).next().catch(() => undefined);
  await c.createWebhook({ url: "https://hooks.example.com/x", event_types: ["order"], agent_id: ID, description: "d" } satisfies Required<CreateWebhookRequest>);
  await c.listWebhooks({ limit: 1, cursor: "c" }); await c.getWebhook(ID); await c.testWebhook(ID); await c.enableWebhook(ID); await c.deleteWebhook(ID);
  await c.cancelAll(ID, { market_id: "1", venue_auths: { "0xab": submit.venue_auth } }); await c.cancelAll(ID, { venue_auth: submit.venue_auth });
  await c.killAll({ org_id: "org_x", reason: "r", venue_auths: { agt_x: submit.venue_auth } }); await c.resumeAll({ org_id: "org_x" }); await c.getFirmKill();
  await c.getBook(ID, { depth: 5 });
}

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await createTestApp(await sharedPglite());
  doc = (await t.call("GET", "/openapi")).body;
  await callEverything(new BrokerClient({ baseUrl: "http://sdk.test", apiKey: "k", fetch: recordingFetch }));
});

const norm = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}|:[a-z_]+/g, "{*}")}`;
const OPS = ["get", "post", "put", "patch", "delete"];

test("every route of the OpenAPI document has an SDK method, and every SDK route is served or a listed contract route", () => {
  const documented = new Set<string>();
  for (const [path, ops] of Object.entries<any>(doc.paths)) for (const m of Object.keys(ops)) if (OPS.includes(m)) documented.add(norm(m, path));
  expect(documented.size).toBeGreaterThan(20);
  const sdk = new Set(sent.map((s) => s.route));
  const missing = [...documented].filter((r) => !sdk.has(r) && r !== "GET /openapi");
  expect(missing).toEqual([]);
  const extra = [...sdk].filter((r) => !documented.has(r) && !PENDING_ROUTES.has(r) && r !== "GET /openapi");
  expect(extra).toEqual([]);
  // A pending route that is now served leaves the list.
  expect([...PENDING_ROUTES].filter((r) => documented.has(r))).toEqual([]);
});

test("query parameters: the SDK sends exactly the documented ones", () => {
  for (const [path, ops] of Object.entries<any>(doc.paths))
    for (const [m, op] of Object.entries<any>(ops)) {
      const documented = (op.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => p.name).sort();
      const calls = sent.filter((s) => s.route === norm(m, path));
      if (!calls.length) continue;
      const sdk = [...new Set(calls.flatMap((c) => c.query))].sort();
      expect({ route: norm(m, path), query: sdk }).toEqual({ route: norm(m, path), query: documented });
    }
});

test("request bodies: every served field is one the SDK can send; the SDK sends no field that is neither served nor a listed contract field", () => {
  let compared = 0;
  for (const r of (t.app.elysia as any).routes as any[]) {
    const route = norm(r.method, r.path);
    const docSchema = doc.paths[r.path.replace(/:([a-z_]+)/g, "{$1}")]?.[r.method.toLowerCase()]?.requestBody?.content?.["application/json"]?.schema;
    const schema = docSchema?.properties ? docSchema : r.hooks?.body;
    const calls = sent.filter((s) => s.route === route && s.body);
    if (!schema?.properties) continue;
    const served = Object.keys(schema.properties).sort();
    const sdk = [...new Set(calls.flatMap((c) => c.body!))].sort();
    expect({ route, missing: served.filter((f) => !sdk.includes(f)) }).toEqual({ route, missing: [] });
    expect({ route, unknown: sdk.filter((f) => !served.includes(f) && !(PENDING_FIELDS[route] ?? []).includes(f)) }).toEqual({ route, unknown: [] });
    // A pending field that is now served leaves the list.
    expect({ route, nowServed: (PENDING_FIELDS[route] ?? []).filter((f) => served.includes(f)) }).toEqual({ route, nowServed: [] });
    compared++;
  }
  expect(compared).toBeGreaterThanOrEqual(7);
});

test("every POST carries an Idempotency-Key (checked on the recorded calls' headers)", async () => {
  const keys: (string | null)[] = [];
  const c = new BrokerClient({
    baseUrl: "http://sdk.test",
    fetch: (async (_i: any, init?: RequestInit) => {
      if (init?.method === "POST") keys.push(new Headers(init.headers).get("idempotency-key"));
      return new Response("{}", { status: 200 });
    }) as typeof fetch,
  });
  await callEverything(c);
  expect(keys.length).toBe(sent.filter((s) => s.route.startsWith("POST ")).length);
  expect(keys.every((k) => typeof k === "string" && k.length >= 32)).toBe(true);
  expect(new Set(keys).size).toBe(keys.length);
});
