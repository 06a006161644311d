/**
 * Property-based bad input on every route (issue 15), through `app.handle` on PGlite: at least
 * 500 generated requests per route, each bad in at least one way the route must refuse (unknown
 * body field, body that is not a JSON object, malformed JSON, an id that is junk or another
 * organization's, a missing or unknown API key, junk query values), with everything else random:
 * valid values, junk of every JSON type, NULs, long and non-ASCII strings, secrets in every field.
 *
 * For each request: never a 5xx; an error is RFC 9457 problem details (application/problem+json
 * with type, title, status, code); the state is unchanged (row counts and a digest of the rows of
 * every table but the Idempotency-Key records, and the agents' in-memory breaker and limits); no
 * secret from the request and no API key appears in the answer. Read-only routes (health, metrics,
 * openapi, docs, markets, payments, risk decisions and summary, exposure, events, dashboard) take junk
 * query strings and headers: never a 5xx, and they change nothing. A first test checks that the routes
 * listed are every route the app serves, so a new route cannot be left out.
 *
 * Seeded (FC_SEED, printed) so a failure can be replayed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { sql } from "drizzle-orm";
import markets from "../../fixtures/markets.json" with { type: "json" };
import type { Database } from "../../src/db/database.ts";
import { ADMIN_TOKEN, createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";

const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
const RUNS = Number(process.env.FC_RUNS ?? 500);
console.log(`property-bad-input: seed ${SEED}, ${RUNS} cases per route (FC_SEED=${SEED} to replay)`);

const MARKET = (markets as any[]).find((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
const TOKEN: string = MARKET.tokens[0].token_id;
const WALLET = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

let database: Database;
let t: TestApp;
/** Organization A (the caller) and B (another organization): keys, an agent and an order each. */
const A = { key: "", agent: "", order: "", keyId: "", org: "" };
const B = { key: "", agent: "", order: "" };

beforeAll(async () => {
  database = await sharedPglite();
  t = await createTestApp(database, { config: { rateLimitPerS: 0 } });
  for (const side of [A, B]) {
    const made = await t.newAgent({ body: { wallet_address: WALLET, limits: { book_max_age_s: 3600, kelly_fallback_pct: 1 } } });
    side.key = made.key;
    side.agent = made.agent.id;
    const o = await t.call("POST", "/v1/orders/intent", { key: made.key, body: { market_id: TOKEN, side: "buy", size_usdc: 5, price: 0.4, agent_id: made.agent.id } });
    if (o.status !== 201) throw new Error(`setup intent: ${o.status} ${o.text}`);
    side.order = o.body.order_id;
  }
  A.keyId = (await t.call("GET", "/v1/api-keys", { key: A.key })).body.data[0].id;
  A.org = (await t.call("GET", `/v1/agents/${A.agent}`, { key: A.key })).body.org_id;
});
afterAll(async () => {
  await t.app.stop();
});

// ------------------------------------------------------------------ generators

/** A secret planted in the request: it must never come back. */
const secretArb = fc.stringMatching(/^[a-z0-9]{16}$/).map((s) => `SECRET${s}`);

const junkArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 5 })), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.integer(), { maxKeys: 2 }),
  fc.constantFrom("", " ", "\u0000", "a\u0000b", "0x" + "0".repeat(40), "-1", "1e309", "NaN", "é€𝕏", "ord_zzzzzzzzzzzzzzzzzzzz", "agt_zzzzzzzzzzzzzzzzzzzz", "x".repeat(3000), -0, 1e308, 2 ** 53 + 1),
);

const isJson = (x: string) => {
  try {
    JSON.parse(x);
    return true;
  } catch {
    return false;
  }
};

/** A field: a valid value, junk, or left out. */
const field = (valid: fc.Arbitrary<unknown>) => fc.oneof({ weight: 2, arbitrary: valid }, { weight: 2, arbitrary: junkArb }, { weight: 1, arbitrary: fc.constant(undefined) });

