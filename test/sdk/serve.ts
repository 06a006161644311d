/** Helpers of the SDK and MCP suites: the real service on a loopback port, and a fresh org and client. */
import { BrokerClient } from "../../packages/sdk/src/client.ts";
import type { Database } from "../../src/db/database.ts";
import { ADMIN_TOKEN, createTestApp, type TestApp } from "../support/app.ts";

export interface LiveService {
  t: TestApp;
  url: string;
  stop(): Promise<void>;
}

/** createTestApp served over real HTTP on port 0. */
export async function serveTestApp(database: Database, opts: Parameters<typeof createTestApp>[1] = {}): Promise<LiveService> {
  const t = await createTestApp(database, opts);
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => t.app.handle(req), idleTimeout: 60 });
  return { t, url: `http://127.0.0.1:${server.port}`, stop: async () => void (await server.stop(true)) };
}

/** A new organization (through the SDK's admin route) and a client on its key. */
export async function newOrgClient(url: string, o: { fetch?: typeof fetch; retries?: number } = {}): Promise<{ client: BrokerClient; key: string; orgId: string }> {
  const admin = new BrokerClient({ baseUrl: url, adminToken: ADMIN_TOKEN });
  const org = await admin.createOrg({ name: "sdk test org" });
  const client = new BrokerClient({ baseUrl: url, apiKey: org.api_key.key, fetch: o.fetch, retry: { retries: o.retries ?? 4, baseDelayMs: 20 } });
  return { client, key: org.api_key.key, orgId: org.org.id };
}
