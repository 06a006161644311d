/**
 * Delegated-mode credentials (CONTRACT section 8) through the real app and the paper venue, on
 * PGlite and, when TEST_DATABASE_URL is set, on PostgreSQL: the scope rules, the venue's
 * confirmation, the halt by a kill, sealing, deletion, access rules, Idempotency-Key replay, and a
 * planted secret that must not appear in any answer, log line, or byte of the database.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { CredentialVault } from "../../src/crypto/credential-vault.ts";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { credentials, idempotencyKeys } from "../../src/db/schema.ts";
import { DbAgentStore } from "../../src/modules/agents/agent-store.ts";
import { validateScopes } from "../../src/modules/credentials/service.ts";
import { VenueUnavailableError, type VenueCredentials } from "../../src/venues/venue.ts";
import { createTestApp, type TestApp, type TestResponse } from "../support/app.ts";
import { copyOfTemplate, describeEachDatabase, postgresUrl, sharedPostgres } from "../support/databases.ts";

const WALLET = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const SIGNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const MISSING_AGENT = "agt_zzzzzzzzzzzzzzzzzzzz";
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Fresh, unique credentials; the secret parts are random so a leak can be searched for. */
function newCreds(tag = "c") {
  return {
    api_key: `${tag}-key-${randomBytes(12).toString("hex")}`,
    api_secret: randomBytes(32).toString("base64"),
    passphrase: `${tag}-pass-${randomBytes(12).toString("hex")}`,
  };
}

/** Every credential this file submitted, to check none reaches an answer or a log line. */
const submitted = new Set<string>();
function body(creds: { api_key: string; api_secret: string; passphrase?: string }, scopes: unknown) {
  submitted.add(creds.api_key);
  submitted.add(creds.api_secret);
  if (creds.passphrase) submitted.add(creds.passphrase);
  return { ...creds, scopes };
}

function expectNoCredential(text: string): void {
  for (const s of submitted) expect(text).not.toContain(s);
}

function expectProblem(res: TestResponse, status: number, code: string): any {
  if (res.status !== status) throw new Error(`expected ${status} ${code}, got ${res.status}: ${res.text}`);
  expect(res.headers.get("content-type")).toStartWith("application/problem+json");
  expect(res.body.status).toBe(status);
  expect(res.body.code).toBe(code);
  expect(typeof res.body.title).toBe("string");
  expect(typeof res.body.detail).toBe("string");
  expect(res.text).not.toMatch(/\n\s+at |\.tsx?:\d+/);
  expectNoCredential(res.text);
  return res.body;
}

async function credentialRows(database: Database, agentId: string) {
  return database.db.select().from(credentials).where(eq(credentials.agentId, agentId));
}