type BodyShape = Record<string, fc.Arbitrary<unknown>>;
const shapeArb = (shape: BodyShape, secret: string) =>
  fc.record(Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, field(v)]))).map((o) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v === "$SECRET" ? secret : v === "$ORG" ? A.org : v;
    return out;
  });

/** A path id: junk, another organization's, or a well-formed id nobody has. */
const foreignIdArb = (prefix: string, other: () => string) =>
  fc.oneof(
    fc.constant(null).map(() => other()),
    fc.stringMatching(/^[0-9a-z]{20}$/).map((s) => `${prefix}_${s}`),
    fc.string({ maxLength: 40 }).map((s) => encodeURIComponent(s) || "x"),
    fc.constantFrom("%00", "..", "%2e%2e", "null", "0", `${prefix}_`, `${prefix}_${"z".repeat(300)}`, "%F0%9F%92%A9", "%ZZ"),
  );

type Auth = "good" | "none" | "unknown" | "wrong_admin" | "admin";
interface Case {
  method: string;
  path: string;
  auth: Auth;
  headers: Record<string, string>;
  body?: string;
  secrets: string[];
}

interface Route {
  method: string;
  path: string;
  gen: fc.Arbitrary<Case>;
  /** Read-only routes may answer 2xx to junk. */
  readOnly?: boolean;
}

const extraHeadersArb = fc.record(
  {
    "idempotency-key": fc.oneof(fc.string({ maxLength: 20 }).filter((s) => /^[\x21-\x7e]+$/.test(s)), fc.constantFrom("k", "x".repeat(250))),
    "x-request-id": fc.oneof(fc.string({ maxLength: 20 }).filter((s) => /^[\x20-\x7e]*$/.test(s)), fc.constant("ok-id")),
    "content-type": fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-16", "multipart/form-data; boundary=x"),
  },
  { requiredKeys: [] },
);
const badAuthArb = fc.constantFrom<Auth>("none", "unknown", "wrong_admin");

/**
 * A route with a JSON body. Each case is bad in one chosen way: an unknown field, a body that is
 * not an object, malformed JSON (strict bodies), a junk or foreign id, or bad credentials; the
 * rest is random. `own` is the caller's own id for the path, used when the id is not the bad part.
 */
function bodyRoute(method: string, template: string, shape: BodyShape, opts: { id?: { prefix: string; own: () => string; foreign: () => string }; strict?: boolean; admin?: boolean } = {}): Route {
  const strict = opts.strict ?? true;
  const kinds = [...(strict ? ["unknown_field", "not_object", "malformed"] : []), ...(opts.id ? ["id"] : []), "auth"];
  const gen = fc
    .record({
      bad: fc.constantFrom(...kinds),
      secret: secretArb,
      badAuth: badAuthArb,
      badId: opts.id ? foreignIdArb(opts.id.prefix, opts.id.foreign) : fc.constant(""),
      nonObject: fc.oneof(fc.array(junkArb, { maxLength: 3 }), fc.integer(), fc.string(), fc.constant(null), fc.boolean()),
      // Not JSON (an empty body is no body: a route whose fields are all optional may take it).
      malformed: fc.oneof(fc.string({ minLength: 1, maxLength: 40 }).filter((x) => x.trim() !== "" && !isJson(x)), fc.constantFrom("{", '{"a":', "{'a':1}", "[1,", "\u0000", '{"a":1}}', "nul")),
      headers: extraHeadersArb,
      unknownKey: fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !(k in shape) && k !== "__proto__"),
      addUnknown: fc.boolean(),
    })
    .chain((r) => shapeArb(shape, r.secret).map((obj) => ({ ...r, obj })))
    .map((r): Case => {
      const auth: Auth = r.bad === "auth" ? r.badAuth : opts.admin ? "admin" : "good";
      const id = !opts.id ? "" : r.bad === "id" ? r.badId : opts.id.own();
      let body: string;
      if (r.bad === "not_object") body = JSON.stringify(r.nonObject);
      else if (r.bad === "malformed") body = r.malformed;
      else body = JSON.stringify(r.bad === "unknown_field" || r.addUnknown ? { ...r.obj, [r.unknownKey]: r.secret } : r.obj);
      return { method, path: template.replace(":id", id), auth, headers: { "content-type": "application/json", ...r.headers }, body, secrets: [r.secret] };
    });
  return { method, path: template, gen };
}

