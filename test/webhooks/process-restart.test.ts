/**
 * The real service process killed (SIGKILL) in the middle of webhook deliveries and started again on
 * the same database: delivery resumes from the cursor stored in the database, every event reaches the
 * receiver (which verifies each signature), in order, and a repeat is only ever of the message that
 * was under way (the same webhook-id). On PGlite (a temporary DATA_DIR) and, with TEST_DATABASE_URL,
 * on a PostgreSQL database of its own.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { ownPostgresDatabase } from "../support/own-postgres-database.ts";
import { ADMIN_TOKEN, startService, type ServiceProcess } from "../support/service-process.ts";
import { DEM_YES } from "../support/payload.ts";
import { startReceiver } from "./receiver.ts";

const SEAL = createHash("sha256").update("webhook restart test seal key").digest("base64");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function api(s: ServiceProcess, method: string, path: string, key: string | null, body?: unknown): Promise<any> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key) headers["x-api-key"] = key;
  else headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  const res = await fetch(`${s.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

function scenario(name: string, env: () => Promise<Record<string, string> | null>) {
  test(`${name}: SIGKILL mid-delivery, restart, every event delivered in order`, async () => {
    const extra = await env();
    if (!extra) return; // PostgreSQL only with TEST_DATABASE_URL
    const receiver = startReceiver();
    const settings = { ...extra, SEAL_SECRET_KEY: SEAL, WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_RETRY_SCHEDULE_MS: "100,200,300,500,1000,1000,1000" };
    let service = await startService(settings, 60_000);
    try {
      const org = await api(service, "POST", "/v1/orgs", null, { name: "webhook restart" });
      const key = org.api_key.key;
      const agent = await api(service, "POST", "/v1/agents", key, { wallet_address: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" });
      const hook = await api(service, "POST", "/v1/webhooks", key, { url: receiver.url, event_types: ["order"] });
      receiver.secret = hook.secret;
      receiver.delayMs = 150; // slow answers: the kill lands while one is under way
      const placed: string[] = [];
      for (let i = 0; i < 12; i++) {
        const answer = await api(service, "POST", "/v1/orders/intent", key, { agent_id: agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5 + i, price: 0.5 });
        placed.push(answer.order_id);
      }
      await receiver.until((r) => r.distinct().length >= 3, "the first deliveries", 30_000);
      service.signal("SIGKILL");
      await service.exited;
      const atKill = receiver.distinct().length;
      expect(atKill).toBeLessThan(placed.length);

      receiver.delayMs = 0;
      service = await startService(settings, 60_000);
      await receiver.until((r) => r.distinct().length >= placed.length, "every order event after the restart", 30_000);
      expect(receiver.rejected).toEqual([]);
      const ids = receiver.received.map((m) => m.body.id as number);
      for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThanOrEqual(ids[i - 1]);
      expect(receiver.distinct().map((m) => m.body.data.order.id)).toEqual(placed);
      for (const m of receiver.received) expect(m.webhookId).toBe(`evt_${m.body.id}`);
      // Repeats (at least once) only of the message under way at the kill.
      expect(receiver.received.length - receiver.distinct().length).toBeLessThanOrEqual(1);
      // The cursor is written right after the last answer.
      const last = receiver.distinct().at(-1)!.body.id;
      let view: any;
      for (let i = 0; i < 100; i++) {
        view = await api(service, "GET", `/v1/webhooks/${hook.id}`, key);
        if (view.last_event_id >= last) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(view).toMatchObject({ status: "enabled", attempts: 0 });
      expect(view.last_event_id).toBe(last);
    } finally {
      await service.stop();
      receiver.close();
    }
  }, 180_000);
}

describe("webhook delivery across a crash of the real process", () => {
  scenario("pglite", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "brokerage-webhooks-"));
    dirs.push(dataDir);
    return { DATA_DIR: dataDir };
  });
  scenario("postgres", async () => {
    const databaseUrl = await ownPostgresDatabase("restart");
    if (!databaseUrl) return null;
    const dataDir = mkdtempSync(join(tmpdir(), "brokerage-webhooks-"));
    dirs.push(dataDir);
    return { DATABASE_URL: databaseUrl, DATA_DIR: dataDir };
  });
});