describeEachDatabase("credentials", (kind, getDatabase) => {
  let database: Database;
  let t: TestApp;
  /** confirmCredentials calls seen by the venue, with the credentials it was given. */
  let confirmSpy: ReturnType<typeof spyOn>;

  beforeAll(async () => {
    database = await getDatabase();
    t = await createTestApp(database);
    confirmSpy = spyOn(t.app.services.venue, "confirmCredentials");
  });
  afterAll(async () => {
    confirmSpy.mockRestore();
    await t.app.stop();
  });

  const post = (key: string, agentId: string, b: unknown, headers?: Record<string, string>) =>
    t.call("POST", `/v1/agents/${agentId}/creds`, { key, body: b, headers });
  const del = (key: string, agentId: string) => t.call("DELETE", `/v1/agents/${agentId}/creds`, { key });

  /** The agent is untouched: payload mode, no credentials in the answer or in the table. */
  async function expectPayloadAndNothingStored(key: string, agentId: string) {
    const got = await t.call("GET", `/v1/agents/${agentId}`, { key });
    expect(got.status).toBe(200);
    expect(got.body.mode).toBe("payload");
    expect(got.body.credentials).toBeNull();
    expect(await credentialRows(database, agentId)).toHaveLength(0);
  }

  describe("scope rules", () => {
    test("each forbidden scope, alone or mixed with allowed or unknown ones, is 400 forbidden_scope listing them; nothing stored, venue not asked", async () => {
      const { key, agent } = await t.newAgent();
      const cases: [unknown[], string[]][] = [
        [["withdraw"], ["withdraw"]],
        [["transfer"], ["transfer"]],
        [["balance_modify"], ["balance_modify"]],
        [["order:place", "withdraw"], ["withdraw"]],
        [["order:place", "order:cancel", "transfer"], ["transfer"]],
        [["order:cancel", "balance_modify", "order:place", "withdraw", "transfer"], ["balance_modify", "withdraw", "transfer"]],
        [["withdraw", "bogus:scope"], ["withdraw"]],
        [["withdraw", "withdraw"], ["withdraw"]],
        [["Withdraw"], ["Withdraw"]],
        [["balance-modify", "order:place"], ["balance-modify"]],
      ];
      const calls = confirmSpy.mock.calls.length;
      for (const [scopes, listed] of cases) {
        const res = await post(key, agent.id, body(newCreds(), scopes));
        const p = expectProblem(res, 400, "forbidden_scope");
        expect(p.scopes).toEqual(listed);
        for (const s of listed) expect(p.detail).toContain(s);
      }
      expect(confirmSpy.mock.calls.length).toBe(calls);
      await expectPayloadAndNothingStored(key, agent.id);
    });

    test("a forbidden scope leaves a delegated agent's credentials and mode unchanged", async () => {
      const { key, agent } = await t.newAgent();
      const first = newCreds();
      expect((await post(key, agent.id, body(first, ["order:place"]))).status).toBe(200);
      const [before] = await credentialRows(database, agent.id);
      const res = await post(key, agent.id, body(newCreds(), ["order:place", "transfer"]));
      expectProblem(res, 400, "forbidden_scope");
      const got = await t.call("GET", `/v1/agents/${agent.id}`, { key });
      expect(got.body.mode).toBe("delegated");
      expect(got.body.credentials.key_hint).toBe(`…${first.api_key.slice(-4)}`);
      const [after] = await credentialRows(database, agent.id);
      expect(Buffer.from(after.ciphertext).equals(Buffer.from(before.ciphertext))).toBe(true);
    });

    test("unknown values, an empty list and duplicates are 400 invalid_scope; nothing stored", async () => {
      const { key, agent } = await t.newAgent();
      const cases: [unknown[], string[]][] = [
        [[], []],
        [["order:read"], ["order:read"]],
        [["order:place", "admin"], ["admin"]],
        [[""], [""]],
        [["ORDER:PLACE"], ["ORDER:PLACE"]],
        [[" order:place"], [" order:place"]],
        [["order:place", "order:place"], ["order:place"]],
        [["order:cancel", "order:place", "order:cancel"], ["order:cancel"]],
      ];
      const calls = confirmSpy.mock.calls.length;
      for (const [scopes, listed] of cases) {
        const res = await post(key, agent.id, body(newCreds(), scopes));
        const p = expectProblem(res, 400, "invalid_scope");
        expect(p.scopes).toEqual(listed);
      }
      expect(confirmSpy.mock.calls.length).toBe(calls);
      await expectPayloadAndNothingStored(key, agent.id);
    });

    test("validateScopes answers the canonical order", () => {
      expect(validateScopes(["order:cancel", "order:place"])).toEqual(["order:place", "order:cancel"]);
      expect(validateScopes(["order:cancel"])).toEqual(["order:cancel"]);
    });
  });

  describe("request validation", () => {
    test("unknown fields, missing or empty or oversized strings and a non-array scopes are 400 invalid_request", async () => {
      const { key, agent } = await t.newAgent();
      const c = newCreds();
      const bad: unknown[] = [
        { ...body(c, ["order:place"]), extra: 1 },
        { api_key: c.api_key, scopes: ["order:place"] },
        { api_secret: c.api_secret, scopes: ["order:place"] },
        { ...c, api_key: "", scopes: ["order:place"] },
        { ...c, api_secret: "", scopes: ["order:place"] },
        { ...c, passphrase: "", scopes: ["order:place"] },
        { ...c, api_secret: `${c.api_secret}${"x".repeat(600)}`, scopes: ["order:place"] },
        { ...c, scopes: "order:place" },
        { ...c, scopes: [1] },
        { ...c },
        { ...c, scopes: Array.from({ length: 17 }, () => "order:place") },
      ];
      for (const b of bad) {
        const res = await post(key, agent.id, b);
        const p = expectProblem(res, 400, "invalid_request");
        expect(Array.isArray(p.errors)).toBe(true);
        expect(res.text).not.toContain("x".repeat(50));
      }
      expectProblem(await t.call("POST", `/v1/agents/${agent.id}/creds`, { key, raw: "{not json" }), 400, "invalid_request");
      await expectPayloadAndNothingStored(key, agent.id);
    });

    test("without an API key: 401, before the body is looked at", async () => {
      const { agent } = await t.newAgent();
      expectProblem(await t.call("POST", `/v1/agents/${agent.id}/creds`, { body: body(newCreds(), ["order:place"]) }), 401, "unauthenticated");
      expectProblem(await t.call("DELETE", `/v1/agents/${agent.id}/creds`, {}), 401, "unauthenticated");
    });
  });

  describe("submission and deletion", () => {
    test("valid credentials: 200 Agent in delegated mode with scopes and a key hint, sealed in the database, never echoed", async () => {
      const { key, agent } = await t.newAgent({ body: { signer_address: SIGNER } });
      const c = newCreds();
      const calls = confirmSpy.mock.calls.length;
      const res = await post(key, agent.id, body(c, ["order:cancel", "order:place"]));
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(agent.id);
      expect(res.body.mode).toBe("delegated");
      expect(Object.keys(res.body.credentials).sort()).toEqual(["created_at", "key_hint", "scopes"]);
      expect(res.body.credentials.scopes).toEqual(["order:place", "order:cancel"]);
      expect(res.body.credentials.key_hint).toBe(`…${c.api_key.slice(-4)}`);
      expect(res.body.credentials.created_at).toMatch(ISO);
      expectNoCredential(res.text);

      // The venue was asked once, with the agent's signer address.
      expect(confirmSpy.mock.calls.length).toBe(calls + 1);
      const [given, opts] = confirmSpy.mock.calls.at(-1) as [VenueCredentials, { signal?: AbortSignal }];
      expect(given).toEqual({ ...c, address: SIGNER.toLowerCase() });
      expect(opts.signal).toBeInstanceOf(AbortSignal);

      const got = await t.call("GET", `/v1/agents/${agent.id}`, { key });
      expect(got.body.mode).toBe("delegated");
      expect(got.body.credentials).toEqual(res.body.credentials);
      expectNoCredential(got.text);
      const list = await t.call("GET", "/v1/agents", { key });
      expect(list.body.data[0].credentials).toEqual(res.body.credentials);

      const rows = await credentialRows(database, agent.id);
      expect(rows).toHaveLength(1);
      expect(rows[0].scopes).toEqual(["order:place", "order:cancel"]);
      expect(rows[0].keyHint).toBe(`…${c.api_key.slice(-4)}`);
      const stored = Buffer.from(rows[0].ciphertext);
      for (const s of [c.api_key, c.api_secret, c.passphrase]) {
        expect(stored.includes(Buffer.from(s))).toBe(false);
      }
      // The stored ciphertext opens, with the service's key, to exactly what was submitted.
      expect(await t.app.services.vault.withOpened(new Uint8Array(stored), async (o) => ({ ...o }))).toEqual(c);
      expectNoCredential(t.logs.join("\n"));
    });

    test("a passphrase is optional", async () => {
      const { key, agent } = await t.newAgent();
      const { api_key, api_secret } = newCreds();
      const res = await post(key, agent.id, body({ api_key, api_secret }, ["order:place"]));
      expect(res.status).toBe(200);
      expect(res.body.credentials.scopes).toEqual(["order:place"]);
      const opened = await t.app.services.credentials.withAgentCredentials(agent.id, async (c) => ({ ...c }));
      expect(opened).toEqual({ api_key, api_secret, address: WALLET.toLowerCase() });
    });

    test("submitting again replaces the credentials", async () => {
      const { key, agent } = await t.newAgent();
      const a = newCreds("a");
      const b = newCreds("b");
      expect((await post(key, agent.id, body(a, ["order:place", "order:cancel"]))).status).toBe(200);
      const res = await post(key, agent.id, body(b, ["order:cancel"]));
      expect(res.status).toBe(200);
      expect(res.body.credentials.key_hint).toBe(`…${b.api_key.slice(-4)}`);
      expect(res.body.credentials.scopes).toEqual(["order:cancel"]);
      expect(await credentialRows(database, agent.id)).toHaveLength(1);
      expect(await t.app.services.credentials.withAgentCredentials(agent.id, async (c) => c.api_secret)).toBe(b.api_secret);
    });

    test("DELETE: 200 Agent back in payload mode, row gone; a second DELETE answers the same", async () => {
      const { key, agent } = await t.newAgent();
      expect((await post(key, agent.id, body(newCreds(), ["order:place"]))).status).toBe(200);
      expect(await credentialRows(database, agent.id)).toHaveLength(1);
      const res = await del(key, agent.id);
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(agent.id);
      expect(res.body.mode).toBe("payload");
      expect(res.body.credentials).toBeNull();
      await expectPayloadAndNothingStored(key, agent.id);
      expect(await t.app.services.credentials.withAgentCredentials(agent.id, async () => "called")).toBeNull();

      const again = await del(key, agent.id);
      expect(again.status).toBe(200);
      expect(again.body.mode).toBe("payload");
      expect(again.body.credentials).toBeNull();
      // And delegated mode can be entered again afterwards.
      expect((await post(key, agent.id, body(newCreds(), ["order:cancel"]))).body.mode).toBe("delegated");
    });

    test("deleting runs a VACUUM of the credentials table, so the ciphertext's dead tuple does not linger", async () => {
      const { key, agent } = await t.newAgent();
      expect((await post(key, agent.id, body(newCreds(), ["order:place"]))).status).toBe(200);
      const vacuums = async () => {
        const r = (await database.db.execute(sql`select vacuum_count from pg_stat_user_tables where relname = 'credentials'`)) as unknown as
          | { rows: { vacuum_count: unknown }[] }
          | { vacuum_count: unknown }[];
        return Number((Array.isArray(r) ? r : r.rows)[0].vacuum_count);
      };
      const before = await vacuums();
      expect((await del(key, agent.id)).status).toBe(200);
      expect(await vacuums()).toBeGreaterThan(before);
      // Nothing deleted, nothing vacuumed.
      const after = await vacuums();
      expect((await del(key, agent.id)).status).toBe(200);
      expect(await vacuums()).toBe(after);
    });

    test("a failing or hanging VACUUM never fails the deletion, nor holds it up for long", async () => {
      for (const vacuum of [() => Promise.reject(new Error("vacuum refused")), () => new Promise(() => {})]) {
        const { key, agent } = await t.newAgent();
        expect((await post(key, agent.id, body(newCreds(), ["order:place"]))).status).toBe(200);
        const db = new Proxy(database.db, {
          get: (target, prop, receiver) => (prop === "execute" ? vacuum : Reflect.get(target, prop, receiver)),
        });
        const started = performance.now();
        expect(await new DbAgentStore(db).deleteCredentials(agent.id)).toBe(true);
        expect(performance.now() - started).toBeLessThan(3000);
        expect(await credentialRows(database, agent.id)).toHaveLength(0);
      }
    });

    test("the venue refusing the credentials is 400 invalid_credentials; nothing stored", async () => {
      const { key, agent } = await t.newAgent();
      // A blank key cannot travel in a header: refused before the venue is asked.
      expectProblem(await post(key, agent.id, body({ api_key: "   ", api_secret: "s3cret-value" }, ["order:place"])), 400, "invalid_request");
      confirmSpy.mockResolvedValueOnce(false);
      expectProblem(await post(key, agent.id, body(newCreds(), ["order:place"])), 400, "invalid_credentials");
      await expectPayloadAndNothingStored(key, agent.id);
    });

    test("an unreachable venue is 503 venue_unavailable with Retry-After; nothing stored, the error is logged without credentials", async () => {
      const { key, agent } = await t.newAgent();
      confirmSpy.mockRejectedValueOnce(new VenueUnavailableError("GET /auth/api-keys: connection failed"));
      const res = await post(key, agent.id, body(newCreds(), ["order:place"]));
      expectProblem(res, 503, "venue_unavailable");
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      await expectPayloadAndNothingStored(key, agent.id);
      const line = t.logs.find((l) => l.includes("venue could not confirm credentials") && l.includes(agent.id));
      expect(line).toBeDefined();
      expect(line).toContain("connection failed");
      expectNoCredential(t.logs.join("\n"));
    });

    test("a venue that does not answer in time is 503, and its call is aborted", async () => {
      const slow = await createTestApp(database, { config: { venueTimeoutMs: 150 } });
      let seen: AbortSignal | undefined;
      const spy = spyOn(slow.app.services.venue, "confirmCredentials").mockImplementation((_c, opts) => {
        seen = opts?.signal;
        return new Promise(() => {}); // never answers, ignores the signal
      });
      try {
        const { key, agent } = await slow.newAgent();
        const started = performance.now();
        const res = await slow.call("POST", `/v1/agents/${agent.id}/creds`, { key, body: body(newCreds(), ["order:place"]) });
        expect(performance.now() - started).toBeLessThan(2000);
        expectProblem(res, 503, "venue_unavailable");
        expect(seen?.aborted).toBe(true);
        expect(await credentialRows(database, agent.id)).toHaveLength(0);
      } finally {
        spy.mockRestore();
        await slow.app.stop();
      }
    });
  });

  describe("access", () => {
    test("another organization's agent and an unknown agent are 404, for POST and DELETE; nothing stored", async () => {
      const { key: ownerKey, agent } = await t.newAgent();
      const other = await t.newOrg("other org");
      const calls = confirmSpy.mock.calls.length;
      expectProblem(await post(other.key, agent.id, body(newCreds(), ["order:place"])), 404, "not_found");
      expectProblem(await post(other.key, agent.id, body(newCreds(), ["withdraw"])), 404, "not_found");
      expectProblem(await del(other.key, agent.id), 404, "not_found");
      expectProblem(await post(ownerKey, MISSING_AGENT, body(newCreds(), ["order:place"])), 404, "not_found");
      expectProblem(await del(ownerKey, MISSING_AGENT), 404, "not_found");
      expect(confirmSpy.mock.calls.length).toBe(calls);
      await expectPayloadAndNothingStored(ownerKey, agent.id);

      // Another organization cannot delete them either.
      expect((await post(ownerKey, agent.id, body(newCreds(), ["order:place"]))).status).toBe(200);
      expectProblem(await del(other.key, agent.id), 404, "not_found");
      expect(await credentialRows(database, agent.id)).toHaveLength(1);
    });

    test("a key scoped to another agent is 403; a key scoped to this agent may submit and delete", async () => {
      const { key, agent } = await t.newAgent();
      const { agent: sibling } = await t.newAgent({ key });
      const issue = async (agentId: string) => {
        const res = await t.call("POST", "/v1/api-keys", { key, body: { agent_id: agentId } });
        expect(res.status).toBe(201);
        return res.body.key as string;
      };
      const siblingKey = await issue(sibling.id);
      const ownKey = await issue(agent.id);
      expectProblem(await post(siblingKey, agent.id, body(newCreds(), ["order:place"])), 403, "forbidden");
      expectProblem(await del(siblingKey, agent.id), 403, "forbidden");
      await expectPayloadAndNothingStored(key, agent.id);

      const res = await post(ownKey, agent.id, body(newCreds(), ["order:place"]));
      expect(res.status).toBe(200);
      expect(res.body.mode).toBe("delegated");
      expectProblem(await del(siblingKey, agent.id), 403, "forbidden");
      expect((await del(ownKey, agent.id)).body.mode).toBe("payload");
    });
  });

  describe("halted by a kill", () => {
    test("409 agent_halted, the venue is never asked, nothing stored; after a resume it works", async () => {
      const { key, agent } = await t.newAgent();
      const actor = (await t.app.services.agents.registry.get(agent.id))!;
      await actor.tripBreaker("kill");
      const calls = confirmSpy.mock.calls.length;
      const p = expectProblem(await post(key, agent.id, body(newCreds(), ["order:place"])), 409, "agent_halted");
      expect(p.detail).toContain(agent.id);
      expect(confirmSpy.mock.calls.length).toBe(calls);
      await expectPayloadAndNothingStored(key, agent.id);
      // Scope rules still come first.
      expectProblem(await post(key, agent.id, body(newCreds(), ["withdraw"])), 400, "forbidden_scope");
      // A halted agent may still delete credentials.
      expect((await del(key, agent.id)).status).toBe(200);

      expect((await t.call("POST", `/v1/agents/${agent.id}/resume`, { key })).status).toBe(200);
      expect((await post(key, agent.id, body(newCreds(), ["order:place"]))).body.mode).toBe("delegated");
    });

    test("a kill that lands while the venue is confirming still wins: 409, nothing stored", async () => {
      const { key, agent } = await t.newAgent();
      const actor = (await t.app.services.agents.registry.get(agent.id))!;
      confirmSpy.mockImplementationOnce(async () => {
        await actor.tripBreaker("kill");
        return true;
      });
      expectProblem(await post(key, agent.id, body(newCreds(), ["order:place"])), 409, "agent_halted");
      await expectPayloadAndNothingStored(key, agent.id);
    });

    test("a breaker tripped by hand does not block credentials (only a kill halts them)", async () => {
      const { key, agent } = await t.newAgent();
      expect((await t.call("POST", `/v1/agents/${agent.id}/breaker`, { key })).body.breaker.reason).toBe("manual");
      const res = await post(key, agent.id, body(newCreds(), ["order:place"]));
      expect(res.status).toBe(200);
      expect(res.body.mode).toBe("delegated");
      expect(res.body.breaker.state).toBe("tripped");
    });
  });

  describe("Idempotency-Key", () => {
    test("the same POST replays the first answer without asking the venue again; a different body is 409; no credential is stored in clear", async () => {
      const { key, agent } = await t.newAgent();
      const c = newCreds();
      const idem = { "idempotency-key": `creds-${randomBytes(6).toString("hex")}` };
      const first = await post(key, agent.id, body(c, ["order:place"]), idem);
      expect(first.status).toBe(200);
      const calls = confirmSpy.mock.calls.length;
      const again = await post(key, agent.id, body(c, ["order:place"]), idem);
      expect(again.status).toBe(200);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);
      expect(confirmSpy.mock.calls.length).toBe(calls);
      expectProblem(await post(key, agent.id, body(newCreds(), ["order:place"]), idem), 409, "idempotency_conflict");

      // A refused submission is replayed too (it says something about the request).
      const idem2 = { "idempotency-key": `creds-${randomBytes(6).toString("hex")}` };
      const forbidden = body(newCreds(), ["withdraw"]);
      expectProblem(await post(key, agent.id, forbidden, idem2), 400, "forbidden_scope");
      const replayed = await post(key, agent.id, forbidden, idem2);
      expectProblem(replayed, 400, "forbidden_scope");
      expect(replayed.headers.get("idempotent-replayed")).toBe("true");

      const rows = await database.db.select().from(idempotencyKeys);
      expect(rows.length).toBeGreaterThan(0);
      const dump = JSON.stringify(rows);
      expectNoCredential(dump);
      expect(dump).not.toContain(Buffer.from(c.api_secret).toString("base64"));
      expect(await credentialRows(database, agent.id)).toHaveLength(1);
    });
  });

  describe("withAgentCredentials", () => {
    test("opens the stored credentials for one call only, with the signer address; null without credentials", async () => {
      const { key, agent } = await t.newAgent({ body: { signer_address: SIGNER } });
      let called = false;
      expect(
        await t.app.services.credentials.withAgentCredentials(agent.id, async () => {
          called = true;
        }),
      ).toBeNull();
      expect(await t.app.services.credentials.withAgentCredentials(MISSING_AGENT, async () => 1)).toBeNull();
      expect(called).toBe(false);

      const c = newCreds();
      expect((await post(key, agent.id, body(c, ["order:place", "order:cancel"]))).status).toBe(200);
      let kept: VenueCredentials | undefined;
      const answer = await t.app.services.credentials.withAgentCredentials(agent.id, async (creds) => {
        kept = creds;
        expect(creds).toEqual({ ...c, address: SIGNER.toLowerCase() });
        return "placed";
      });
      expect(answer).toBe("placed");
      // The object handed to the call is blanked once it settles.
      expect(kept).toEqual({ api_key: "", api_secret: "", passphrase: "", address: SIGNER.toLowerCase() });

      // An error of the call propagates, and the object is blanked all the same.
      const failed = await t.app.services.credentials
        .withAgentCredentials(agent.id, async (creds) => {
          kept = creds;
          throw new Error("venue refused");
        })
        .catch((e: Error) => e.message);
      expect(failed).toBe("venue refused");
      expect(kept!.api_secret).toBe("");
    });
  });

  test(`no submitted credential ever reached a log line [${kind}]`, () => {
    expect(submitted.size).toBeGreaterThan(20);
    expect(t.logs.length).toBeGreaterThan(20);
    expectNoCredential(t.logs.join("\n"));
    expect(t.logs.some((l) => l.includes("credentials stored"))).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// A planted secret: submitted through every path, then searched for everywhere it must not be.

/** Every way the planted value could be written down. */
function encodings(s: string): Buffer[] {
  const b = Buffer.from(s, "utf8");
  return [b, Buffer.from(b.toString("base64")), Buffer.from(b.toString("base64url")), Buffer.from(b.toString("hex")), Buffer.from(s, "utf16le")];
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** Every row of every table of the public schema, as text (bytea as hex). */
async function allRowsAsText(database: Database): Promise<string> {
  const res = (await database.db.execute(
    sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
  )) as unknown as { rows: { table_name: string }[] } | { table_name: string }[];
  const tables = (Array.isArray(res) ? res : res.rows).map((r) => r.table_name);
  expect(tables).toEqual(expect.arrayContaining(["credentials", "idempotency_keys", "agents"]));
  let text = "";
  for (const table of tables) {
    const r = (await database.db.execute(sql.raw(`select t::text as row from "${table}" t`))) as unknown as { rows: { row: string }[] } | { row: string }[];
    text += `${(Array.isArray(r) ? r : r.rows).map((x) => x.row).join("\n")}\n`;
  }
  return text;
}

/**
 * Submits the planted credentials through success, refusal, validation, halt and replay paths;
 * answers every HTTP answer's text. Leaves the agent in delegated mode with the planted credentials.
 */
async function plant(t: TestApp, planted: { api_key: string; api_secret: string; passphrase: string }) {
  const answers: string[] = [];
  const { key, agent } = await t.newAgent({ body: { signer_address: SIGNER } });
  const go = async (method: string, path: string, o: Parameters<TestApp["call"]>[2]) => {
    const res = await t.call(method, path, { key, ...o });
    answers.push(`${res.status} ${JSON.stringify([...res.headers])} ${res.text}`);
    return res;
  };
  const path = `/v1/agents/${agent.id}/creds`;
  expect((await go("POST", path, { body: { ...planted, scopes: ["withdraw", "order:place"] } })).status).toBe(400);
  expect((await go("POST", path, { body: { ...planted, scopes: ["order:read"] } })).status).toBe(400);
  expect((await go("POST", path, { body: { ...planted, scopes: ["order:place"], extra: planted.api_secret } })).status).toBe(400);
  expect((await go("POST", path, { body: { ...planted, api_secret: planted.api_secret.repeat(20), scopes: ["order:place"] } })).status).toBe(400);
  expect((await go("POST", path, { raw: `{"api_secret": "${planted.api_secret}", oops` })).status).toBe(400);
  const actor = (await t.app.services.agents.registry.get(agent.id))!;
  await actor.tripBreaker("kill");
  expect((await go("POST", path, { body: { ...planted, scopes: ["order:place"] } })).status).toBe(409);
  await actor.resume();
  const idem = { "idempotency-key": "planted-secret-1" };
  const ok = await go("POST", path, { body: { ...planted, scopes: ["order:place", "order:cancel"] }, headers: idem });
  expect(ok.status).toBe(200);
  expect(ok.body.mode).toBe("delegated");
  const replay = await go("POST", path, { body: { ...planted, scopes: ["order:place", "order:cancel"] }, headers: idem });
  expect(replay.headers.get("idempotent-replayed")).toBe("true");
  expect((await go("GET", `/v1/agents/${agent.id}`, {})).body.credentials.key_hint).toBe(`…${planted.api_key.slice(-4)}`);
  // Deleted and submitted again: the deleted ciphertext's row is vacuumed.
  expect((await go("DELETE", path, {})).body.mode).toBe("payload");
  expect((await go("POST", path, { body: { ...planted, scopes: ["order:place"] } })).status).toBe(200);
  return { answers, agentId: agent.id };
}

function expectAbsent(haystack: Buffer | string, planted: Record<string, string>, where: string): void {
  const h = typeof haystack === "string" ? Buffer.from(haystack) : haystack;
  for (const [field, value] of Object.entries(planted)) {
    for (const enc of encodings(value)) {
      if (h.includes(enc)) throw new Error(`the planted ${field} was found in ${where}`);
    }
  }
}

async function expectSealedRoundTrip(database: Database, vault: CredentialVault, agentId: string, planted: Record<string, string>) {
  const [row] = await credentialRows(database, agentId);
  expect(row).toBeDefined();
  expect(await vault.withOpened(new Uint8Array(row.ciphertext), async (c) => ({ ...c }))).toEqual(planted as any);
}

describe("planted secret [pglite data directory]", () => {
  let dataDir: string;
  afterAll(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test("appears in no answer, log line or file of the database; the stored ciphertext opens back to it", async () => {
    const planted = {
      api_key: `planted-key-${randomBytes(16).toString("hex")}`,
      api_secret: `planted-secret-${randomBytes(24).toString("hex")}`,
      passphrase: `planted-pass-${randomBytes(16).toString("hex")}`,
    };
    dataDir = await copyOfTemplate();
    const database = await openDatabase({ kind: "pglite", dataDir });
    const t = await createTestApp(database);
    try {
      const { answers, agentId } = await plant(t, planted);
      expectAbsent(answers.join("\n"), planted, "an HTTP answer");
      expectAbsent(t.logs.join("\n"), planted, "the logs");
      expect(t.logs.length).toBeGreaterThan(5);
      expectAbsent(await allRowsAsText(database), planted, "a database row");
      await expectSealedRoundTrip(database, t.app.services.vault, agentId, planted);
      await database.db.execute(sql`checkpoint`);
    } finally {
      await t.app.stop();
      await database.close();
    }
    const files = filesUnder(dataDir);
    expect(files.length).toBeGreaterThan(100);
    expect(files.some((f) => f.includes("pg_wal"))).toBe(true);
    // Sanity: the scan does find what is there (the key hint is stored in clear).
    const all = files.map((f) => readFileSync(f));
    expect(all.some((b) => b.includes(Buffer.from(`…${planted.api_key.slice(-4)}`)))).toBe(true);
    for (let i = 0; i < files.length; i++) expectAbsent(all[i], planted, files[i]);
  });
});

if (postgresUrl) {
  describe("planted secret [postgres rows]", () => {
    test("appears in no answer, log line or row of any table; the stored ciphertext opens back to it", async () => {
      const planted = {
        api_key: `planted-key-${randomBytes(16).toString("hex")}`,
        api_secret: `planted-secret-${randomBytes(24).toString("hex")}`,
        passphrase: `planted-pass-${randomBytes(16).toString("hex")}`,
      };
      const database = await sharedPostgres();
      const t = await createTestApp(database);
      try {
        const { answers, agentId } = await plant(t, planted);
        expectAbsent(answers.join("\n"), planted, "an HTTP answer");
        expectAbsent(t.logs.join("\n"), planted, "the logs");
        const rows = await allRowsAsText(database);
        expect(rows).toContain(agentId);
        expectAbsent(rows, planted, "a database row");
        await expectSealedRoundTrip(database, t.app.services.vault, agentId, planted);
      } finally {
        await t.app.stop();
      }
    });
  });
}
