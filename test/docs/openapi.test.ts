/**
 * The OpenAPI document (`GET /openapi`) is what the SDK's types are generated from: every route that
 * takes a body shows it with its required fields and an example, and every answer has an example.
 * The examples are checked against the route schemas the service validates with.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { CreateAgentBody, PatchLimitsBody } from "../../src/modules/agents/model.ts";
import { IssueKeyBody } from "../../src/modules/api-keys/model.ts";
import { CredentialsBody } from "../../src/modules/credentials/model.ts";
import { KillBody } from "../../src/modules/kill/model.ts";
import { IntentBody } from "../../src/modules/intents/model.ts";
import { DecisionBody, SubmitSignedBody } from "../../src/modules/orders/model.ts";
import { HeartbeatBody } from "../../src/modules/agents/heartbeat-routes.ts";
import { CreateOrgBody } from "../../src/modules/orgs/model.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";

type Operation = {
  requestBody?: { required?: boolean; content: Record<string, { schema?: any; example?: unknown; examples?: Record<string, unknown> }> };
  responses?: Record<string, { content?: Record<string, { schema?: any; example?: unknown; examples?: Record<string, unknown> }> }>;
  parameters?: { name: string; in: string; schema: any }[];
};

/** Routes that take no body at all; the test proves it by calling them without one. */
const NO_BODY = new Set(["post /v1/agents/{id}/breaker", "post /v1/agents/{id}/resume", "post /v1/agents/{id}/heartbeat", "post /v1/webhooks/{id}/test", "post /v1/webhooks/{id}/enable"]);

/** The fields each body requires (the contract's, docs/api.md), to catch a schema that lost one. */
const REQUIRED: Record<string, string[]> = {
  "post /v1/orgs": ["name"],
  "post /v1/api-keys": [],
  "post /v1/agents": ["wallet_address"],
  "patch /v1/agents/{id}/limits": [],
  "post /v1/agents/{id}/creds": ["api_key", "api_secret", "scopes"],
  "post /v1/orders/intent": ["market_id", "side", "size_usdc", "price"],
  "post /v1/orders/submit-signed": ["order_id", "signature"],
  "post /v1/agents/{id}/kill": [],
  "post /v1/agents/{id}/cancel-all": [],
  "post /v1/kill": ["org_id"],
  "post /v1/resume": ["org_id"],
  "put /v1/agents/{id}/heartbeat": ["interval_s"],
  "post /v1/orders/{id}/approve": [],
  "post /v1/orders/{id}/reject": [],
  "post /v1/webhooks": ["url"],
};

const hasExample = (media: { schema?: any; example?: unknown; examples?: Record<string, unknown> } | undefined) =>
  !!media && (media.example !== undefined || Object.keys(media.examples ?? {}).length > 0 || (media.schema?.examples?.length ?? 0) > 0);

