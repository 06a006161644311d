/** Builds the real service on a test database and the paper venue, and talks to it through app.handle. */
import type { PositionBalanceReader } from "../../actors/ports.ts";
import { type App, createApp, createServices } from "../../src/app.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { createHash } from "node:crypto";
import { CredentialVault } from "../../src/crypto/credential-vault.ts";
import { loadOrCreateSealKeyPair } from "../../src/crypto/seal-key-pair.ts";
import type { Database } from "../../src/db/database.ts";
import type { Clock } from "../../src/domain/clock.ts";
import { createLogger, type LogLevel } from "../../src/observability/logger.ts";
import { createPaperVenue } from "../../src/venues/create-venue.ts";
import type { Venue } from "../../src/venues/venue.ts";
import { DEFAULT_LIMITS, type Limits } from "../../src/risk/limits.ts";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

/**
 * The limits new agents of a test app start with: the service defaults with the runaway guards
 * opened wide (no duplicate window, no practical rate or open-order cap), because the suites of
 * other features repeat the same intent many times a second. The guard suites (test/guards/) run
 * on the real defaults (`defaultLimits: DEFAULT_LIMITS`).
 */
export const TEST_DEFAULT_LIMITS: Limits = Object.freeze({
  ...DEFAULT_LIMITS,
  duplicate_window_s: 0,
  max_orders_per_minute: 100_000,
  max_open_orders: 100_000,
}) as Limits;
/**
 * The master seal key of test apps (base64 of 32 fixed bytes), so nothing is written into ./data and
 * an app reopened on the same database (restart tests) opens the credentials sealed before.
 */
export const TEST_SEAL_SECRET_KEY = createHash("sha256").update("agent-brokerage test seal key").digest("base64");

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
  opts: {
    env?: Record<string, string>;
    venue?: Venue;
    logLevel?: LogLevel;
    config?: Partial<Config>;
    vault?: CredentialVault;
    /** Limits of new agents (default TEST_DEFAULT_LIMITS). */
    defaultLimits?: Limits;
    clock?: Clock;
    /** The wallets' on-chain balances of outcome tokens (the chain source's read); absent: positions from fills alone. */
    balances?: PositionBalanceReader;
  } = {},
): Promise<TestApp> {
  const config = { ...loadConfig({ ADMIN_TOKEN, LOG_LEVEL: "info", ...opts.env }), ...opts.config };
  const logs: string[] = [];
  const logger = createLogger({ level: opts.logLevel ?? "debug", sink: (line) => logs.push(line) });
  // The paper venue on PAPER_MARKETS when the test sets it, else on the embedded fixture.
  const venue = opts.venue ?? createPaperVenue(config);
  // The vault as main.ts builds it when the test configures SEAL_SECRET_KEY, SEAL_KEY_FILE or DATA_DIR; else on the test key.
  const ownKey = !!(opts.env?.SEAL_SECRET_KEY || opts.env?.SEAL_KEY_FILE || opts.env?.DATA_DIR || opts.config?.sealSecretKey || opts.config?.sealKeyFile);
  const vault =
    opts.vault ??
    new CredentialVault(
      await loadOrCreateSealKeyPair(
        ownKey
          ? { dataDir: config.dataDir, keyFile: config.sealKeyFile, secretKeyB64: config.sealSecretKey }
          : { dataDir: config.dataDir, secretKeyB64: TEST_SEAL_SECRET_KEY },
      ),
    );
  const app = createApp(createServices({ config, logger, database, venue, vault, clock: opts.clock, defaultLimits: opts.defaultLimits ?? TEST_DEFAULT_LIMITS, balances: opts.balances }));

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
