/**
 * Credentials confirmed by a real CLOB-format venue: the app runs on the ClobVenue adapter against
 * the venue simulator over HTTP, which verifies the L2 HMAC signature of GET /auth/api-keys for the
 * credentials registered with it (CONTRACT 8, 11.2, 11.3). On PGlite and, when TEST_DATABASE_URL
 * is set, on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import type { Database } from "../../src/db/database.ts";
import { credentials } from "../../src/db/schema.ts";
import { ClobVenue } from "../../src/venues/clob/clob-venue.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { createTestApp, type TestApp, type TestResponse } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";

const SIGNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const OTHER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

let sim: VenueSim;
beforeAll(() => {
  sim = startVenueSim({ port: 0, hostname: "127.0.0.1" });
});
afterAll(async () => {
  await sim?.stop();
});

/** Polymarket-shaped credentials: a UUID-like key, a base64 secret, a hex passphrase. */
function newCreds() {
  return {
    api_key: crypto.randomUUID(),
    api_secret: randomBytes(32).toString("base64url"),
    passphrase: randomBytes(32).toString("hex"),
  };
}
type Creds = ReturnType<typeof newCreds>;

async function register(c: Creds, address: string, scopes = ["order:place", "order:cancel"]) {
  const res = await fetch(`${sim.url}/_sim/credentials`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...c, address, scopes }),
  });
  expect(res.status).toBe(201);
}

async function faults(f: Record<string, number>) {
  const res = await fetch(`${sim.url}/_sim/faults`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(f) });
  expect(res.status).toBe(200);
}

function expectProblem(res: TestResponse, status: number, code: string, secrets: string[]) {
  if (res.status !== status) throw new Error(`expected ${status} ${code}, got ${res.status}: ${res.text}`);
  expect(res.headers.get("content-type")).toStartWith("application/problem+json");
  expect(res.body.code).toBe(code);
  for (const s of secrets) expect(res.text).not.toContain(s);
}

