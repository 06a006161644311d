/**
 * The SDK cannot drift from the service unnoticed: every SDK method is called against a recording
 * fetch, and what it sends (method, path, query parameters, body fields) is compared with the
 * service's OpenAPI document (GET /openapi) and the request-body schemas of the served routes; and
 * what each method's declared answer type holds (its fields, nested objects and arrays, union
 * members) is compared by tsc with the response schemas of the route it calls.
 */
import { beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BrokerClient, type CreateAgentRequest, type CredentialsRequest, type DecisionRequest, type IntentRequest, type Limits, type ListMarketsQuery, type ListDecisionsQuery, type ListOrdersQuery, type ListPaymentsQuery, type RiskSummaryQuery, type SubmitSignedRequest } from "../../packages/sdk/src/client.ts";
import type { CreateWebhookRequest } from "../../packages/sdk/src/client.ts";
import { sharedPglite } from "../support/databases.ts";
import { createTestApp, type TestApp } from "../support/app.ts";

/** Contract routes the SDK speaks that this service build does not serve yet (none now; a new one is listed here until served). */
const PENDING_ROUTES = new Set<string>([]);
/** Contract request fields the SDK sends that the served schemas do not have yet (none now). */
const PENDING_FIELDS: Record<string, string[]> = {};

interface Sent {
  /** The client method that was called when the request went out. */
  method: string;
  route: string;
  query: string[];
  body: string[] | null;
}

const ID = "__ID__";
const sent: Sent[] = [];
let calling = "";
const recordingFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const url = new URL(String(input));
  const route = `${init?.method ?? "GET"} ${url.pathname.split("/").map((s) => (s === ID ? "{*}" : s)).join("/")}`;
  const body = typeof init?.body === "string" ? Object.keys(JSON.parse(init.body)) : null;
  sent.push({ method: calling, route, query: [...url.searchParams.keys()], body });
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
  const client = new BrokerClient({ baseUrl: "http://sdk.test", apiKey: "k", fetch: recordingFetch });
  // Notes which public method each request came from (the method called last: calls are sequential).
  const noting = new Proxy(client, {
    get(target, name, receiver) {
      const v = Reflect.get(target, name, receiver);
      if (typeof v !== "function" || typeof name !== "string") return v;
      return (...args: unknown[]) => {
        calling = name;
        return v.apply(target, args);
      };
    },
  });
  await callEverything(noting);
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

/** The JSON schema of a route's 2xx answers (their union), as the key tree `Tree` in the check file gives a TS type. */
function schemaTree(schema: any, depth = 0): string {
  if (depth > 12) return '"any"';
  if (schema === undefined || schema === null || schema === true) return '"any"';
  if (schema.$ref) return schemaTree(resolveRef(schema.$ref), depth + 1);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const trees = [...new Set((branches as any[]).filter((b) => b.type !== "null").map((b) => schemaTree(b, depth + 1)))];
    return trees.length ? trees.join(" | ") : '"leaf"';
  }
  if (schema.allOf) return schemaTree(Object.assign({}, ...schema.allOf.map((b: any) => (b.$ref ? resolveRef(b.$ref) : b))), depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.filter((x: string) => x !== "null") : [schema.type];
  if (type.includes("array")) return schemaTree(schema.items, depth + 1);
  if (type.includes("object") || schema.properties) {
    if (!schema.properties || Object.keys(schema.properties).length === 0) return '"record"';
    const fields = Object.keys(schema.properties).sort().map((k) => `${JSON.stringify(k)}: ${schemaTree(schema.properties[k], depth + 1)}`);
    return `{ ${fields.join("; ")} }`;
  }
  if (type[0] === undefined && schema.const === undefined && schema.enum === undefined) return '"any"';
  return '"leaf"';
}

