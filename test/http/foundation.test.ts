/**
 * The foundation's HTTP surface (CONTRACT sections 2, 3, 4 and 15), through
 * the real app on PGlite and, when TEST_DATABASE_URL is set, on PostgreSQL.
 * Every suite isolates itself by creating its own organizations.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Database } from "../../src/db/database.ts";
import { ADMIN_TOKEN, createTestApp, type TestApp, type TestResponse, TEST_DEFAULT_LIMITS } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";

const WALLET = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const SIGNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
/** Well-formed ids that do not exist. */
const MISSING_AGENT = "agt_zzzzzzzzzzzzzzzzzzzz";
const MISSING_KEY = "key_zzzzzzzzzzzzzzzzzzzz";

/** Every secret this file has seen, to check that none reaches a log line. */
const secrets = new Set<string>();

/** Asserts an RFC 9457 problem with the given status and code, and that it leaks nothing internal. */
function expectProblem(res: TestResponse, status: number, code: string): any {
  if (res.status !== status) throw new Error(`expected ${status} ${code}, got ${res.status}: ${res.text}`);
  expect(res.headers.get("content-type")).toStartWith("application/problem+json");
  const p = res.body;
  expect(typeof p).toBe("object");
  expect(p.status).toBe(status);
  expect(p.code).toBe(code);
  expect(typeof p.type).toBe("string");
  expect(p.type.length).toBeGreaterThan(0);
  expect(typeof p.title).toBe("string");
  expect(p.title.length).toBeGreaterThan(0);
  expect(typeof p.detail).toBe("string");
  expectNothingInternal(res.text);
  return p;
}