/** A route without a body: junk query and headers; bad by id or credentials unless read-only. */
function plainRoute(
  method: string,
  template: string,
  opts: { id?: { prefix: string; own: () => string; foreign: () => string }; query?: BodyShape; readOnly?: boolean; admin?: boolean } = {},
): Route {
  const kinds = opts.readOnly ? ["any"] : [...(opts.id ? ["id"] : []), "auth"];
  const gen = fc
    .record({
      bad: fc.constantFrom(...kinds),
      secret: secretArb,
      auth: fc.constantFrom<Auth>("good", "good", "none", "unknown"),
      badAuth: badAuthArb,
      ownId: fc.boolean(),
      badId: opts.id ? foreignIdArb(opts.id.prefix, opts.id.foreign) : fc.constant(""),
      query: shapeArb({ ...(opts.query ?? {}), junk: junkArb }, "$unused"),
      rawQuery: fc.oneof(fc.constant(""), fc.string({ maxLength: 30 }).map(encodeURIComponent), fc.constantFrom("%", "a=%ZZ", "limit=1&limit=2", "cursor=%00", "&&&=")),
      headers: extraHeadersArb,
    })
    .map((r): Case => {
      let auth: Auth = r.bad === "auth" ? r.badAuth : r.bad === "id" ? "good" : r.auth;
      if (opts.admin && auth === "good") auth = "admin";
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(r.query)) q.set(k, typeof v === "string" ? v : JSON.stringify(v));
      q.set("s", r.secret);
      const id = !opts.id ? "" : r.bad === "id" || !r.ownId ? r.badId : opts.id.own();
      const path = `${template.replace(":id", id)}?${q.toString()}${r.rawQuery ? `&${r.rawQuery}` : ""}`;
      const { "content-type": _ct, ...headers } = r.headers;
      return { method, path, auth, headers, secrets: [r.secret] };
    });
  return { method, path: template, gen, readOnly: opts.readOnly };
}

const limitsShape: BodyShape = {
  max_order_usdc: fc.double({ min: -10, max: 1e6 }),
  min_order_usdc: fc.integer({ min: -5, max: 100 }),
  daily_volume_usdc: fc.integer({ min: -1, max: 1e6 }),
  max_market_exposure_pct: fc.double({ min: -1, max: 2 }),
  market_deny: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
  category_allow: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
};
const page = { limit: fc.integer({ min: -5, max: 500 }), cursor: fc.string({ maxLength: 10 }) };
const agentId = { prefix: "agt", own: () => A.agent, foreign: () => B.agent };
const orderId = { prefix: "ord", own: () => A.order, foreign: () => B.order };
/** No endpoint is registered: every webhook id is unknown (404) to the caller. */
const webhookId = { prefix: "whk", own: () => "whk_zzzzzzzzzzzzzzzzzzzz", foreign: () => "whk_yyyyyyyyyyyyyyyyyyyy" };