function resolveRef(ref: string): any {
  return ref.replace(/^#\//, "").split("/").reduce((o: any, k) => o?.[k], doc);
}

function answerSchemas(route: string): any[] | null {
  for (const [path, ops] of Object.entries<any>(doc.paths))
    for (const [m, op] of Object.entries<any>(ops)) {
      if (norm(m, path) !== route) continue;
      const ok = Object.entries<any>(op.responses ?? {}).filter(([code]) => code.startsWith("2"));
      const schemas = ok.map(([, r]) => r?.content?.["application/json"]?.schema).filter(Boolean);
      return schemas.length ? schemas : null;
    }
  return null;
}

const SDK_CLIENT = resolve(import.meta.dir, "../../packages/sdk/src/client.ts");
const TSC = resolve(import.meta.dir, "../../node_modules/.bin/tsc");
/** Methods whose answer is not a JSON body (text, a stream, nothing) or not a route of the OpenAPI document. */
const NOT_JSON = new Set(["metrics", "apiReference", "openapi", "events", "revokeApiKey", "deleteWebhook", "health", "ready"]);

/** Type-checks the check file with tsc: its exit code and its first complaints (the drifting types). */
function typecheck(lines: string[]): { exit: number | null; out: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "sdk-answers-"));
  try {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
    writeFileSync(join(dir, "answers.check.ts"), `${lines.join("\n")}\n`);
    // The SDK's own compiler settings (packages/sdk/tsconfig.build.json), with Bun's types for its node: imports.
    const compilerOptions = {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      lib: ["ES2022", "DOM", "DOM.Iterable"],
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      typeRoots: [resolve(import.meta.dir, "../../node_modules/@types")],
      types: ["bun"],
    };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["answers.check.ts"] }));
    const r = Bun.spawnSync([TSC, "--noErrorTruncation", "-p", join(dir, "tsconfig.json")], { cwd: dir });
    const out = `${r.stdout.toString()}${r.stderr.toString()}`;
    return { exit: r.exitCode, out: out.split("\n").filter((l) => l.trim() !== "").map((l) => l.replace(/^.*?Type '(.*)' is not assignable.*$/, "$1")).slice(0, 40) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The check file's start: the SDK's types, and the key-tree comparisons. */
const CHECK_HEADER: string[] = [
  `import type { BrokerClient, BrokerEvent, WebhookMessage } from ${JSON.stringify(SDK_CLIENT.replace(/\.ts$/, ".js"))};`,
  "type Leaf = string | number | boolean | bigint | null | undefined;",
  "/** A type's shape: its fields (not whether they are optional or nullable), array items, union members; leaves are \"leaf\". */",
  "/** Its named fields: an index signature (the SDK's `[extra: string]: unknown`, kept for fields added later) is not one. */",
  "type Named<K> = string extends K ? never : number extends K ? never : K;",
  "/** A field that is only ever null (an organization's event's agent_id) is a leaf too. */",
  "type Field<T> = [Exclude<T, null | undefined>] extends [never] ? \"leaf\" : Tree<Exclude<T, null | undefined>>;",
  "type Tree<T> = unknown extends T ? \"any\" : T extends Leaf ? \"leaf\" : T extends readonly (infer U)[] ? Tree<U> : [keyof { [K in keyof T as Named<K>]: 0 }] extends [never] ? \"record\" : { [K in keyof T as Named<K>]-?: Field<T[K]> };",
  "type Equal<A, B> = (<G>() => G extends A ? 1 : 2) extends (<G>() => G extends B ? 1 : 2) ? true : false;",
  "/** The members of S that equal no member of D. */",
  "type Unmatched<S, D> = S extends unknown ? (true extends (D extends unknown ? Equal<S, D> : never) ? never : S) : never;",
  "type Answer<M extends keyof BrokerClient> = BrokerClient[M] extends (...a: any[]) => Promise<infer R> ? Tree<R> : never;",
  "type IsUnion<T, U = T> = T extends unknown ? ([U] extends [T] ? false : true) : never;",
  "type AllKeys<U> = U extends unknown ? keyof U : never;",
  "/** The route's member with the same fields as S, if one has them. */",
  "type SameKeys<S, D> = D extends unknown ? (Equal<keyof S, keyof D> extends true ? D : never) : never;",
  "/** Where the route's schema says only \"an object\" (\"record\") or anything (\"any\"), the SDK's more precise type is not compared. */",
  "type Align<S, D> = S extends unknown ? AlignOne<S, [SameKeys<S, D>] extends [never] ? D : SameKeys<S, D>> : never;",
  "type AlignOne<S, D> = [D] extends [\"record\"] ? \"record\" : [D] extends [\"any\"] ? \"any\" : true extends IsUnion<D> ? S : S extends object ? (D extends object ? { [K in keyof S]: K extends keyof D ? Align<S[K], D[K]> : S[K] } : S) : S;",
  "/** Where two object trees differ: fields only one has, and the fields both have that differ (by path). */",
  "type Diff<S, D, P extends string = \"\"> = [S, D] extends [object, object] ? { [K in keyof S | keyof D]: K extends string ? (K extends keyof D ? (K extends keyof S ? (Equal<S[K], D[K]> extends true ? never : Diff<S[K], D[K], `${P}${K}.`>) : `sdk lacks ${P}${K}`) : `route lacks ${P}${K}`) : never }[keyof S | keyof D] : `${P}: ${S & string} / ${D & string}`;",
  "/** The SDK's members (a union: variants of one answer) that are not a part of the route's one object (some of its fields, the same there). */",
  "type NotPart<S, D> = S extends unknown ? ([Exclude<keyof S, keyof D>] extends [never] ? (Equal<S, Pick<D, keyof S & keyof D>> extends true ? never : S) : S) : never;",
  "/**",
  " * The same answers: the route's schemas a union (several status codes, anyOf): each member of one equals a member of the other;",
  " * one schema and an SDK union (variants, e.g. by mode): each variant is a part of it and together they have all its fields;",
  " * else equal.",
  " */",
  "type Same<Name extends string, S, D> = true extends IsUnion<D>",
  "  ? [Unmatched<S, D>] extends [never] ? ([Unmatched<D, S>] extends [never] ? \"same\" : { drift: Name; route_member_no_sdk_type_has: Unmatched<D, S> }) : { drift: Name; sdk_member_the_route_lacks: Unmatched<S, D> }",
  "  : true extends IsUnion<S>",
  "    ? [NotPart<S, D>] extends [never] ? ([Exclude<keyof D, AllKeys<S>>] extends [never] ? \"same\" : { drift: Name; route_fields_no_sdk_variant_has: Exclude<keyof D, AllKeys<S>> }) : { drift: Name; diff: Diff<NotPart<S, D>, D> }",
  "    : Equal<S, D> extends true ? \"same\" : { drift: Name; diff: Diff<S, D> };",
  "/** For one of several methods of a route: each of its answers is one of the route's. */",
  "type Within<Name extends string, S, D> = [Unmatched<S, D>] extends [never] ? \"same\" : { drift: Name; sdk_member_the_route_lacks: Unmatched<S, D> };",
];

test("answers: each SDK method's declared answer type has exactly the fields of its route's response schemas (tsc)", () => {
  // The check file: one key tree per method (the SDK's, from its declared type) against the route's.
  const byMethod = new Map<string, string>();
  for (const s of sent) if (s.method && !NOT_JSON.has(s.method) && !byMethod.has(s.method)) byMethod.set(s.method, s.route);
  const lines: string[] = [...CHECK_HEADER];
  const methodsOfRoute = new Map<string, string[]>();
  for (const [method, route] of byMethod) methodsOfRoute.set(route, [...(methodsOfRoute.get(route) ?? []), method]);
  let compared = 0;
  const skipped: string[] = [];
  for (const [route, methods] of methodsOfRoute) {
    const schemas = answerSchemas(route);
    if (!schemas) {
      skipped.push(route);
      continue;
    }
    const docTree = [...new Set(schemas.map((x) => schemaTree(x)))].join(" | ");
    const id = route.replace(/[^A-Za-z0-9]+/g, "_");
    lines.push(`type Doc_${id} = ${docTree};`);
    for (const m of methods) {
      // A route several methods share (the intent's dry run and placement): each method's answers are
      // some of the route's, and together they are all of them.
      const check = methods.length > 1 ? "Within" : "Same";
      lines.push(`export const ${m}: "same" = null! as ${check}<${JSON.stringify(`${m} (${route})`)}, Align<Answer<${JSON.stringify(m)}>, Doc_${id}>, Doc_${id}>;`);
      compared++;
    }
    if (methods.length > 1) {
      const union = methods.map((m) => `Align<Answer<${JSON.stringify(m)}>, Doc_${id}>`).join(" | ");
      lines.push(`export const all_${id}: "same" = null! as Same<${JSON.stringify(route)}, ${union}, Doc_${id}>;`);
    }
  }
  expect(compared).toBeGreaterThanOrEqual(40);
  // Only answers that are not JSON objects are left out (DELETE's 204s).
  expect(skipped.filter((r) => !r.startsWith("DELETE "))).toEqual([]);

  const r = typecheck(lines);
  expect(r).toEqual({ exit: 0, out: [] });
}, 60_000);

test("events and webhook messages: the SDK's BrokerEvent and WebhookMessage have exactly the variants and fields of the service's schemas (tsc)", () => {
  const schemas = doc.components?.schemas ?? {};
  // The stream's envelope, one variant per type, and the webhook message of each type (and the test message).
  expect((schemas.BrokerEvent?.anyOf ?? []).length).toBe(5);
  expect((schemas.WebhookMessage?.anyOf ?? []).length).toBe(6);
  // The OpenAPI document's webhooks: each type's message is the schema's variant of that type.
  expect(Object.keys(doc.webhooks ?? {}).sort()).toEqual(["breaker", "kill", "order", "risk_rejected", "webhook_disabled", "webhook_test"]);
  for (const [type, item] of Object.entries<any>(doc.webhooks)) {
    const body = item.post.requestBody.content["application/json"].schema;
    expect(body.properties.type.const).toBe(type);
    expect(schemaTree(body)).toBe(schemaTree(schemas.WebhookMessage.anyOf.find((v: any) => v.properties.type.const === type)));
  }
  expect(doc.paths["/v1/events"].get.responses["200"].content["text/event-stream"]["x-data-schema"]).toEqual({ $ref: "#/components/schemas/BrokerEvent" });
  // Variant by variant (the `type` tells them apart): the SDK's variant of each type against the schema's.
  const lines = [...CHECK_HEADER];
  for (const [name, schema] of [["BrokerEvent", schemas.BrokerEvent], ["WebhookMessage", schemas.WebhookMessage]] as const) {
    const types = schema.anyOf.map((v: any) => v.properties.type.const as string);
    lines.push(`export const ${name}_types: true = null! as Equal<${name}["type"], ${types.map((x: string) => JSON.stringify(x)).join(" | ")}>;`);
    for (const v of schema.anyOf) {
      const type = v.properties.type.const as string;
      const id = `${name}_${type}`;
      lines.push(`type Doc_${id} = ${schemaTree(v)};`);
      lines.push(`export const ${id}: "same" = null! as Same<${JSON.stringify(`${name} ${type}`)}, Align<Tree<Extract<${name}, { type: ${JSON.stringify(type)} }>>, Doc_${id}>, Doc_${id}>;`);
    }
  }
  expect(typecheck(lines)).toEqual({ exit: 0, out: [] });
}, 60_000);
