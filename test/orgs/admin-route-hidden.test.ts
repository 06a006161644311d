/**
 * Review 2: without ADMIN_TOKEN, POST /v1/orgs must answer 404 "as if it did not exist" (README,
 * CONTRACT 1). With an Idempotency-Key and an Authorization header, the old outer handler.ts checkCredential
 * (app.ts) answers 401 "a valid admin bearer token is required" first, revealing the admin route.
 */
import { expect, test } from "bun:test";
import { createTestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";

test("POST /v1/orgs without ADMIN_TOKEN answers 404 even with Idempotency-Key and a bearer token", async () => {
  const t = await createTestApp(await sharedPglite(), { config: { adminToken: null } });
  const plain = await t.call("POST", "/v1/orgs", { body: { name: "x" }, headers: { authorization: "Bearer guess-guess-guess-guess" } });
  expect(plain.status).toBe(404);
  const idem = await t.call("POST", "/v1/orgs", {
    body: { name: "x" },
    headers: { authorization: "Bearer guess-guess-guess-guess", "idempotency-key": "review2-admin-1" },
  });
  expect(idem.status).toBe(404);
});