describeEachDatabase("credentials confirmed by the venue simulator", (_kind, getDatabase) => {
  let database: Database;
  let t: TestApp;
  const submitted: string[] = [];

  beforeAll(async () => {
    database = await getDatabase();
    t = await createTestApp(database, { venue: new ClobVenue({ baseUrl: sim.url, timeoutMs: 2000 }), config: { venueTimeoutMs: 1500 } });
  });
  afterAll(async () => {
    await t.app.stop();
    await fetch(`${sim.url}/_sim/reset`, { method: "POST" });
  });

  const submit = (key: string, agentId: string, c: Partial<Creds>, scopes = ["order:place", "order:cancel"]) => {
    submitted.push(...Object.values(c));
    return t.call("POST", `/v1/agents/${agentId}/creds`, { key, body: { ...c, scopes } });
  };
  const rows = (agentId: string) => database.db.select().from(credentials).where(eq(credentials.agentId, agentId));
  async function expectNothingStored(key: string, agentId: string) {
    expect(await rows(agentId)).toHaveLength(0);
    const got = await t.call("GET", `/v1/agents/${agentId}`, { key });
    expect(got.body.mode).toBe("payload");
    expect(got.body.credentials).toBeNull();
  }

  test("credentials registered at the venue for the agent's signer are confirmed: 200 delegated", async () => {
    const { key, agent } = await t.newAgent({ body: { signer_address: SIGNER } });
    const c = newCreds();
    await register(c, SIGNER);
    const res = await submit(key, agent.id, c);
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe("delegated");
    expect(res.body.credentials.scopes).toEqual(["order:place", "order:cancel"]);
    expect(res.body.credentials.key_hint).toBe(`…${c.api_key.slice(-4)}`);
    for (const s of Object.values(c)) expect(res.text).not.toContain(s);
    expect(await rows(agent.id)).toHaveLength(1);

    // The sealed credentials, opened for one call, still authenticate at the venue.
    const again = await t.app.services.credentials.withAgentCredentials(agent.id, (creds) => t.app.services.venue.confirmCredentials(creds));
    expect(again).toBe(true);
  });

  test("an unregistered key, a wrong secret, a wrong passphrase or another address: 400 invalid_credentials, nothing stored", async () => {
    const { key, agent } = await t.newAgent({ body: { signer_address: SIGNER } });
    const good = newCreds();
    await register(good, SIGNER);
    const elsewhere = newCreds();
    await register(elsewhere, OTHER); // registered, but for another address than the agent's signer
    const attempts: Partial<Creds>[] = [
      newCreds(),
      { ...good, api_secret: randomBytes(32).toString("base64url") },
      { ...good, passphrase: randomBytes(32).toString("hex") },
      { api_key: good.api_key, api_secret: good.api_secret }, // passphrase missing
      elsewhere,
    ];
    for (const c of attempts) {
      expectProblem(await submit(key, agent.id, c), 400, "invalid_credentials", submitted);
    }
    await expectNothingStored(key, agent.id);
    // The right ones still work afterwards.
    expect((await submit(key, agent.id, good)).status).toBe(200);
  });

  test("a venue slower than the timeout, or unreachable: 503 venue_unavailable, nothing stored", async () => {
    const { key, agent } = await t.newAgent({ body: { signer_address: SIGNER } });
    const c = newCreds();
    await register(c, SIGNER);
    await faults({ latency_ms: 3000 });
    try {
      const started = performance.now();
      const res = await submit(key, agent.id, c);
      expect(performance.now() - started).toBeLessThan(2800);
      expectProblem(res, 503, "venue_unavailable", submitted);
    } finally {
      await faults({ latency_ms: 0 });
    }
    await expectNothingStored(key, agent.id);

    const down = await createTestApp(database, { venue: new ClobVenue({ baseUrl: "http://127.0.0.1:9", timeoutMs: 1000 }) });
    try {
      const { key: k2, agent: a2 } = await down.newAgent({ body: { signer_address: SIGNER } });
      submitted.push(...Object.values(c));
      const res = await down.call("POST", `/v1/agents/${a2.id}/creds`, { key: k2, body: { ...c, scopes: ["order:place"] } });
      expectProblem(res, 503, "venue_unavailable", submitted);
      expect(await rows(a2.id)).toHaveLength(0);
      for (const s of submitted) expect(down.logs.join("\n")).not.toContain(s);
    } finally {
      await down.app.stop();
    }
  });

  test("non-ASCII key or passphrase, or a secret that is not base64: 400 invalid_request naming the field, nothing stored, no venue call", async () => {
    const { key, agent } = await t.newAgent({ body: { signer_address: SIGNER } });
    const good = newCreds();
    await register(good, SIGNER);
    const cases: [Partial<Creds>, string][] = [
      [{ ...good, api_key: `${good.api_key}é` }, "/api_key"],
      [{ ...good, api_key: "ключ-🔑" as Creds["api_key"] }, "/api_key"],
      [{ ...good, passphrase: `${good.passphrase}\u00ff` }, "/passphrase"],
      [{ ...good, passphrase: "pass phrase" }, "/passphrase"],
      [{ ...good, api_secret: "not base64!" }, "/api_secret"],
      [{ ...good, api_secret: "abcde" }, "/api_secret"],
      [{ ...good, api_secret: "sëcret" }, "/api_secret"],
      [{ ...good, api_secret: "YWJj=x" }, "/api_secret"],
    ];
    for (const [c, path] of cases) {
      const res = await submit(key, agent.id, c);
      expectProblem(res, 400, "invalid_request", submitted);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
      await expectNothingStored(key, agent.id);
    }
    // Both base64 alphabets, with and without padding, are accepted.
    for (const api_secret of [randomBytes(32).toString("base64"), randomBytes(32).toString("base64url"), "YWJj", "YWI=", "YWI"]) {
      const c = { ...newCreds(), api_secret };
      await register(c, SIGNER);
      const res = await submit(key, agent.id, c);
      expect(res.status).toBe(200);
      expect(res.body.mode).toBe("delegated");
    }
  });

  test("the zero address is never accepted as a wallet or signer: 400, no agent created", async () => {
    const { key } = await t.newOrg();
    const zero = `0x${"0".repeat(40)}`;
    for (const body of [{ wallet_address: zero }, { wallet_address: SIGNER, signer_address: zero }, { wallet_address: zero.toUpperCase().replace("0X", "0x") }]) {
      const res = await t.call("POST", "/v1/agents", { key, body });
      expectProblem(res, 400, "invalid_request", []);
    }
    expect((await t.call("GET", "/v1/agents", { key })).body.data).toHaveLength(0);
    expect((await t.call("POST", "/v1/agents", { key, body: { wallet_address: `0x${"0".repeat(39)}1` } })).status).toBe(201);
  });

  test("no credential reached a log line", () => {
    expect(submitted.length).toBeGreaterThan(10);
    const logs = t.logs.join("\n");
    for (const s of submitted) expect(logs).not.toContain(s);
  });
});