/** No stack trace, source path or secret in a response body. */
function expectNothingInternal(text: string): void {
  expect(text).not.toMatch(/\bat .+\(.*:\d+:\d+\)/);
  expect(text).not.toMatch(/\n\s+at /);
  expect(text).not.toMatch(/\.tsx?:\d+/);
  expect(text).not.toMatch(/node_modules|\/work\/|\/src\//);
  expect(text.toLowerCase()).not.toContain("stack");
  expect(text).not.toContain(ADMIN_TOKEN);
  for (const s of secrets) expect(text).not.toContain(s);
}

function expectFieldErrors(p: any): { path: string; message: string }[] {
  expect(Array.isArray(p.errors)).toBe(true);
  expect(p.errors.length).toBeGreaterThan(0);
  for (const e of p.errors) {
    expect(Object.keys(e).sort()).toEqual(["message", "path"]);
    expect(typeof e.path).toBe("string");
    expect(e.path).toStartWith("/");
    expect(typeof e.message).toBe("string");
    expect(e.message.length).toBeGreaterThan(0);
  }
  return p.errors;
}

const paths = (p: any) => expectFieldErrors(p).map((e) => e.path);

describeEachDatabase("foundation HTTP", (kind, database) => {
  let db: Database;
  let t: TestApp;
  /** The same database without ADMIN_TOKEN. */
  let noAdmin: TestApp;
  /** The same database with MAX_BODY_BYTES = 1024. */
  let small: TestApp;

  const org = async (name = "org") => {
    const o = await t.newOrg(name);
    secrets.add(o.key);
    return o;
  };
  const agent = async (key: string, body: Record<string, unknown> = {}) => {
    const res = await t.call("POST", "/v1/agents", { key, body: { wallet_address: WALLET, ...body } });
    if (res.status !== 201) throw new Error(`agent creation failed: ${res.status} ${res.text}`);
    return res.body;
  };
  const issue = async (key: string, body: Record<string, unknown> = {}) => {
    const res = await t.call("POST", "/v1/api-keys", { key, body });
    if (res.status !== 201) throw new Error(`key issue failed: ${res.status} ${res.text}`);
    secrets.add(res.body.key);
    return res.body;
  };
  const listAll = async (key: string, path: string, limit: number) => {
    const items: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await t.call("GET", `${path}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { key });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      items.push(...res.body.data);
      cursor = res.body.next_cursor;
      if (++pages > 50) throw new Error("pagination does not end");
    } while (cursor);
    return { items, pages };
  };

  beforeAll(async () => {
    db = await database();
    t = await createTestApp(db);
    noAdmin = await createTestApp(db, { config: { adminToken: null } });
    small = await createTestApp(db, { config: { maxBodyBytes: 1024 } });
  });
  afterAll(async () => {
    await Promise.all([t, noAdmin, small].map((a) => a?.app.stop()));
  });

  describe("organizations", () => {
    test("POST /v1/orgs with the admin token answers 201 with the org and its first key", async () => {
      const res = await t.call("POST", "/v1/orgs", { body: { name: "Acme research" }, headers: ADMIN });
      expect(res.status).toBe(201);
      expect(res.headers.get("content-type")).toStartWith("application/json");
      expect(Object.keys(res.body).sort()).toEqual(["api_key", "org"]);
      const { org: o, api_key } = res.body;
      secrets.add(api_key.key);
      expect(Object.keys(o).sort()).toEqual(["created_at", "id", "name"]);
      expect(o.id).toMatch(/^org_[0-9a-z]{20}$/);
      expect(o.name).toBe("Acme research");
      expect(o.created_at).toMatch(ISO);
      expect(Math.abs(Date.parse(o.created_at) - Date.now())).toBeLessThan(60_000);
      expect(Object.keys(api_key).sort()).toEqual(["created_at", "id", "key"]);
      expect(api_key.id).toMatch(/^key_[0-9a-z]{20}$/);
      expect(api_key.key).toMatch(/^bk_[A-Za-z0-9_-]{43}$/);
      expect(api_key.created_at).toMatch(ISO);
      // The key works and belongs to the new organization.
      const a = await agent(api_key.key);
      expect(a.org_id).toBe(o.id);
      const keys = await t.call("GET", "/v1/api-keys", { key: api_key.key });
      expect(keys.status).toBe(200);
      expect(keys.body.data.map((k: any) => k.id)).toEqual([api_key.id]);
    });

    test("two organizations get different ids and keys", async () => {
      const a = await org("a");
      const b = await org("b");
      expect(a.orgId).not.toBe(b.orgId);
      expect(a.key).not.toBe(b.key);
    });

    test("a wrong, missing or non-bearer admin token answers 401", async () => {
      for (const headers of [{ authorization: "Bearer wrong-token" }, {} as Record<string, string>, { authorization: ADMIN_TOKEN }, { authorization: `Basic ${ADMIN_TOKEN}` }, { authorization: `Bearer ${ADMIN_TOKEN}x` }]) {
        const res = await t.call("POST", "/v1/orgs", { body: { name: "x" }, headers });
        expectProblem(res, 401, "unauthenticated");
      }
      // Authentication comes before validation: a bad body does not reveal the schema.
      expectProblem(await t.call("POST", "/v1/orgs", { body: { nope: 1 }, headers: { authorization: "Bearer wrong" } }), 401, "unauthenticated");
      // An API key is not an admin token.
      const { key } = await org();
      expectProblem(await t.call("POST", "/v1/orgs", { key, body: { name: "x" } }), 401, "unauthenticated");
    });

    test("the organization body is validated", async () => {
      for (const body of [{}, { name: "" }, { name: 5 }, { name: "x", extra: true }, { name: "x".repeat(201) }]) {
        const p = expectProblem(await t.call("POST", "/v1/orgs", { body, headers: ADMIN }), 400, "invalid_request");
        expectFieldErrors(p);
      }
      expect(paths(expectProblem(await t.call("POST", "/v1/orgs", { body: { name: "x", extra: true }, headers: ADMIN }), 400, "invalid_request"))).toContain("/extra");
    });

    test("without ADMIN_TOKEN the route answers 404, whatever the request", async () => {
      for (const opts of [
        { body: { name: "x" }, headers: ADMIN },
        { body: { name: "x" } },
        { body: { nope: 1 }, headers: ADMIN },
        { raw: "{not json", headers: ADMIN },
      ]) {
        expectProblem(await noAdmin.call("POST", "/v1/orgs", opts), 404, "not_found");
      }
    });
  });

  describe("API keys", () => {
    test("issue answers 201 with the secret once; the new key acts for the same organization", async () => {
      const { key, orgId } = await org();
      const a = await agent(key);
      const res = await t.call("POST", "/v1/api-keys", { key, body: { name: "ci" } });
      expect(res.status).toBe(201);
      secrets.add(res.body.key);
      expect(Object.keys(res.body).sort()).toEqual(["agent_id", "created_at", "id", "key", "name"]);
      expect(res.body.id).toMatch(/^key_[0-9a-z]{20}$/);
      expect(res.body.key).toMatch(/^bk_[A-Za-z0-9_-]{43}$/);
      expect(res.body.name).toBe("ci");
      expect(res.body.agent_id).toBeNull();
      expect(res.body.created_at).toMatch(ISO);
      const viaNew = await t.call("GET", `/v1/agents/${a.id}`, { key: res.body.key });
      expect(viaNew.status).toBe(200);
      expect(viaNew.body.org_id).toBe(orgId);
      // A key without a name.
      const unnamed = await issue(key);
      expect(unnamed.name).toBeNull();
      expect(unnamed.key).not.toBe(res.body.key);
    });

    test("list shows keys without secrets, with a 4-character hint", async () => {
      const { key } = await org();
      const issued = await issue(key, { name: "one" });
      const res = await t.call("GET", "/v1/api-keys", { key });
      expect(res.status).toBe(200);
      expect(res.body.next_cursor).toBeNull();
      expect(res.body.data.length).toBe(2);
      for (const k of res.body.data) {
        expect(Object.keys(k).sort()).toEqual(["agent_id", "created_at", "hint", "id", "last_used_at", "name"]);
        expect(k.hint).toHaveLength(4);
      }
      const row = res.body.data.find((k: any) => k.id === issued.id);
      expect(row).toBeDefined();
      expect(row.hint).toBe(issued.key.slice(-4));
      expect(row.name).toBe("one");
      const initial = res.body.data.find((k: any) => k.id !== issued.id);
      expect(initial.hint).toBe(key.slice(-4));
      expect(res.text).not.toContain(issued.key);
      expect(res.text).not.toContain(key);
      expect(res.text).not.toContain(key.slice(3, 20));
      // Newest first.
      expect(res.body.data[0].id).toBe(issued.id);
    });

    test("list paginates with limit and cursor", async () => {
      const { key } = await org();
      const ids = [(await t.call("GET", "/v1/api-keys", { key })).body.data[0].id];
      for (let i = 0; i < 6; i++) ids.push((await issue(key, { name: `k${i}` })).id);
      const first = await t.call("GET", "/v1/api-keys?limit=3", { key });
      expect(first.status).toBe(200);
      expect(first.body.data.length).toBe(3);
      expect(typeof first.body.next_cursor).toBe("string");
      const { items, pages } = await listAll(key, "/v1/api-keys", 3);
      expect(pages).toBe(3);
      expect(items.length).toBe(7);
      expect(new Set(items.map((k) => k.id)).size).toBe(7);
      expect([...items.map((k) => k.id)].sort()).toEqual([...ids].sort());
      const times = items.map((k) => Date.parse(k.created_at));
      for (let i = 1; i < times.length; i++) expect(times[i]).toBeLessThanOrEqual(times[i - 1]);
      // A limit that covers everything has no next page.
      const all = await t.call("GET", "/v1/api-keys?limit=7", { key });
      expect(all.body.data.length).toBe(7);
      expect(all.body.next_cursor).toBeNull();
      const byOne = await listAll(key, "/v1/api-keys", 1);
      expect(byOne.items.map((k) => k.id)).toEqual(items.map((k) => k.id));
    });

    test("bad pagination parameters answer 400", async () => {
      const { key } = await org();
      for (const [q, path] of [
        ["cursor=not-a-cursor", "/query/cursor"],
        [`cursor=${Buffer.from("[1,2]").toString("base64url")}`, "/query/cursor"],
        ["limit=0", "/query/limit"],
        ["limit=201", "/query/limit"],
        ["limit=abc", "/query/limit"],
        ["bogus=1", "/query/bogus"],
      ] as const) {
        for (const route of ["/v1/api-keys", "/v1/agents"]) {
          const p = expectProblem(await t.call("GET", `${route}?${q}`, { key }), 400, "invalid_request");
          expect(paths(p)).toContain(path);
        }
      }
    });

    test("revoke answers 204; the revoked key gets 401; revoking twice answers 404", async () => {
      const { key } = await org();
      const other = await issue(key, { name: "to revoke" });
      expect((await t.call("GET", "/v1/agents", { key: other.key })).status).toBe(200); // warm any cache
      const res = await t.call("DELETE", `/v1/api-keys/${other.id}`, { key });
      expect(res.status).toBe(204);
      expect(res.text).toBe("");
      const p = expectProblem(await t.call("GET", "/v1/agents", { key: other.key }), 401, "unauthenticated");
      expect(p.detail).not.toContain(other.key);
      const listed = await t.call("GET", "/v1/api-keys", { key });
      expect(listed.body.data.map((k: any) => k.id)).not.toContain(other.id);
      expectProblem(await t.call("DELETE", `/v1/api-keys/${other.id}`, { key }), 404, "not_found");
      expectProblem(await t.call("DELETE", `/v1/api-keys/${MISSING_KEY}`, { key }), 404, "not_found");
      // The revoked key is also refused by a fresh app (no cache involved).
      const fresh = await createTestApp(db);
      try {
        expectProblem(await fresh.call("GET", "/v1/agents", { key: other.key }), 401, "unauthenticated");
        expect((await fresh.call("GET", "/v1/agents", { key })).status).toBe(200);
      } finally {
        await fresh.app.stop();
      }
    });

    test("a key can revoke itself, and is refused afterwards", async () => {
      const { key } = await org();
      const self = (await t.call("GET", "/v1/api-keys", { key })).body.data[0];
      expect((await t.call("DELETE", `/v1/api-keys/${self.id}`, { key })).status).toBe(204);
      expectProblem(await t.call("GET", "/v1/api-keys", { key }), 401, "unauthenticated");
    });

    test("issue validates its body and the agent it is scoped to", async () => {
      const { key } = await org();
      const other = await org();
      const foreign = await agent(other.key);
      expectProblem(await t.call("POST", "/v1/api-keys", { key, body: { agent_id: foreign.id } }), 404, "not_found");
      expectProblem(await t.call("POST", "/v1/api-keys", { key, body: { agent_id: MISSING_AGENT } }), 404, "not_found");
      expect(paths(expectProblem(await t.call("POST", "/v1/api-keys", { key, body: { agent_id: "nope" } }), 400, "invalid_request"))).toContain("/agent_id");
      expect(paths(expectProblem(await t.call("POST", "/v1/api-keys", { key, body: { scope: "all" } }), 400, "invalid_request"))).toContain("/scope");
      expect(paths(expectProblem(await t.call("POST", "/v1/api-keys", { key, body: { name: 7 } }), 400, "invalid_request"))).toContain("/name");
      // Nothing was issued by the refused requests.
      expect((await t.call("GET", "/v1/api-keys", { key })).body.data.length).toBe(1);
    });

    test("another organization's key id answers 404 and stays valid", async () => {
      const a = await org();
      const b = await org();
      const bKey = await issue(b.key);
      expectProblem(await t.call("DELETE", `/v1/api-keys/${bKey.id}`, { key: a.key }), 404, "not_found");
      expect((await t.call("GET", "/v1/agents", { key: bKey.key })).status).toBe(200);
      const aList = await t.call("GET", "/v1/api-keys", { key: a.key });
      expect(aList.body.data.map((k: any) => k.id)).not.toContain(bKey.id);
    });
  });

  describe("agent-scoped keys", () => {
    test("act on their agent only", async () => {
      const { key } = await org();
      const mine = await agent(key, { name: "mine" });
      const sibling = await agent(key, { name: "sibling" });
      const scoped = await issue(key, { agent_id: mine.id, name: "bot" });
      expect(scoped.agent_id).toBe(mine.id);
      const sk = scoped.key;

      const got = await t.call("GET", `/v1/agents/${mine.id}`, { key: sk });
      expect(got.status).toBe(200);
      expect(got.body.id).toBe(mine.id);
      const patched = await t.call("PATCH", `/v1/agents/${mine.id}/limits`, { key: sk, body: { max_order_usdc: 40 } });
      expect(patched.status).toBe(200);
      expect(patched.body.limits.max_order_usdc).toBe(40);
      expect((await t.call("POST", `/v1/agents/${mine.id}/breaker`, { key: sk })).body.breaker.state).toBe("tripped");
      expect((await t.call("POST", `/v1/agents/${mine.id}/resume`, { key: sk })).body.breaker.state).toBe("closed");

      expectProblem(await t.call("GET", `/v1/agents/${sibling.id}`, { key: sk }), 403, "forbidden");
      expectProblem(await t.call("PATCH", `/v1/agents/${sibling.id}/limits`, { key: sk, body: { max_order_usdc: 1 } }), 403, "forbidden");
      expectProblem(await t.call("POST", `/v1/agents/${sibling.id}/breaker`, { key: sk }), 403, "forbidden");
      expectProblem(await t.call("POST", `/v1/agents/${sibling.id}/resume`, { key: sk }), 403, "forbidden");
      // The sibling is untouched.
      const sib = await t.call("GET", `/v1/agents/${sibling.id}`, { key });
      expect(sib.body.breaker.state).toBe("closed");
      expect(sib.body.limits.max_order_usdc).toBe(TEST_DEFAULT_LIMITS.max_order_usdc);

      const listed = await t.call("GET", "/v1/agents", { key: sk });
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((a: any) => a.id)).toEqual([mine.id]);
      const orgList = await t.call("GET", "/v1/agents", { key });
      expect(orgList.body.data.map((a: any) => a.id).sort()).toEqual([mine.id, sibling.id].sort());

      expectProblem(await t.call("POST", "/v1/api-keys", { key: sk, body: {} }), 403, "forbidden");
      expectProblem(await t.call("POST", "/v1/api-keys", { key: sk, body: { agent_id: mine.id } }), 403, "forbidden");
      expectProblem(await t.call("GET", "/v1/api-keys", { key: sk }), 403, "forbidden");
      const orgKeyId = (await t.call("GET", "/v1/api-keys", { key })).body.data.find((k: any) => k.id !== scoped.id).id;
      expectProblem(await t.call("DELETE", `/v1/api-keys/${orgKeyId}`, { key: sk }), 403, "forbidden");
      expectProblem(await t.call("POST", "/v1/agents", { key: sk, body: { wallet_address: WALLET } }), 403, "forbidden");
      expect((await t.call("GET", "/v1/agents", { key })).body.data.length).toBe(2);
      expect((await t.call("GET", "/v1/api-keys", { key })).body.data.length).toBe(2);

      // Another organization's agent is simply not found.
      const foreign = await agent((await org()).key);
      expectProblem(await t.call("GET", `/v1/agents/${foreign.id}`, { key: sk }), 404, "not_found");
      expectProblem(await t.call("GET", `/v1/agents/${MISSING_AGENT}`, { key: sk }), 404, "not_found");
    });
  });

  describe("organization isolation", () => {
    test("another organization's agent answers 404 on every route and is left unchanged", async () => {
      const owner = await org("owner");
      const intruder = await org("intruder");
      const a = await agent(owner.key);
      for (const [method, path, body] of [
        ["GET", `/v1/agents/${a.id}`, undefined],
        ["PATCH", `/v1/agents/${a.id}/limits`, { max_order_usdc: 1 }],
        ["POST", `/v1/agents/${a.id}/breaker`, undefined],
        ["POST", `/v1/agents/${a.id}/resume`, undefined],
      ] as const) {
        const p = expectProblem(await t.call(method, path, { key: intruder.key, body }), 404, "not_found");
        // Indistinguishable from an id that does not exist.
        const missing = expectProblem(await t.call(method, path.replace(a.id, MISSING_AGENT), { key: intruder.key, body }), 404, "not_found");
        expect(p.title).toBe(missing.title);
        expect(p.type).toBe(missing.type);
      }
      const after = await t.call("GET", `/v1/agents/${a.id}`, { key: owner.key });
      expect(after.body.breaker.state).toBe("closed");
      expect(after.body.limits.max_order_usdc).toBe(TEST_DEFAULT_LIMITS.max_order_usdc);
      const list = await t.call("GET", "/v1/agents", { key: intruder.key });
      expect(list.body.data).toEqual([]);
      expect(list.body.next_cursor).toBeNull();
    });
  });

  describe("agents", () => {
    test("create applies the defaults", async () => {
      const { key, orgId } = await org();
      const before = Date.now();
      const res = await t.call("POST", "/v1/agents", { key, body: { wallet_address: WALLET } });
      expect(res.status).toBe(201);
      const a = res.body;
      expect(Object.keys(a).sort()).toEqual(
        ["breaker", "created_at", "credentials", "daily_volume", "heartbeat", "id", "limits", "mode", "name", "open_orders", "org_id", "owner_address", "signature_type", "signer_address", "wallet_address"].sort(),
      );
      expect(a.id).toMatch(/^agt_[0-9a-z]{20}$/);
      expect(a.org_id).toBe(orgId);
      expect(a.name).toBeNull();
      expect(a.mode).toBe("payload");
      expect(a.wallet_address.toLowerCase()).toBe(WALLET.toLowerCase());
      expect(a.signer_address.toLowerCase()).toBe(WALLET.toLowerCase());
      expect(a.signature_type).toBe(0);
      expect(a.owner_address).toBeNull();
      // The test app's defaults: DEFAULT_LIMITS with the runaway guards opened (test/support/app.ts).
      expect(a.limits).toEqual({ ...TEST_DEFAULT_LIMITS });
      expect(a.heartbeat).toBeNull();
      expect(a.breaker).toEqual({ state: "closed", reason: null, since: null });
      expect(a.daily_volume.used_usdc).toBe(0);
      expect(a.daily_volume.limit_usdc).toBe(1000);
      const resets = Date.parse(a.daily_volume.resets_at);
      expect(a.daily_volume.resets_at).toMatch(ISO);
      expect(resets % 86_400_000).toBe(0); // a UTC midnight
      expect(resets).toBeGreaterThan(before);
      expect(resets - Date.now()).toBeLessThanOrEqual(86_400_000);
      expect(a.open_orders).toBe(0);
      expect(a.credentials).toBeNull();
      expect(a.created_at).toMatch(ISO);
      // GET answers the same agent.
      const got = await t.call("GET", `/v1/agents/${a.id}`, { key });
      expect(got.status).toBe(200);
      // The same agent; GET also names the instance that owns it now (agent leases, issue 23).
      expect(got.body.owner_instance).toBe(t.app.services.config.instanceId);
      expect({ ...got.body, owner_instance: undefined }).toEqual(a);
    });

    test("create takes a name, signer, signature type and limit overrides", async () => {
      const { key } = await org();
      for (const signature_type of [1, 2, 3]) {
        const res = await t.call("POST", "/v1/agents", {
          key,
          body: {
            name: `bot ${signature_type}`,
            wallet_address: WALLET,
            // Type 3 (deposit wallet): the wallet signs, its owner EOA is declared (CONTRACT section 4).
            ...(signature_type === 3 ? { owner_address: SIGNER } : { signer_address: SIGNER }),
            signature_type,
            limits: { daily_volume_usdc: 250.5, max_order_usdc: 20, market_deny: ["123"], category_allow: ["sports"] },
          },
        });
        expect(res.status).toBe(201);
        const a = res.body;
        expect(a.name).toBe(`bot ${signature_type}`);
        expect(a.wallet_address.toLowerCase()).toBe(WALLET.toLowerCase());
        expect(a.signer_address.toLowerCase()).toBe((signature_type === 3 ? WALLET : SIGNER).toLowerCase());
        expect(a.owner_address).toBe(signature_type === 3 ? SIGNER.toLowerCase() : null);
        expect(a.signature_type).toBe(signature_type);
        expect(a.limits).toEqual({ ...TEST_DEFAULT_LIMITS, daily_volume_usdc: 250.5, max_order_usdc: 20, market_deny: ["123"], category_allow: ["sports"] });
        expect(a.daily_volume.limit_usdc).toBe(250.5);
        const got = await t.call("GET", `/v1/agents/${a.id}`, { key });
        expect({ ...got.body, owner_instance: undefined }).toEqual(a);
      }
    });

    test("create validates its body", async () => {
      const { key } = await org();
      const cases: [Record<string, unknown>, string][] = [
        [{}, "/wallet_address"],
        [{ wallet_address: "0x123" }, "/wallet_address"],
        [{ wallet_address: 42 }, "/wallet_address"],
        [{ wallet_address: WALLET, signer_address: "nope" }, "/signer_address"],
        [{ wallet_address: WALLET, signature_type: 4 }, "/signature_type"],
        [{ wallet_address: WALLET, signature_type: "0" }, "/signature_type"],
        [{ wallet_address: WALLET, mode: "delegated" }, "/mode"],
        [{ wallet_address: WALLET, limits: { max_slippage: 2 } }, "/limits/max_slippage"],
        [{ wallet_address: WALLET, limits: { nope: 1 } }, "/limits/nope"],
        [{ wallet_address: WALLET, limits: { min_order_usdc: 50, max_order_usdc: 10 } }, "/limits/min_order_usdc"],
      ];
      for (const [body, path] of cases) {
        const p = expectProblem(await t.call("POST", "/v1/agents", { key, body }), 400, "invalid_request");
        expect(paths(p)).toContain(path);
      }
      expect((await t.call("GET", "/v1/agents", { key })).body.data).toEqual([]);
    });

    test("list answers the organization's agents, newest first, paginated", async () => {
      const { key } = await org();
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await agent(key, { name: `a${i}` })).id);
      const res = await t.call("GET", "/v1/agents", { key });
      expect(res.status).toBe(200);
      expect(res.body.next_cursor).toBeNull();
      expect(res.body.data.map((a: any) => a.id)).toEqual([...made].reverse());
      expect(res.body.data[0].limits).toEqual({ ...TEST_DEFAULT_LIMITS });
      const { items, pages } = await listAll(key, "/v1/agents", 2);
      expect(pages).toBe(3);
      expect(items.map((a) => a.id)).toEqual([...made].reverse());
    });

    test("GET of an unknown id answers 404; a malformed id answers 400", async () => {
      const { key } = await org();
      expectProblem(await t.call("GET", `/v1/agents/${MISSING_AGENT}`, { key }), 404, "not_found");
      expect(paths(expectProblem(await t.call("GET", "/v1/agents/not-an-id", { key }), 400, "invalid_request"))).toContain("/params/id");
    });

    test("PATCH limits changes only the given limits, and the change persists", async () => {
      const { key } = await org();
      const a = await agent(key);
      const res = await t.call("PATCH", `/v1/agents/${a.id}/limits`, {
        key,
        body: { max_order_usdc: 55.25, kelly_fraction: 0.5, category_deny: ["crypto", "weather"], breaker_cooldown_s: 120 },
      });
      expect(res.status).toBe(200);
      const expected = { ...TEST_DEFAULT_LIMITS, max_order_usdc: 55.25, kelly_fraction: 0.5, category_deny: ["crypto", "weather"], breaker_cooldown_s: 120 };
      expect(res.body.limits).toEqual(expected);
      expect(res.body.id).toBe(a.id);
      // Arrays are replaced, not appended to.
      const again = await t.call("PATCH", `/v1/agents/${a.id}/limits`, { key, body: { category_deny: ["sports"] } });
      expect(again.body.limits.category_deny).toEqual(["sports"]);
      expect(again.body.limits.max_order_usdc).toBe(55.25);
      // An empty patch changes nothing.
      const empty = await t.call("PATCH", `/v1/agents/${a.id}/limits`, { key, body: {} });
      expect(empty.status).toBe(200);
      expect(empty.body.limits).toEqual({ ...expected, category_deny: ["sports"] });
      // Persisted: a second app on the same database loads the agent from the database.
      const fresh = await createTestApp(db);
      try {
        const got = await fresh.call("GET", `/v1/agents/${a.id}`, { key });
        expect(got.status).toBe(200);
        expect(got.body.limits).toEqual({ ...expected, category_deny: ["sports"] });
      } finally {
        await fresh.app.stop();
      }
    });

    test("PATCH limits rejects invalid values with every error, and keeps the old limits", async () => {
      const { key } = await org();
      const a = await agent(key);
      const bad = await t.call("PATCH", `/v1/agents/${a.id}/limits`, { key, body: { max_slippage: 2, daily_volume_usdc: -1, max_venue_errors: 0 } });
      const p = expectProblem(bad, 400, "invalid_request");
      expect(paths(p)).toEqual(expect.arrayContaining(["/max_slippage", "/daily_volume_usdc", "/max_venue_errors"]));
      const cases: [Record<string, unknown>, string][] = [
        [{ min_order_usdc: 50, max_order_usdc: 10 }, "/limits/min_order_usdc"],
        [{ min_order_usdc: 150 }, "/limits/min_order_usdc"], // above the current max of 100
        [{ max_order_usdc: 0.5 }, "/limits/min_order_usdc"], // below the current min of 1
        [{ max_order_usdc: 1.0000001 }, "/limits/max_order_usdc"], // more than 6 decimals
        [{ unknown_limit: 1 }, "/unknown_limit"],
        [{ max_order_usdc: "50" }, "/max_order_usdc"],
        [{ market_deny: "123" }, "/market_deny"],
        [{ book_max_age_s: 1.5 }, "/book_max_age_s"],
        [{ kelly_fraction: null }, "/kelly_fraction"],
      ];
      for (const [body, path] of cases) {
        const res = await t.call("PATCH", `/v1/agents/${a.id}/limits`, { key, body });
        expect(paths(expectProblem(res, 400, "invalid_request"))).toContain(path);
      }
      expectProblem(await t.call("PATCH", `/v1/agents/${a.id}/limits`, { key, raw: "[1,2" }), 400, "invalid_request");
      const after = await t.call("GET", `/v1/agents/${a.id}`, { key });
      expect(after.body.limits).toEqual({ ...TEST_DEFAULT_LIMITS });
      expectProblem(await t.call("PATCH", `/v1/agents/${MISSING_AGENT}/limits`, { key, body: { max_order_usdc: 5 } }), 404, "not_found");
    });

    test("breaker trip sets state tripped with reason manual; resume closes it", async () => {
      const { key } = await org();
      const a = await agent(key);
      const before = Date.now();
      const tripped = await t.call("POST", `/v1/agents/${a.id}/breaker`, { key });
      expect(tripped.status).toBe(200);
      expect(tripped.body.id).toBe(a.id);
      expect(tripped.body.breaker.state).toBe("tripped");
      expect(tripped.body.breaker.reason).toBe("manual");
      expect(tripped.body.breaker.since).toMatch(ISO);
      expect(Date.parse(tripped.body.breaker.since)).toBeGreaterThanOrEqual(before - 1000);
      expect((await t.call("GET", `/v1/agents/${a.id}`, { key })).body.breaker).toEqual(tripped.body.breaker);
      // Tripping again keeps it tripped.
      expect((await t.call("POST", `/v1/agents/${a.id}/breaker`, { key })).body.breaker.state).toBe("tripped");

      const resumed = await t.call("POST", `/v1/agents/${a.id}/resume`, { key });
      expect(resumed.status).toBe(200);
      expect(resumed.body.breaker.state).toBe("closed");
      expect(resumed.body.breaker.reason).toBeNull();
      expect((await t.call("GET", `/v1/agents/${a.id}`, { key })).body.breaker.state).toBe("closed");
      // Resuming a closed breaker is harmless.
      const twice = await t.call("POST", `/v1/agents/${a.id}/resume`, { key });
      expect(twice.status).toBe(200);
      expect(twice.body.breaker.state).toBe("closed");

      expectProblem(await t.call("POST", `/v1/agents/${MISSING_AGENT}/breaker`, { key }), 404, "not_found");
      expectProblem(await t.call("POST", `/v1/agents/${MISSING_AGENT}/resume`, { key }), 404, "not_found");
    });
  });

  describe("errors and validation", () => {
    test("malformed JSON answers 400 invalid_request", async () => {
      const { key } = await org();
      for (const raw of ["{", "{\"wallet_address\": }", "not json", "{'a': 1}"]) {
        const p = expectProblem(await t.call("POST", "/v1/agents", { key, raw }), 400, "invalid_request");
        expectFieldErrors(p);
      }
      expect((await t.call("GET", "/v1/agents", { key })).body.data).toEqual([]);
    });

    test("unknown routes answer 404 problem details", async () => {
      const { key } = await org();
      for (const [method, path] of [
        ["GET", "/v1/nothing"],
        ["GET", "/nothing"],
        ["POST", "/v1/agents/x/y/z"],
        ["GET", "/v2/agents"],
        ["DELETE", "/v1/agents"],
      ]) {
        expectProblem(await t.call(method, path, { key }), 404, "not_found");
        expectProblem(await t.call(method, path), 404, "not_found");
      }
    });

    test("unknown body fields and wrong types answer 400 with errors [{path, message}]", async () => {
      const { key } = await org();
      const unknown = expectProblem(await t.call("POST", "/v1/agents", { key, body: { wallet_address: WALLET, colour: "blue", size: 3 } }), 400, "invalid_request");
      expect(paths(unknown)).toEqual(expect.arrayContaining(["/colour", "/size"]));
      const wrong = expectProblem(await t.call("POST", "/v1/agents", { key, body: { wallet_address: WALLET, name: 12, signature_type: true } }), 400, "invalid_request");
      expect(paths(wrong)).toEqual(expect.arrayContaining(["/name", "/signature_type"]));
      expect(wrong.detail.length).toBeGreaterThan(0);
      for (const body of [[], "a string", 5, null]) {
        expectProblem(await t.call("POST", "/v1/agents", { key, body }), 400, "invalid_request");
      }
    });

    test("a body over MAX_BODY_BYTES answers 413", async () => {
      const { key } = await org();
      secrets.add(key);
      const big = JSON.stringify({ wallet_address: WALLET, name: "x".repeat(2000) });
      expect(Buffer.byteLength(big)).toBeGreaterThan(1024);
      const declared = await small.call("POST", "/v1/agents", { key, raw: big, headers: { "content-length": String(Buffer.byteLength(big)) } });
      const p = expectProblem(declared, 413, "payload_too_large");
      expect(p.detail).toContain("1024");
      // With an Idempotency-Key too (the body is read before the replay check).
      expectProblem(await small.call("POST", "/v1/agents", { key, raw: big, headers: { "idempotency-key": "big-1" } }), 413, "payload_too_large");
      // Without a declared length: the body is measured as it is read.
      const stream = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(big));
          c.close();
        },
      });
      const res = await small.app.handle(
        new Request("http://localhost/v1/agents", { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: stream }),
      );
      expect(res.status).toBe(413);
      expect(res.headers.get("content-type")).toStartWith("application/problem+json");
      // Small bodies still go through, and nothing was created by the refused ones.
      const ok = await small.call("POST", "/v1/agents", { key, body: { wallet_address: WALLET } });
      expect(ok.status).toBe(201);
      expect((await t.call("GET", "/v1/agents", { key })).body.data.length).toBe(1);
      // The same large body is fine on the app with the default limit (and fails only on the name length).
      expect(paths(expectProblem(await t.call("POST", "/v1/agents", { key, raw: big }), 400, "invalid_request"))).toContain("/name");
    });

    test("401 without a key, with an unknown key, and with a malformed key", async () => {
      for (const key of [undefined, "bk_unknownkeyunknownkeyunknownkeyunknownkey12", "not-a-key", "bk_" + "a".repeat(300)]) {
        for (const [method, path, body] of [
          ["GET", "/v1/agents", undefined],
          ["GET", `/v1/agents/${MISSING_AGENT}`, undefined],
          ["POST", "/v1/agents", { wallet_address: WALLET }],
          ["PATCH", `/v1/agents/${MISSING_AGENT}/limits`, { max_order_usdc: 1 }],
          ["POST", `/v1/agents/${MISSING_AGENT}/breaker`, undefined],
          ["POST", `/v1/agents/${MISSING_AGENT}/resume`, undefined],
          ["GET", "/v1/api-keys", undefined],
          ["POST", "/v1/api-keys", {}],
          ["DELETE", `/v1/api-keys/${MISSING_KEY}`, undefined],
        ] as const) {
          const p = expectProblem(await t.call(method, path, { key, body }), 401, "unauthenticated");
          if (key) expect(p.detail).not.toContain(key);
        }
      }
      // Authentication comes before validation: unauthenticated callers learn nothing about the schema.
      expectProblem(await t.call("POST", "/v1/agents", { body: { nope: 1 } }), 401, "unauthenticated");
      expectProblem(await t.call("POST", "/v1/agents", { raw: "{" }), 401, "unauthenticated");
      expectProblem(await t.call("GET", "/v1/agents?limit=0"), 401, "unauthenticated");
      expectProblem(await t.call("GET", "/v1/agents/not-an-id"), 401, "unauthenticated");
    });

    test("an unexpected failure answers 500 without internal details, and /readyz answers 503", async () => {
      const internal = "FATAL: password authentication failed for user admin at 10.1.2.3 (connection.ts:42)";
      const broken = new Proxy(
        {},
        {
          get() {
            throw new Error(internal);
          },
        },
      );
      const down: Database = {
        kind,
        db: broken as Database["db"],
        run: async () => {
          throw new Error(internal);
        },
        query: async () => {
          throw new Error(internal);
        },
        ping: async () => false,
        close: async () => {},
      };
      const b = await createTestApp(down);
      try {
        const res = await b.call("GET", "/v1/agents", { key: "bk_someKeyThatLooksRealsomeKeyThatLooksReal12", headers: { "x-request-id": "req-500" } });
        const p = expectProblem(res, 500, "internal_error");
        expect(res.text).not.toContain("password");
        expect(res.text).not.toContain("10.1.2.3");
        expect(res.text).not.toContain("FATAL");
        expect(p.request_id).toBe("req-500");
        const logged = b.logs.map((l) => JSON.parse(l)).find((l) => l.level === "error" && l.request_id === "req-500");
        expect(logged).toBeDefined();
        expect(JSON.stringify(logged)).not.toMatch(/\n\s+at |stack/);
        expect(b.logs.join("\n")).not.toContain("bk_someKeyThatLooksRealsomeKeyThatLooksReal12");
        const ready = await b.call("GET", "/readyz");
        expectProblem(ready, 503, "unavailable");
        expect((await b.call("GET", "/healthz")).status).toBe(200);
      } finally {
        await b.app.stop();
      }
    });
  });

  describe("Idempotency-Key", () => {
    test("the same key and body replays the first answer exactly and creates one agent", async () => {
      const { key } = await org();
      const body = { wallet_address: WALLET, name: "idem" };
      const headers = { "idempotency-key": "create-agent-1" };
      const first = await t.call("POST", "/v1/agents", { key, body, headers });
      expect(first.status).toBe(201);
      const second = await t.call("POST", "/v1/agents", { key, body, headers });
      expect(second.status).toBe(201);
      expect(second.text).toBe(first.text);
      expect(second.headers.get("content-type")).toBe(first.headers.get("content-type"));
      expect(second.headers.get("idempotent-replayed")).toBe("true");
      const third = await t.call("POST", "/v1/agents", { key, body, headers });
      expect(third.text).toBe(first.text);
      const list = await t.call("GET", "/v1/agents", { key });
      expect(list.body.data.map((a: any) => a.id)).toEqual([first.body.id]);
    });

    test("the same key with a different body answers 409 idempotency_conflict", async () => {
      const { key } = await org();
      const headers = { "idempotency-key": "create-agent-2" };
      const first = await t.call("POST", "/v1/agents", { key, body: { wallet_address: WALLET, name: "one" }, headers });
      expect(first.status).toBe(201);
      expectProblem(await t.call("POST", "/v1/agents", { key, body: { wallet_address: WALLET, name: "two" }, headers }), 409, "idempotency_conflict");
      // The same key on another route is a different request too.
      expectProblem(await t.call("POST", "/v1/api-keys", { key, body: {}, headers }), 409, "idempotency_conflict");
      expect((await t.call("GET", "/v1/agents", { key })).body.data.length).toBe(1);
      // The first answer is still replayed.
      const replay = await t.call("POST", "/v1/agents", { key, body: { wallet_address: WALLET, name: "one" }, headers });
      expect(replay.text).toBe(first.text);
    });

    test("a different API key with the same Idempotency-Key is independent", async () => {
      const a = await org();
      const b = await org();
      const a2 = await issue(a.key);
      const body = { wallet_address: WALLET };
      const headers = { "idempotency-key": "shared-key" };
      const ra = await t.call("POST", "/v1/agents", { key: a.key, body, headers });
      const rb = await t.call("POST", "/v1/agents", { key: b.key, body, headers });
      const ra2 = await t.call("POST", "/v1/agents", { key: a2.key, body, headers });
      for (const r of [ra, rb, ra2]) {
        expect(r.status).toBe(201);
        expect(r.headers.get("idempotent-replayed")).toBeNull();
      }
      expect(rb.body.id).not.toBe(ra.body.id);
      expect(rb.body.org_id).toBe(b.orgId);
      expect(ra2.body.id).not.toBe(ra.body.id);
      expect((await t.call("GET", "/v1/agents", { key: b.key })).body.data.map((x: any) => x.id)).toEqual([rb.body.id]);
      expect((await t.call("GET", "/v1/agents", { key: a.key })).body.data.length).toBe(2);
    });

    test("a replay needs the credential of the first request (admin route included)", async () => {
      const headers = { "idempotency-key": `org-${crypto.randomUUID()}` };
      const body = { name: "Replayed org" };
      const first = await t.call("POST", "/v1/orgs", { body, headers: { ...headers, ...ADMIN } });
      expect(first.status).toBe(201);
      secrets.add(first.body.api_key.key);
      for (const h of [headers, { ...headers, authorization: "Bearer wrong" }]) {
        const r = await t.call("POST", "/v1/orgs", { body, headers: h });
        expectProblem(r, 401, "unauthenticated");
        expect(r.text).not.toContain(first.body.api_key.key);
        expect(r.text).not.toContain(first.body.org.id);
      }
      // An API key is another credential: it does not see the admin's record either.
      const { key } = await org();
      const viaKey = await t.call("POST", "/v1/orgs", { key, body, headers });
      expectProblem(viaKey, 401, "unauthenticated");
      const again = await t.call("POST", "/v1/orgs", { body, headers: { ...headers, ...ADMIN } });
      expect(again.status).toBe(201);
      expect(again.text).toBe(first.text);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
    });

    test("stored answers do not hold API keys in clear, and still replay them", async () => {
      const { key } = await org();
      const headers = { "idempotency-key": `issue-${crypto.randomUUID()}` };
      const issued = await t.call("POST", "/v1/api-keys", { key, body: { name: "idem" }, headers });
      expect(issued.status).toBe(201);
      secrets.add(issued.body.key);
      const orgHeaders = { "idempotency-key": `org-${crypto.randomUUID()}`, ...ADMIN };
      const made = await t.call("POST", "/v1/orgs", { body: { name: "stored" }, headers: orgHeaders });
      expect(made.status).toBe(201);
      secrets.add(made.body.api_key.key);
      const res = (await db.db.execute(sql`select body from idempotency_keys`)) as unknown as { rows?: { body: string }[] } & { body: string }[];
      const stored = (res.rows ?? res).map((r) => r.body);
      expect(stored.length).toBeGreaterThan(0);
      const all = stored.join("\n");
      for (const s of [issued.body.key, made.body.api_key.key, key]) {
        expect(all).not.toContain(s);
        expect(all).not.toContain(s.slice(3));
      }
      const replay = await t.call("POST", "/v1/api-keys", { key, body: { name: "idem" }, headers });
      expect(replay.status).toBe(201);
      expect(replay.text).toBe(issued.text);
      expect((await t.call("GET", "/v1/api-keys", { key })).body.data.length).toBe(2);
    });

    test("concurrent requests with one key create one agent", async () => {
      const { key } = await org();
      const body = { wallet_address: WALLET, name: "race" };
      const headers = { "idempotency-key": "race-1" };
      const answers = await Promise.all(Array.from({ length: 5 }, () => t.call("POST", "/v1/agents", { key, body, headers })));
      const created = answers.filter((r) => r.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      for (const r of answers) {
        if (r.status !== 201) expectProblem(r, 409, "idempotency_conflict");
        else expect(r.body.id).toBe(created[0].body.id);
      }
      expect((await t.call("GET", "/v1/agents", { key })).body.data.length).toBe(1);
    });

    test("client errors are replayed, an invalid key is refused, and 401s are not stored", async () => {
      const { key } = await org();
      const headers = { "idempotency-key": "bad-body" };
      const first = await t.call("POST", "/v1/agents", { key, body: { wallet_address: "nope" }, headers });
      expectProblem(first, 400, "invalid_request");
      const second = await t.call("POST", "/v1/agents", { key, body: { wallet_address: "nope" }, headers });
      expect(second.status).toBe(400);
      expect(second.text).toBe(first.text);
      expect(second.headers.get("content-type")).toStartWith("application/problem+json");
      expectProblem(await t.call("POST", "/v1/agents", { key, body: { wallet_address: WALLET }, headers: { "idempotency-key": "x".repeat(201) } }), 400, "invalid_request");
      expect((await t.call("GET", "/v1/agents", { key })).body.data).toEqual([]);

      // A 401 is not kept: the same Idempotency-Key runs the request again rather than replaying it.
      const scoped = await issue(key);
      const revokedHeaders = { "idempotency-key": "after-401" };
      await t.call("DELETE", `/v1/api-keys/${scoped.id}`, { key });
      for (let i = 0; i < 2; i++) {
        const r = await t.call("POST", "/v1/agents", { key: scoped.key, body: { wallet_address: WALLET }, headers: revokedHeaders });
        expectProblem(r, 401, "unauthenticated");
        expect(r.headers.get("idempotent-replayed")).toBeNull();
      }
    });
  });

  describe("rate limits", () => {
    test("a key over its rate answers 429 with Retry-After; other keys are unaffected", async () => {
      const limited = await createTestApp(db, { config: { rateLimitPerS: 1 } });
      try {
        const { key } = await org();
        const other = await org();
        const answers = [];
        for (let i = 0; i < 4; i++) answers.push(await limited.call("GET", "/v1/agents", { key }));
        expect(answers.slice(0, 2).map((r) => r.status)).toEqual([200, 200]); // a burst of twice the rate
        const p = expectProblem(answers[3], 429, "rate_limited");
        expect(Number(answers[3].headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(p.detail).toContain("retry");
        // Requests with a body are limited the same way, before their body is looked at.
        const post = await limited.call("POST", "/v1/agents", { key, body: { wallet_address: WALLET } });
        expectProblem(post, 429, "rate_limited");
        expect(post.headers.get("retry-after")).not.toBeNull();
        expect((await limited.call("GET", "/v1/agents", { key: other.key })).status).toBe(200);
        expect((await t.call("GET", "/v1/agents", { key })).body.data).toEqual([]);
      } finally {
        await limited.app.stop();
      }
    });
  });

  describe("operations", () => {
    test("/healthz and /readyz", async () => {
      const h = await t.call("GET", "/healthz");
      expect(h.status).toBe(200);
      expect(h.body).toEqual({ status: "ok" });
      const r = await t.call("GET", "/readyz");
      expect(r.status).toBe(200);
      expect(r.body.status).toBe("ready");
      expect(r.body.database).toBe(kind);
    });

    test("/metrics is Prometheus text with request counts", async () => {
      await t.call("GET", "/healthz");
      const res = await t.call("GET", "/metrics");
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith("text/plain");
      expect(res.text).toContain("# TYPE http_requests_total counter");
      expect(res.text).toMatch(/^http_requests_total\{[^}]*route="\/healthz"[^}]*\} \d+$/m);
      expect(res.text).toMatch(/^http_requests_total\{[^}]*route="\/v1\/agents\/:id"[^}]*\} \d+$/m);
      // Ids never become labels, and paths that match no route share one label.
      expect(res.text).not.toMatch(/agt_[0-9a-z]{20}/);
      for (let i = 0; i < 5; i++) await t.call("GET", `/random-path-${i}-${crypto.randomUUID()}`);
      const after = (await t.call("GET", "/metrics")).text;
      expect(after).not.toContain("random-path-");
      expect(after).toMatch(/^http_requests_total\{[^}]*route="unmatched"[^}]*status="404"[^}]*\} ([5-9]|\d{2,})$/m);
      expect(res.text).not.toMatch(/bk_[A-Za-z0-9_-]{20,}/);
    });

    test("/openapi is an OpenAPI document with the agent paths", async () => {
      const res = await t.call("GET", "/openapi");
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith("application/json");
      expect(typeof res.body.openapi).toBe("string");
      const p = Object.keys(res.body.paths);
      for (const path of ["/v1/agents", "/v1/agents/{id}", "/v1/agents/{id}/limits", "/v1/agents/{id}/breaker", "/v1/agents/{id}/resume", "/v1/api-keys", "/v1/api-keys/{id}", "/v1/orgs"]) {
        expect(p).toContain(path);
      }
      expect(Object.keys(res.body.paths["/v1/agents"])).toEqual(expect.arrayContaining(["get", "post"]));
      expect(Object.keys(res.body.paths["/v1/agents/{id}/limits"])).toContain("patch");
    });

    test("X-Request-Id is echoed, or made up when missing or unusable", async () => {
      const { key } = await org();
      const echoed = await t.call("GET", "/v1/agents", { key, headers: { "x-request-id": "my-req.123_abc" } });
      expect(echoed.headers.get("x-request-id")).toBe("my-req.123_abc");
      const onError = await t.call("GET", "/v1/agents", { headers: { "x-request-id": "err-req-1" } });
      expect(onError.status).toBe(401);
      expect(onError.headers.get("x-request-id")).toBe("err-req-1");
      const on404 = await t.call("GET", "/nope", { headers: { "x-request-id": "nf-1" } });
      expect(on404.headers.get("x-request-id")).toBe("nf-1");
      const made = await t.call("GET", "/healthz");
      expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      const unusable = await t.call("GET", "/healthz", { headers: { "x-request-id": "has spaces and <tags>" } });
      expect(unusable.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      const body = { wallet_address: WALLET };
      await t.call("POST", "/v1/agents", { key, body, headers: { "idempotency-key": "rid", "x-request-id": "first-rid" } });
      const replay = await t.call("POST", "/v1/agents", { key, body, headers: { "idempotency-key": "rid", "x-request-id": "second-rid" } });
      expect(replay.headers.get("x-request-id")).toBe("second-rid");
      const logged = t.logs.map((l) => JSON.parse(l)).filter((l) => l.request_id === "my-req.123_abc");
      expect(logged.length).toBeGreaterThan(0);
    });

    test("logs are JSON lines that never contain an API key or the admin token", async () => {
      // Make sure keys travelled through every kind of request first.
      const { key } = await org();
      await t.call("GET", "/v1/agents", { key });
      await t.call("POST", "/v1/agents", { key, raw: "{" });
      await t.call("GET", `/v1/agents/${MISSING_AGENT}`, { key });
      expect(secrets.size).toBeGreaterThan(10);
      expect(t.logs.length).toBeGreaterThan(50);
      const all = [...t.logs, ...noAdmin.logs, ...small.logs];
      for (const line of all) {
        const parsed = JSON.parse(line);
        expect(typeof parsed.level).toBe("string");
        expect(typeof parsed.msg).toBe("string");
      }
      const text = all.join("\n");
      for (const s of secrets) expect(text).not.toContain(s);
      expect(text).not.toContain(ADMIN_TOKEN);
      expect(text).not.toMatch(/bk_[A-Za-z0-9_-]{20,}/);
      const requests = t.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
      expect(requests.length).toBeGreaterThan(0);
      for (const r of requests) expect(typeof r.request_id).toBe("string");
    });
  });
});

describe("problem details outside the database", () => {
  test("every error body this file checks is application/problem+json", () => {
    // Guard against expectProblem silently accepting anything: a JSON 200 must fail it.
    const fake: TestResponse = { status: 200, body: { ok: true }, text: '{"ok":true}', headers: new Headers({ "content-type": "application/json" }) };
    expect(() => expectProblem(fake, 400, "invalid_request")).toThrow();
    const wrongType: TestResponse = {
      status: 400,
      body: { type: "x", title: "x", status: 400, detail: "x", code: "invalid_request" },
      text: "{}",
      headers: new Headers({ "content-type": "application/json" }),
    };
    expect(() => expectProblem(wrongType, 400, "invalid_request")).toThrow();
  });
});
