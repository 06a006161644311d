/**
 * Review 2: inputs that pass the schemas but make PostgreSQL refuse the statement answer 500
 * internal_error (and log the whole failed query with its parameters) instead of 400 invalid_request.
 *  - a NUL character (\u0000) in any free-text string of a body (PostgreSQL text/jsonb cannot hold it);
 *  - a pagination cursor whose date is outside PostgreSQL's timestamp range, or whose id holds a NUL.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { DEM_YES } from "../support/payload.ts";

let t: TestApp;
let key: string;
let agentId: string;

beforeAll(async () => {
  t = await createTestApp(await sharedPglite());
  const a = await t.newAgent();
  key = a.key;
  agentId = a.agent.id;
});

const cursorOf = (at: string, id: string) => Buffer.from(JSON.stringify([at, id])).toString("base64url");

function expect400(res: { status: number; text: string }) {
  // Anything but a server error: the input is the client's fault.
  expect(res.status, res.text).toBe(400);
}

describe("NUL character in a string field", () => {
  test("POST /v1/agents with a NUL in name is 400, not 500", async () => {
    const res = await t.call("POST", "/v1/agents", {
      key,
      raw: '{"wallet_address":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","name":"a\\u0000b"}',
    });
    expect400(res);
  });

  test("POST /v1/api-keys with a NUL in name is 400, not 500", async () => {
    expect400(await t.call("POST", "/v1/api-keys", { key, raw: '{"name":"a\\u0000b"}' }));
  });

  test("POST /v1/orgs with a NUL in name is 400, not 500", async () => {
    expect400(await t.call("POST", "/v1/orgs", { raw: '{"name":"a\\u0000b"}', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }));
  });

  test("PATCH /v1/agents/{id}/limits with a NUL in market_deny is 400, not 500", async () => {
    expect400(await t.call("PATCH", `/v1/agents/${agentId}/limits`, { key, raw: '{"market_deny":["a\\u0000b"]}' }));
  });

  test("POST /v1/orders/intent with a NUL in client_order_id is 400, not 500", async () => {
    const body = JSON.stringify({ agent_id: agentId, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5, client_order_id: "a\u0000b" });
    expect400(await t.call("POST", "/v1/orders/intent", { key, raw: body }));
  });

  test("POST /v1/agents/{id}/kill with a NUL in reason is 400, not 500", async () => {
    const other = await t.newAgent({ key });
    expect400(await t.call("POST", `/v1/agents/${other.agent.id}/kill`, { key, raw: '{"reason":"a\\u0000b"}' }));
  });
});

describe("forged pagination cursors", () => {
  test("GET /v1/agents with a cursor dated year +275760 is 400, not 500", async () => {
    expect400(await t.call("GET", `/v1/agents?cursor=${cursorOf("+275760-09-13T00:00:00.000Z", "agt_x")}`, { key }));
  });

  test("GET /v1/agents with a cursor dated year -271821 is 400, not 500", async () => {
    expect400(await t.call("GET", `/v1/agents?cursor=${cursorOf("-271821-04-20T00:00:00.000Z", "agt_x")}`, { key }));
  });

  test("GET /v1/agents with a cursor whose id holds a NUL is 400, not 500", async () => {
    expect400(await t.call("GET", `/v1/agents?cursor=${cursorOf("2020-01-01T00:00:00.000Z", "x\u0000")}`, { key }));
  });

  test("GET /v1/api-keys with a cursor whose id holds a NUL is 400, not 500", async () => {
    expect400(await t.call("GET", `/v1/api-keys?cursor=${cursorOf("2020-01-01T00:00:00.000Z", "x\u0000")}`, { key }));
  });

  test("GET /v1/orders with a forged cursor is 400, not 500", async () => {
    expect400(await t.call("GET", `/v1/orders?cursor=${cursorOf("+275760-09-13T00:00:00.000Z", "ord_x")}`, { key }));
  });
});
