/** Builds the real service on a test database and the paper venue, and talks to it through app.handle. */
import { type App, createApp, createServices } from "../../src/app.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import type { Database } from "../../src/db/database.ts";
import { createLogger, type LogLevel } from "../../src/observability/logger.ts";
import { PaperVenue } from "../../src/venues/paper/paper-venue.ts";
import type { Venue } from "../../src/venues/venue.ts";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

export interface TestApp {
  app: App;
  logs: string[];
  call(method: string, path: string, opts?: { key?: string; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<TestResponse>;
  /** A new organization and its first API key. */
  newOrg(name?: string): Promise<{ orgId: string; key: string }>;
  /** A new agent in a new organization (or the given one). */
  newAgent(opts?: { key?: string; body?: Record<string, unknown> }): Promise<{ key: string; agent: any }>;
}

export interface TestResponse {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

export async function createTestApp(
  database: Database,
  opts: { env?: Record<string, string>; venue?: Venue; logLevel?: LogLevel; config?: Partial<Config> } = {},
): Promise<TestApp> {
  const config = { ...loadConfig({ ADMIN_TOKEN, LOG_LEVEL: "info", ...opts.env }), ...opts.config };
  const logs: string[] = [];
  const logger = createLogger({ level: opts.logLevel ?? "debug", sink: (line) => logs.push(line) });
  const venue = opts.venue ?? (await PaperVenue.fromFile(config.paperMarkets));
  const app = createApp(createServices({ config, logger, database, venue }));

  const call: TestApp["call"] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.key) headers["x-api-key"] = o.key;
    let body: string | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined && !headers["content-type"]) headers["content-type"] = "application/json";
    const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await res.text();
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed, text, headers: res.headers };
  };

  const newOrg: TestApp["newOrg"] = async (name = "test org") => {
    const res = await call("POST", "/v1/orgs", { body: { name }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    if (res.status !== 201) throw new Error(`org creation failed: ${res.status} ${res.text}`);
    return { orgId: res.body.org.id, key: res.body.api_key.key };
  };

  const newAgent: TestApp["newAgent"] = async (o = {}) => {
    const key = o.key ?? (await newOrg()).key;
    const res = await call("POST", "/v1/agents", {
      key,
      body: { wallet_address: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", ...(o.body ?? {}) },
    });
    if (res.status !== 201) throw new Error(`agent creation failed: ${res.status} ${res.text}`);
    return { key, agent: res.body };
  };

  return { app, logs, call, newOrg, newAgent };
}