describe("OpenAPI document", () => {
  let t: TestApp;
  let doc: { paths: Record<string, Record<string, Operation>> };
  const operations: [string, Operation][] = [];

  beforeAll(async () => {
    t = await createTestApp(await sharedPglite(), { env: { WEBHOOK_ALLOW_PRIVATE: "true" } });
    const res = await t.call("GET", "/openapi");
    expect(res.status).toBe(200);
    doc = res.body;
    for (const [path, ops] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(ops)) operations.push([`${method} ${path}`, op]);
  });

  test("every POST, PUT and PATCH shows its JSON body, its required fields and an example", () => {
    const writes = operations.filter(([id]) => /^(post|put|patch) /.test(id));
    expect(writes.length).toBeGreaterThanOrEqual(10);
    for (const [id, op] of writes) {
      if (NO_BODY.has(id)) {
        expect({ id, requestBody: op.requestBody }).toEqual({ id, requestBody: undefined });
        continue;
      }
      const media = op.requestBody?.content["application/json"];
      expect({ id, schema: typeof media?.schema }).toEqual({ id, schema: "object" });
      const properties = Object.keys(media?.schema.properties ?? {});
      expect({ id, properties: properties.length > 0 }).toEqual({ id, properties: true });
      expect(id in REQUIRED).toBe(true);
      expect({ id, required: [...(media?.schema.required ?? [])].sort() }).toEqual({ id, required: [...REQUIRED[id]].sort() });
      expect({ id, example: hasExample(media) }).toEqual({ id, example: true });
    }
  });

  test("the routes listed as body-less really take no body", async () => {
    const { key, agent } = await t.newAgent();
    // A beat needs the heartbeat on.
    expect((await t.call("PUT", `/v1/agents/${agent.id}/heartbeat`, { key, body: { interval_s: 60 } })).status).toBe(200);
    // A webhook endpoint for the webhook routes (on a closed local port: the test message fails, and answers 200).
    const webhook = await t.call("POST", "/v1/webhooks", { key, body: { url: "http://127.0.0.1:9/hook" } });
    expect(webhook.status).toBe(201);
    for (const id of NO_BODY) {
      const [method, path] = id.split(" ");
      const res = await t.call(method.toUpperCase(), path.replace("{id}", path.startsWith("/v1/webhooks") ? webhook.body.id : agent.id), { key });
      expect({ id, status: res.status }).toEqual({ id, status: 200 });
    }
  });

  test("the document is valid OpenAPI 3.1 by the specification's own JSON schema, and every $ref resolves", async () => {
    // A validator built on the OpenAPI Initiative's published schemas, as code generators and
    // gateways read the document (the webhooks and the event schemas included).
    const { Validator } = await import("@seriousme/openapi-schema-validator");
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as Record<string, unknown>);
    expect({ version: validator.version, valid: result.valid, errors: result.errors ?? [] }).toEqual({ version: "3.1", valid: true, errors: [] });
    // It does find a broken reference.
    const broken = structuredClone(doc) as any;
    broken.paths["/v1/agents"].post.responses["201"].content["application/json"].schema = { $ref: "#/components/schemas/Missing" };
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  test("every route documents its answers, each JSON answer with an example", () => {
    for (const [id, op] of operations) {
      if (id === "get /docs/api") continue; // Markdown
      const statuses = Object.keys(op.responses ?? {});
      expect({ id, success: statuses.some((s) => s.startsWith("2")) }).toEqual({ id, success: true });
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (!type.includes("json")) continue;
          expect({ id, status, type, example: hasExample(media) }).toEqual({ id, status, type, example: true });
        }
      }
    }
  });

  test("problem answers carry the problem schema and their type points into docs/api.md", () => {
    let problems = 0;
    for (const [, op] of operations) {
      for (const response of Object.values(op.responses ?? {})) {
        const media = response.content?.["application/problem+json"];
        if (!media) continue;
        expect(media.schema.required).toEqual(expect.arrayContaining(["type", "title", "status", "detail", "code"]));
        for (const { value } of Object.values(media.examples ?? {}) as { value: { type: string; code: string } }[]) {
          expect(value.type).toBe(`/docs/api#${value.code}`);
          problems++;
        }
      }
    }
    expect(problems).toBeGreaterThan(30);
  });

  test("every path parameter has an example", () => {
    const missing = operations.flatMap(([id, op]) =>
      (op.parameters ?? []).filter((p) => p.in === "path" && !(p.schema?.examples?.length > 0)).map((p) => `${id} ${p.name}`),
    );
    expect(missing).toEqual([]);
  });

  test("path and query parameters are listed with their schemas", () => {
    const params = (id: string) => (operations.find(([o]) => o === id)?.[1].parameters ?? []).map((p) => `${p.in}:${p.name}`);
    expect(params("get /v1/agents/{id}")).toEqual(["path:id"]);
    expect(params("get /v1/orders")).toEqual(expect.arrayContaining(["query:limit", "query:cursor", "query:agent_id", "query:status"]));
    expect(params("post /v1/orders/intent")).toEqual(["query:dry_run"]);
    expect(params("get /v1/markets")).toEqual(expect.arrayContaining(["query:category", "query:active", "query:closed"]));
  });

  test("the body examples are valid requests by the schemas the service validates with", () => {
    const bodies = { CreateOrgBody, IssueKeyBody, CreateAgentBody, PatchLimitsBody, CredentialsBody, IntentBody, SubmitSignedBody, KillBody, HeartbeatBody, DecisionBody };
    for (const [name, schema] of Object.entries(bodies)) {
      const examples = (schema as { examples?: unknown[] }).examples ?? [];
      expect({ name, examples: examples.length }).toEqual({ name, examples: examples.length || 1 });
      for (const example of examples) expect({ name, errors: [...Value.Errors(schema, example)].map((e) => e.message) }).toEqual({ name, errors: [] });
    }
  });

  test("an example body is accepted by the service as it is", async () => {
    const { key, agent } = await t.newAgent();
    const body = { ...(IntentBody as { examples: Record<string, unknown>[] }).examples[0], agent_id: agent.id };
    const res = await t.call("POST", "/v1/orders/intent?dry_run=true", { key, body });
    expect(res.status).toBe(200);
    expect(res.body.risk.checks).toHaveLength(8);
    const limits = await t.call("PATCH", `/v1/agents/${agent.id}/limits`, { key, body: (PatchLimitsBody as { examples: unknown[] }).examples[0] });
    expect(limits.status).toBe(200);
    expect(limits.body.limits.max_order_usdc).toBe(50);
  });
});