/** Built once the fixtures exist (their ids go into the generators). */
function routes(): Route[] {
  return [
    plainRoute("GET", "/healthz", { readOnly: true }),
    plainRoute("GET", "/readyz", { readOnly: true }),
    plainRoute("GET", "/metrics", { readOnly: true }),
    plainRoute("GET", "/openapi", { readOnly: true }),
    plainRoute("GET", "/openapi/ui", { readOnly: true }),
    plainRoute("GET", "/v1/markets", { readOnly: true, query: page }),
    plainRoute("GET", "/v1/markets/:id", { readOnly: true, id: { prefix: "", own: () => TOKEN, foreign: () => "1".repeat(80) } }),
    bodyRoute("POST", "/v1/orgs", { name: fc.oneof(fc.string({ maxLength: 10 }), fc.constant("$SECRET")) }, { admin: true }),
    bodyRoute("POST", "/v1/api-keys", { name: fc.string({ maxLength: 10 }), agent_id: fc.constantFrom(A.agent, B.agent, "agt_zzzzzzzzzzzzzzzzzzzz") }),
    plainRoute("GET", "/v1/api-keys", { readOnly: true, query: page }),
    plainRoute("DELETE", "/v1/api-keys/:id", { id: { prefix: "key", own: () => A.keyId, foreign: () => `key_${"z".repeat(20)}` } }),
    bodyRoute("POST", "/v1/agents", {
      name: fc.string({ maxLength: 10 }),
      wallet_address: fc.constantFrom(WALLET, "0x" + "0".repeat(40)),
      signer_address: fc.constant(WALLET),
      signature_type: fc.integer({ min: -1, max: 5 }),
      limits: fc.constantFrom({ max_order_usdc: -1 }, {}),
    }),
    plainRoute("GET", "/v1/agents", { readOnly: true, query: page }),
    plainRoute("GET", "/v1/agents/:id", { readOnly: true, id: agentId }),
    bodyRoute("PATCH", "/v1/agents/:id/limits", limitsShape, { id: agentId }),
    bodyRoute("POST", "/v1/agents/:id/breaker", { reason: fc.string({ maxLength: 10 }) }, { id: agentId, strict: false }),
    bodyRoute("POST", "/v1/agents/:id/resume", { reason: fc.string({ maxLength: 10 }) }, { id: agentId, strict: false }),
    bodyRoute(
      "POST",
      "/v1/agents/:id/creds",
      { api_key: fc.constant("$SECRET"), api_secret: fc.constant("$SECRET"), passphrase: fc.constant("$SECRET"), scopes: fc.constantFrom(["order:place"], ["withdraw"], [], ["x"]) },
      { id: agentId },
    ),
    plainRoute("DELETE", "/v1/agents/:id/creds", { id: agentId }),
    bodyRoute("POST", "/v1/orders/intent", {
      market_id: fc.constantFrom(TOKEN, "123", "x"),
      side: fc.constantFrom("buy", "sell", "hold"),
      size_usdc: fc.double({ min: -10, max: 1e7 }),
      price: fc.double({ min: -1, max: 2 }),
      agent_id: fc.constantFrom(A.agent, B.agent),
      probability: fc.double({ min: -1, max: 2 }),
      order_type: fc.constantFrom("GTC", "GTD", "FOK", "FAK", "IOC"),
      expires_at: fc.constantFrom("2030-01-01T00:00:00Z", "yesterday"),
      client_order_id: fc.constant("$SECRET"),
    }),
    bodyRoute("POST", "/v1/orders/submit-signed", {
      order_id: fc.constantFrom(A.order, B.order, "ord_zzzzzzzzzzzzzzzzzzzz"),
      signature: fc.oneof(fc.constant("$SECRET"), fc.stringMatching(/^0x[0-9a-f]{130}$/)),
      venue_auth: fc.record({ api_key: fc.constantFrom("é", "k"), passphrase: fc.string(), timestamp: fc.constant("1"), signature: fc.string() }),
    }),
    plainRoute("GET", "/v1/orders", { readOnly: true, query: { ...page, agent_id: fc.constantFrom(B.agent, "x"), status: fc.constantFrom("open", "nope") } }),
    plainRoute("GET", "/v1/orders/:id", { readOnly: true, id: orderId }),
    plainRoute("DELETE", "/v1/orders/:id", { id: orderId }),
    bodyRoute("POST", "/v1/agents/:id/kill", { reason: fc.oneof(fc.string({ maxLength: 10 }), fc.constant("$SECRET")) }, { id: agentId }),
    bodyRoute(
      "POST",
      "/v1/agents/:id/cancel-all",
      { market_id: fc.constantFrom(TOKEN, "x", "1".repeat(80)), venue_auth: fc.record({ api_key: fc.constantFrom("é", "k"), passphrase: fc.string(), timestamp: fc.constant("1"), signature: fc.constant("$SECRET") }) },
      { id: agentId },
    ),
    bodyRoute("POST", "/v1/kill", { org_id: fc.constantFrom("$ORG", "org_zzzzzzzzzzzzzzzzzzzz", "x"), reason: fc.oneof(fc.string({ maxLength: 10 }), fc.constant("$SECRET")) }),
    bodyRoute("POST", "/v1/resume", { org_id: fc.constantFrom("$ORG", "org_zzzzzzzzzzzzzzzzzzzz", "x") }),
    plainRoute("GET", "/v1/kill", { readOnly: true }),
    plainRoute("GET", "/v1/markets/:id/book", { readOnly: true, id: { prefix: "", own: () => TOKEN, foreign: () => "1".repeat(80) }, query: { depth: fc.integer({ min: -5, max: 1000 }) } }),
    bodyRoute("PUT", "/v1/agents/:id/heartbeat", { interval_s: fc.oneof(fc.integer({ min: -10, max: 5000 }), fc.double()) }, { id: agentId }),
    plainRoute("DELETE", "/v1/agents/:id/heartbeat", { id: agentId }),
    plainRoute("POST", "/v1/agents/:id/heartbeat", { id: agentId }),
    bodyRoute("POST", "/v1/orders/:id/approve", { reason: fc.oneof(fc.string({ maxLength: 10 }), fc.constant("$SECRET")) }, { id: orderId }),
    bodyRoute("POST", "/v1/orders/:id/reject", { reason: fc.oneof(fc.string({ maxLength: 10 }), fc.constant("$SECRET")) }, { id: orderId }),
    bodyRoute("POST", "/v1/webhooks", {
      url: fc.constantFrom("ftp://hooks.example.com/x", "https://user:$SECRET@hooks.example.com/", "https://10.0.0.1/x", "https://[::1]/x", "x", ""),
      event_types: fc.constantFrom(["nope"], [], "order", ["order", 1]),
      agent_id: fc.constantFrom(B.agent, "x"),
      description: fc.string({ maxLength: 10 }),
    }),
    plainRoute("GET", "/v1/webhooks", { readOnly: true, query: page }),
    plainRoute("GET", "/v1/webhooks/:id", { readOnly: true, id: webhookId }),
    plainRoute("POST", "/v1/webhooks/:id/test", { id: webhookId }),
    plainRoute("POST", "/v1/webhooks/:id/enable", { id: webhookId }),
    plainRoute("DELETE", "/v1/webhooks/:id", { id: webhookId }),
    plainRoute("GET", "/docs/api", { readOnly: true }),
    plainRoute("GET", "/v1/payments", {
      readOnly: true,
      admin: true,
      query: { ...page, agent_id: fc.constantFrom(A.agent, "x"), payer: fc.constantFrom(WALLET, "0x12"), status: fc.constantFrom("settled", "verified", "nope") },
    }),
    plainRoute("GET", "/v1/risk/decisions", { readOnly: true, query: { ...page, agent_id: fc.constantFrom(A.agent, B.agent, "x"), approved: fc.constantFrom("true", "false", "maybe") } }),
    plainRoute("GET", "/v1/risk/summary", {
      readOnly: true,
      query: { agent_id: fc.constantFrom(A.agent, B.agent, "x"), hours: fc.integer({ min: -1, max: 200 }), days: fc.integer({ min: -1, max: 40 }) },
    }),
    plainRoute("GET", "/v1/agents/:id/exposure", { readOnly: true, id: agentId }),
    plainRoute("GET", "/v1/agents/:id/positions", { readOnly: true, id: agentId }),
    plainRoute("GET", "/v1/events", { readOnly: true, query: { agent_id: fc.constantFrom(A.agent, B.agent, "x"), after: fc.constantFrom("0", "-1", "1e3", "99999999999999999") } }),
    plainRoute("GET", "/dashboard", { readOnly: true }),
    plainRoute("GET", "/dashboard/", { readOnly: true }),
    { ...plainRoute("GET", "/dashboard/:id", { readOnly: true, id: { prefix: "", own: () => "app.js", foreign: () => "../../package.json" } }), path: "/dashboard/*" },
  ];
}
const ROUTE_NAMES = [
  "GET /healthz", "GET /readyz", "GET /metrics", "GET /openapi", "GET /openapi/ui", "GET /v1/markets", "GET /v1/markets/:id",
  "POST /v1/orgs", "POST /v1/api-keys", "GET /v1/api-keys", "DELETE /v1/api-keys/:id", "POST /v1/agents", "GET /v1/agents",
  "GET /v1/agents/:id", "PATCH /v1/agents/:id/limits", "POST /v1/agents/:id/breaker", "POST /v1/agents/:id/resume",
  "POST /v1/agents/:id/creds", "DELETE /v1/agents/:id/creds", "POST /v1/orders/intent", "POST /v1/orders/submit-signed",
  "GET /v1/orders", "GET /v1/orders/:id", "DELETE /v1/orders/:id", "POST /v1/agents/:id/kill",
  "PUT /v1/agents/:id/heartbeat", "DELETE /v1/agents/:id/heartbeat", "POST /v1/agents/:id/heartbeat",
  "POST /v1/orders/:id/approve", "POST /v1/orders/:id/reject",
  "POST /v1/webhooks", "GET /v1/webhooks", "GET /v1/webhooks/:id", "POST /v1/webhooks/:id/test", "POST /v1/webhooks/:id/enable", "DELETE /v1/webhooks/:id",
  "POST /v1/agents/:id/cancel-all", "POST /v1/kill", "POST /v1/resume", "GET /v1/kill", "GET /v1/markets/:id/book",
  "GET /docs/api", "GET /v1/payments", "GET /v1/risk/decisions", "GET /v1/risk/summary", "GET /v1/agents/:id/exposure", "GET /v1/events",
  "GET /v1/agents/:id/positions", "GET /dashboard", "GET /dashboard/", "GET /dashboard/*",
];

