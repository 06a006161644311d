/** A stored idempotent answer is replayed only to a credential that is still valid. */
import { beforeAll, expect, test } from "bun:test";
import { ADMIN_TOKEN, createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";

describeEachDatabase("idempotency and revoked credentials", (_kind, database) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(await database());
  });

  test("after revocation, the same key and Idempotency-Key get 401, not the stored answer", async () => {
    const { key } = await t.newOrg();
    const issued = await t.call("POST", "/v1/api-keys", { key, body: { name: "short-lived" } });
    expect(issued.status).toBe(201);
    const headers = { "idempotency-key": "agent-once" };
    const body = { wallet_address: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" };
    const first = await t.call("POST", "/v1/agents", { key: issued.body.key, body, headers });
    expect(first.status).toBe(201);
    const again = await t.call("POST", "/v1/agents", { key: issued.body.key, body, headers });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.id).toBe(first.body.id);

    expect((await t.call("DELETE", `/v1/api-keys/${issued.body.id}`, { key })).status).toBe(204);
    const replay = await t.call("POST", "/v1/agents", { key: issued.body.key, body, headers });
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe("unauthenticated");
    expect(replay.text).not.toContain(first.body.id);
  });

  test("org registration is replayed only with the admin token it was made with", async () => {
    const headers = { "idempotency-key": `org-${Date.now()}` };
    const ok = await t.call("POST", "/v1/orgs", { body: { name: "Acme" }, headers: { ...headers, authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(ok.status).toBe(201);
    const wrong = await t.call("POST", "/v1/orgs", { body: { name: "Acme" }, headers: { ...headers, authorization: "Bearer not-the-admin-token" } });
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain(ok.body.api_key.key);
  });
});
