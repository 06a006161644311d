/**
 * Persistence across a restart: everything the foundation stores (orgs, API
 * keys, agents with their limits and breaker, idempotency records) is still
 * there when the service opens the same data again, and migrations are not
 * applied twice. On PGlite (same DATA_DIR) and, when TEST_DATABASE_URL is set,
 * on PostgreSQL (same schema, new connections).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { sql } from "drizzle-orm";
import { type Database, openDatabase, type OpenOptions } from "../../src/db/database.ts";
import { runMigrations } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations.generated.ts";
import { createTestApp, TEST_DEFAULT_LIMITS } from "../support/app.ts";
import { copyOfTemplate, postgresUrl, sharedPostgres } from "../support/databases.ts";

const WALLET = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const SIGNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

async function migrationRows(database: Database): Promise<{ tag: string; applied_at: string }[]> {
  const res = (await database.db.execute(sql`select tag, applied_at::text as applied_at from _migrations order by tag`)) as unknown as
    | { rows: { tag: string; applied_at: string }[] }
    | { tag: string; applied_at: string }[];
  const rows = Array.isArray(res) ? res : res.rows;
  return rows.map((r) => ({ tag: r.tag, applied_at: String(r.applied_at) }));
}

/** Runs the whole restart scenario against `open()`, which opens the same data each time. */
async function restartScenario(open: () => Promise<Database>): Promise<void> {
  // ---- first life
  const db1 = await open();
  const migrationsBefore = await migrationRows(db1);
  expect(migrationsBefore.map((r) => r.tag)).toEqual(migrations.map((m) => m.tag).sort());
  const t1 = await createTestApp(db1);
  const { orgId, key } = await t1.newOrg("restart org");
  const created = await t1.call("POST", "/v1/agents", {
    key,
    body: { name: "survivor", wallet_address: WALLET, signer_address: SIGNER, signature_type: 2 },
    headers: { "idempotency-key": "restart-create" },
  });
  expect(created.status).toBe(201);
  const agentId: string = created.body.id;
  const patched = await t1.call("PATCH", `/v1/agents/${agentId}/limits`, {
    key,
    body: { max_order_usdc: 42.5, daily_volume_usdc: 300, market_deny: ["777"], breaker_cooldown_s: 90 },
  });
  expect(patched.status).toBe(200);
  const tripped = await t1.call("POST", `/v1/agents/${agentId}/breaker`, { key });
  expect(tripped.status).toBe(200);
  expect(tripped.body.breaker.reason).toBe("manual");
  const scoped = await t1.call("POST", "/v1/api-keys", { key, body: { name: "scoped", agent_id: agentId } });
  expect(scoped.status).toBe(201);
  const revoked = await t1.call("POST", "/v1/api-keys", { key, body: { name: "revoked" } });
  expect(revoked.status).toBe(201);
  expect((await t1.call("DELETE", `/v1/api-keys/${revoked.body.id}`, { key })).status).toBe(204);
  const before = await t1.call("GET", `/v1/agents/${agentId}`, { key });
  expect(before.status).toBe(200);
  const keysBefore = await t1.call("GET", "/v1/api-keys", { key });
  await t1.app.stop();
  await db1.close();

  // ---- second life: a new process would open the same data and build a new app
  const db2 = await open();
  try {
    const t2 = await createTestApp(db2);
    try {
      // No migration ran again: the same rows, applied at the same moments.
      expect(await migrationRows(db2)).toEqual(migrationsBefore);
      expect(migrationsBefore.length).toBe(migrations.length);
      expect(await runMigrations(db2.db)).toEqual([]);
      expect(await migrationRows(db2)).toEqual(migrationsBefore);

      // The organization's key still authenticates, and the agent is all there.
      const after = await t2.call("GET", `/v1/agents/${agentId}`, { key });
      expect(after.status).toBe(200);
      expect(after.body).toEqual({ ...before.body, daily_volume: after.body.daily_volume });
      expect(after.body.daily_volume.used_usdc).toBe(0);
      expect(after.body.daily_volume.limit_usdc).toBe(300);
      expect(after.body.org_id).toBe(orgId);
      expect(after.body.name).toBe("survivor");
      expect(after.body.signer_address.toLowerCase()).toBe(SIGNER.toLowerCase());
      expect(after.body.signature_type).toBe(2);
      expect(after.body.limits).toEqual({
        ...TEST_DEFAULT_LIMITS,
        max_order_usdc: 42.5,
        daily_volume_usdc: 300,
        market_deny: ["777"],
        breaker_cooldown_s: 90,
      });
      expect(after.body.breaker).toEqual(tripped.body.breaker);
      expect(after.body.breaker.state).toBe("tripped");
      expect(after.body.breaker.reason).toBe("manual");

      // Keys: the list is unchanged, the scoped key is still scoped, the revoked one still refused.
      const keysAfter = await t2.call("GET", "/v1/api-keys", { key });
      // A key's last use moves on with each new process's first request; the rest is unchanged.
      const withoutUse = (page: any) => page.data.map(({ last_used_at, ...k }: any) => k);
      expect(withoutUse(keysAfter.body)).toEqual(withoutUse(keysBefore.body));
      expect(keysAfter.body.next_cursor).toBe(keysBefore.body.next_cursor);
      const viaScoped = await t2.call("GET", "/v1/agents", { key: scoped.body.key });
      expect(viaScoped.status).toBe(200);
      expect(viaScoped.body.data.map((a: any) => a.id)).toEqual([agentId]);
      expect((await t2.call("POST", "/v1/api-keys", { key: scoped.body.key, body: {} })).status).toBe(403);
      expect((await t2.call("GET", "/v1/agents", { key: revoked.body.key })).status).toBe(401);

      // The Idempotency-Key record survived: the first answer is replayed, no second agent.
      const replay = await t2.call("POST", "/v1/agents", {
        key,
        body: { name: "survivor", wallet_address: WALLET, signer_address: SIGNER, signature_type: 2 },
        headers: { "idempotency-key": "restart-create" },
      });
      expect(replay.status).toBe(201);
      expect(replay.text).toBe(created.text);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect((await t2.call("GET", "/v1/agents", { key })).body.data.length).toBe(1);

      // The breaker state is live, not only displayed: resume works and persists.
      const resumed = await t2.call("POST", `/v1/agents/${agentId}/resume`, { key });
      expect(resumed.body.breaker.state).toBe("closed");
    } finally {
      await t2.app.stop();
    }
  } finally {
    await db2.close();
  }

  // ---- third life: the resume from the second one was stored too.
  const db3 = await open();
  try {
    const t3 = await createTestApp(db3);
    try {
      const again = await t3.call("GET", `/v1/agents/${agentId}`, { key });
      expect(again.body.breaker).toMatchObject({ state: "closed", reason: null });
      expect(again.body.limits.max_order_usdc).toBe(42.5);
      expect(await migrationRows(db3)).toEqual(migrationsBefore);
    } finally {
      await t3.app.stop();
    }
  } finally {
    await db3.close();
  }
}

describe("restart on the same DATA_DIR [pglite]", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("orgs, keys, agents, limits, breaker and idempotency records survive; migrations run once", async () => {
    const dataDir = await copyOfTemplate();
    dirs.push(dataDir);
    const opts: OpenOptions = { kind: "pglite", dataDir };
    await restartScenario(() => openDatabase(opts));
  });
});

if (postgresUrl) {
  describe("restart against the same schema [postgres]", () => {
    test("orgs, keys, agents, limits, breaker and idempotency records survive; migrations run once", async () => {
      // The shared schema, emptied and migrated once per run; each life opens its own connections.
      await sharedPostgres();
      const url = postgresUrl!;
      await restartScenario(() => openDatabase({ kind: "postgres", url, max: 4 }));
    });
  });
}
