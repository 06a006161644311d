/** Validation errors describe what is wrong without ever repeating the submitted value. */
import { beforeAll, expect, test } from "bun:test";
import { sharedPglite } from "../support/databases.ts";
import { createTestApp, type TestApp } from "../support/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(await sharedPglite());
});

test("a secret sent with the wrong type is not echoed in the 400 answer", async () => {
  const { key, agent } = await t.newAgent();
  const secret = 918273645546372819;
  const res = await t.call("POST", `/v1/agents/${agent.id}/creds`, {
    key,
    body: { api_key: "k", api_secret: secret, scopes: ["order:place"] },
  });
  expect(res.status).toBe(400);
  expect(res.body.code).toBe("invalid_request");
  expect(res.body.errors.some((e: { path: string }) => e.path === "/api_secret")).toBe(true);
  expect(res.text).not.toContain(String(secret).slice(0, 12));
});

test("a wrong literal lists the allowed values, not the value sent", async () => {
  const { key, agent } = await t.newAgent();
  const res = await t.call("POST", "/v1/orders/intent", {
    key,
    body: { agent_id: agent.id, market_id: "1", side: "hold-my-secret-xyz", size_usdc: 5, price: 0.5 },
  });
  expect(res.status).toBe(400);
  const err = res.body.errors.find((e: { path: string }) => e.path === "/side");
  expect(err.message).toBe('must be one of: "buy", "sell"');
  expect(res.text).not.toContain("hold-my-secret-xyz");
});