// ------------------------------------------------------------------ state and checks

/**
 * Row counts and a digest of every row that bad input must not touch (Idempotency-Key records
 * excepted: they store 4xx answers by design; and an API key's last use, which any authenticated
 * request records at most once a minute).
 */
async function snapshot(): Promise<string> {
  const rows = await database.db.execute(sql`
    select
      (select count(*) || ':' || coalesce(md5(string_agg(o::text, '' order by o.id)), '') from orgs o) as orgs,
      (select count(*) || ':' || coalesce(md5(string_agg((to_jsonb(k) - 'last_used_at')::text, '' order by k.id)), '') from api_keys k) as keys,
      (select count(*) || ':' || coalesce(md5(string_agg(a::text, '' order by a.id)), '') from agents a) as agents,
      (select count(*) || ':' || coalesce(md5(string_agg(r::text, '' order by r.id)), '') from orders r) as orders,
      (select count(*) from risk_decisions) as decisions,
      (select count(*) || ':' || coalesce(md5(string_agg(c::text, '' order by c.agent_id)), '') from credentials c) as creds,
      (select count(*) from kills) as kills,
      (select count(*) from events) as events,
      (select count(*) from payments) as payments`);
  const row = (rows as any).rows?.[0] ?? (rows as any)[0];
  const actors = [A.agent, B.agent].map((id) => {
    const v = t.app.services.agents.registry.peek(id)?.view();
    return v ? JSON.stringify([v.breaker, v.profile.mode, v.openOrders]) : "-";
  });
  return JSON.stringify([row, actors]);
}

async function send(c: Case): Promise<{ status: number; text: string; contentType: string }> {
  const headers: Record<string, string> = { ...c.headers };
  if (c.auth === "good") headers["x-api-key"] = A.key;
  else if (c.auth === "unknown") headers["x-api-key"] = `bk_${"Q".repeat(43)}`;
  else if (c.auth === "wrong_admin") headers.authorization = "Bearer not-the-admin-token";
  else if (c.auth === "admin") headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  let request: Request;
  try {
    request = new Request(`http://localhost${c.path}`, { method: c.method, headers, body: c.body });
  } catch {
    // A request no client can send (an invalid URL or header): nothing to check.
    return { status: 400, text: "", contentType: "application/problem+json" };
  }
  const res = await t.app.handle(request);
  const contentType = res.headers.get("content-type") ?? "";
  if (contentType.startsWith("text/event-stream")) {
    // An event stream that opened never ends by itself: read its first chunk, then hang up.
    const reader = res.body!.getReader();
    const first = await reader.read();
    await reader.cancel();
    return { status: res.status, text: first.value ? new TextDecoder().decode(first.value) : "", contentType };
  }
  return { status: res.status, text: await res.text(), contentType };
}

describe("property: bad input on every route", () => {
  test("the routes below are every route of the app", () => {
    const served = t.app.elysia.routes.map((r: { method: string; path: string }) => `${r.method} ${r.path}`).sort();
    const named = ROUTE_NAMES.map((n) => n.replace("/v1/markets/:id", "/v1/markets/:market_id")).sort();
    expect(named).toEqual(served);
  });

  let built: Map<string, Route>;
  for (const name of ROUTE_NAMES) {
    test(`${name}: ${RUNS} cases, never 5xx, problem details, state unchanged, nothing echoed`, async () => {
      built ??= new Map(routes().map((r) => [`${r.method} ${r.path}`, r]));
      const route = built.get(name)!;
      expect(route).toBeDefined();
      let before = await snapshot();
      let errors = 0;
      let cases = 0;
      await fc.assert(
        fc.asyncProperty(route.gen, async (c) => {
          cases++;
          const res = await send(c);
          if (res.status >= 500) throw new Error(`5xx: ${res.status} ${res.text.slice(0, 300)}`);
          if (!route.readOnly && res.status < 400) throw new Error(`bad input accepted: ${res.status} ${res.text.slice(0, 300)}`);
          if (res.status >= 400) {
            errors++;
            if (!res.contentType.startsWith("application/problem+json")) throw new Error(`not problem details: ${res.status} ${res.contentType} ${res.text.slice(0, 200)}`);
            const p = JSON.parse(res.text);
            for (const k of ["type", "title", "status", "code"]) if (!(k in p)) throw new Error(`problem without ${k}: ${res.text.slice(0, 200)}`);
            if (p.status !== res.status) throw new Error(`problem status ${p.status} but HTTP ${res.status}`);
          }
          for (const s of c.secrets) if (res.text.includes(s)) throw new Error(`secret echoed: ${res.text.slice(0, 300)}`);
          if (res.text.includes(A.key) || res.text.includes(B.key)) throw new Error("an API key was echoed");
          const after = await snapshot();
          if (after !== before) throw new Error(`state changed by ${c.method} ${c.path} (${res.status}): ${before} -> ${after}`);
          before = after;
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
      expect(cases).toBeGreaterThanOrEqual(RUNS);
      if (!route.readOnly) expect(errors).toBe(cases);
    }, 120_000);
  }
});
