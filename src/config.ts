/**
 * The one module that reads the environment (README.md#configuration). Values are
 * validated with TypeBox; a bad value stops start-up with a message naming the
 * variable. Nothing else in the service reads process.env.
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { EXCHANGE_V2, EXCHANGE_V3, NEG_RISK_EXCHANGE_V2 } from "./eip712/order-typed-data.ts";

const Bool = T.Union([T.Literal("true"), T.Literal("false"), T.Literal("1"), T.Literal("0")]);
const Url = T.String({ pattern: "^https?://\\S+$" });
const PgUrl = T.String({ pattern: "^postgres(ql)?://\\S+$" });
const Int = (min: number, max: number) => T.String({ pattern: "^[0-9]+$", "x-min": min, "x-max": max });

/** The variables as text, exactly as the environment gives them. */
export const EnvSchema = T.Object({
  PORT: T.Optional(Int(0, 65535)),
  HOST: T.Optional(T.String({ minLength: 1 })),
  DATABASE_URL: T.Optional(PgUrl),
  DATA_DIR: T.Optional(T.String({ minLength: 1 })),
  VENUE: T.Optional(T.Union([T.Literal("paper"), T.Literal("clob")])),
  VENUE_URL: T.Optional(Url),
  VENUE_WS_URL: T.Optional(T.Union([T.Literal("off"), T.String({ pattern: "^wss?://\\S+$" })])),
  VENUE_TIMEOUT_MS: T.Optional(Int(1, 600000)),
  // L2 credentials the service reads orders with when the order's agent has none (payload mode):
  // start-up reconciliation of an order caught between submit-signed and the venue's answer.
  VENUE_READ_API_KEY: T.Optional(T.String({ pattern: "^[\\x21-\\x7e]{1,256}$" })),
  VENUE_READ_API_SECRET: T.Optional(T.String({ pattern: "^[A-Za-z0-9+/_-]+={0,2}$" })),
  VENUE_READ_PASSPHRASE: T.Optional(T.String({ pattern: "^[\\x21-\\x7e]{1,256}$" })),
  VENUE_READ_ADDRESS: T.Optional(T.String({ pattern: "^0x[0-9a-fA-F]{40}$" })),
  PAPER_MARKETS: T.Optional(T.String({ minLength: 1 })),
  BUILDER_CODE: T.Optional(T.String({ pattern: "^0x[0-9a-fA-F]{64}$" })),
  CHAIN_ID: T.Optional(T.Union([T.Literal("137"), T.Literal("80002")])),
  SEAL_KEY_FILE: T.Optional(T.String({ minLength: 1 })),
  SEAL_SECRET_KEY: T.Optional(T.String({ pattern: "^[A-Za-z0-9+/_-]{42,44}={0,2}$" })),
  ADMIN_TOKEN: T.Optional(T.String({ minLength: 16 })),
  X402_ENABLED: T.Optional(Bool),
  X402_PAY_TO: T.Optional(T.String({ pattern: "^0x[0-9a-fA-F]{40}$" })),
  X402_NETWORK: T.Optional(T.Union([T.Literal("eip155:8453"), T.Literal("eip155:84532")])),
  X402_PRICE_USDC: T.Optional(T.String({ pattern: "^[0-9]+(\\.[0-9]{1,6})?$" })),
  X402_FACILITATOR_URL: T.Optional(Url),
  KILL_DEADLINE_MS: T.Optional(Int(100, 60000)),
  SHUTDOWN_GRACE_MS: T.Optional(Int(100, 600000)),
  KILL_CONCURRENCY: T.Optional(Int(1, 1024)),
  SIGNATURE_TTL_S: T.Optional(Int(5, 86400)),
  APPROVAL_TTL_S: T.Optional(Int(5, 7 * 86400)),
  ACTOR_IDLE_MS: T.Optional(Int(1000, 86400000)),
  ACTOR_MAILBOX_MAX: T.Optional(Int(1, 1000000)),
  EVENTS_RETENTION_H: T.Optional(Int(1, 87600)),
  EVENTS_KEEPALIVE_MS: T.Optional(Int(10, 3600000)),
  RATE_LIMIT_PER_S: T.Optional(Int(0, 1000000)),
  MAX_BODY_BYTES: T.Optional(Int(256, 10485760)),
  // Fills from the chain (src/chain/): off unless CHAIN_RPC_URL is set.
  CHAIN_RPC_URL: T.Optional(Url),
  CHAIN_CONFIRMATIONS: T.Optional(Int(1, 10000)),
  CHAIN_EXCHANGES: T.Optional(T.String({ pattern: "^0x[0-9a-fA-F]{40}(,0x[0-9a-fA-F]{40})*$" })),
  CHAIN_CTF_ADDRESS: T.Optional(T.String({ pattern: "^0x[0-9a-fA-F]{40}$" })),
  CHAIN_POLL_MS: T.Optional(Int(50, 600000)),
  CHAIN_START_BLOCK: T.Optional(T.String({ pattern: "^[0-9]{1,18}$" })),
  LOG_LEVEL: T.Optional(T.Union([T.Literal("debug"), T.Literal("info"), T.Literal("warn"), T.Literal("error")])),
  WEBHOOK_ALLOW_PRIVATE: T.Optional(Bool),
  WEBHOOK_RETRY_SCHEDULE_MS: T.Optional(T.String({ pattern: "^[0-9]{1,9}(,[0-9]{1,9}){0,49}$" })),
  WEBHOOK_TIMEOUT_MS: T.Optional(Int(100, 120000)),
  WEBHOOK_CONCURRENCY: T.Optional(Int(1, 1024)),
  INSTANCE_ID: T.Optional(T.String({ pattern: "^[\\x21-\\x7e]{1,128}$" })),
  LEASE_TTL_MS: T.Optional(Int(200, 60000)),
  LEASE_RENEW_MS: T.Optional(Int(50, 30000)),
  LEASE_WAIT_MS: T.Optional(Int(0, 60000)),
  LEASE_HANDOFF_MS: T.Optional(Int(0, 60000)),
});
export type Env = Static<typeof EnvSchema>;

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | null;
  dataDir: string;
  venue: "paper" | "clob";
  venueUrl: string | null;
  /**
   * VENUE_WS_URL: base of the venue's WebSocket channels (`/ws/market`, `/ws/user` are appended);
   * Polymarket's wss://ws-subscriptions-clob.polymarket.com when VENUE_URL is Polymarket's, else VENUE_URL
   * with ws(s):// (the simulator serves both on its own port); null with VENUE_WS_URL=off or without VENUE_URL.
   */
  venueWsUrl: string | null;
  /** VENUE_READ_*: credentials for reads of orders whose agent has none; null when unset. */
  venueReadCredentials: { api_key: string; api_secret: string; passphrase?: string; address: string } | null;
  venueTimeoutMs: number;
  /** Path of a markets file (docs/architecture.md#the-markets-file), or null for the fixture embedded in the service. */
  paperMarkets: string | null;
  builderCode: `0x${string}`;
  builderCodeDefaulted: boolean;
  chainId: 137 | 80002;
  sealKeyFile: string | null;
  sealSecretKey: string | null;
  adminToken: string | null;
  x402: { enabled: boolean; payTo: string | null; network: "eip155:8453" | "eip155:84532"; priceUsdc: string; facilitatorUrl: string | null };
  killDeadlineMs: number;
  /** How long a SIGTERM waits for in-flight work before the process exits anyway (src/shutdown.ts). */
  shutdownGraceMs: number;
  killConcurrency: number;
  /** How long an unsigned order waits for its signature before it expires. */
  signatureTtlS: number;
  /** How long an order above an agent's approval_threshold_usdc waits for a person before it expires. */
  approvalTtlS: number;
  actorIdleMs: number;
  /** Requests one agent's actor holds at once before it answers 503 (ACTOR_MAILBOX_MAX). */
  actorMailboxMax: number;
  /** Hours the event log keeps events (EVENTS_RETENTION_H, default 72). */
  eventsRetentionH: number;
  /** Interval of the `: keepalive` comment on event streams (EVENTS_KEEPALIVE_MS, default 15 s). */
  eventsKeepaliveMs: number;
  /** Requests per second per API key or paying wallet; 0 turns the limit off. */
  rateLimitPerS: number;
  maxBodyBytes: number;
  /** The chain source (docs/configuration.md (CHAIN_RPC_URL)); `rpcUrl` null: off. */
  chain: ChainConfig;
  logLevel: "debug" | "info" | "warn" | "error";
  /** Webhook delivery (docs/webhooks.md). */
  webhooks: {
    /** WEBHOOK_ALLOW_PRIVATE: endpoints may be on private, loopback or link-local addresses (development, tests). */
    allowPrivate: boolean;
    /** The waits before each retry of a failed delivery; the endpoint is disabled when they are used up. */
    retryScheduleMs: number[];
    /** One delivery's limit, connection to answer. */
    timeoutMs: number;
    /** Endpoints delivered to at once. */
    concurrency: number;
  };
  /** This process's name in the agent lease table (INSTANCE_ID; default host name and pid). */
  instanceId: string;
  /**
   * Agent leases (docs/decisions.md "One actor per agent across instances"): time to live, renewal
   * interval, how long a request waits for another instance to hand an agent over, and how long an
   * owner asked to hand over waits for the agent's in-flight work.
   */
  lease: { ttlMs: number; renewMs: number; waitMs: number; handoffMs: number };
}

export interface ChainConfig {
  /** CHAIN_RPC_URL; null when unset (the chain source is off). */
  rpcUrl: string | null;
  /** CHAIN_CONFIRMATIONS (default 5): blocks, the fill's own included, before a fill counts. */
  confirmations: number;
  /** CHAIN_EXCHANGES (default: CTF Exchange V2, Neg Risk CTF Exchange V2, ExchangeV3 of CHAIN_ID). */
  exchanges: `0x${string}`[];
  /** CHAIN_CTF_ADDRESS (default: Polymarket's Conditional Tokens contract of CHAIN_ID). */
  conditionalTokens: `0x${string}`;
  /** CHAIN_POLL_MS (default 1000): how often the head is read. */
  pollMs: number;
  /** CHAIN_START_BLOCK: where a cursor never stored starts (default: the blocks not yet confirmed at first start). */
  startBlock: bigint | null;
}

/** Polymarket's Conditional Tokens contract (ERC-1155 outcome tokens) per chain id. */
export const CONDITIONAL_TOKENS: Readonly<Record<137 | 80002, `0x${string}`>> = {
  137: "0x4D97DCd97eC945f40cF65F87097ACe5EA0476045",
  80002: "0x69308FB512518e39F9b16112fA8d994F4e2Bf8bB",
};
/**
 * The default waits between webhook retries: seconds at first (a short outage delays events by
 * seconds), then longer, 21.9 hours in all before the endpoint is disabled.
 */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS = [1, 2, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 21600, 28800].map((s) => s * 1000);

export class ConfigError extends Error {
  override name = "ConfigError";
}

const ZERO32 = `0x${"0".repeat(64)}` as const;

/** Reads and validates the configuration; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known = Object.keys(EnvSchema.properties) as (keyof Env)[];
  const picked: Record<string, string> = {};
  for (const k of known) {
    const v = env[k];
    if (v !== undefined && v !== "") picked[k] = v;
  }
  for (const error of Value.Errors(EnvSchema, picked)) {
    const name = error.path.replace(/^\//, "");
    throw new ConfigError(`invalid environment variable ${name}: ${describe(error.schema)}`);
  }
  for (const k of known) {
    const s = (EnvSchema.properties as Record<string, any>)[k];
    const inner = s.anyOf ? null : s;
    if (inner?.["x-min"] !== undefined && picked[k] !== undefined) {
      const n = Number(picked[k]);
      if (n < inner["x-min"] || n > inner["x-max"]) {
        throw new ConfigError(`invalid environment variable ${k}: must be an integer from ${inner["x-min"]} to ${inner["x-max"]}`);
      }
    }
  }
  const e = picked as Env;
  for (const name of ["VENUE_URL", "X402_FACILITATOR_URL", "DATABASE_URL", "CHAIN_RPC_URL"] as const) {
    const value = e[name];
    if (value !== undefined && !parsesAsUrl(value)) throw new ConfigError(`invalid environment variable ${name}: not a valid URL`);
  }
  const venue = e.VENUE ?? "paper";
  if (venue === "clob" && !e.VENUE_URL) throw new ConfigError("invalid environment variable VENUE_URL: required when VENUE=clob");
  const readParts = [e.VENUE_READ_API_KEY, e.VENUE_READ_API_SECRET, e.VENUE_READ_ADDRESS];
  if (readParts.some((v) => v !== undefined) && readParts.some((v) => v === undefined)) {
    throw new ConfigError("invalid environment variable VENUE_READ_API_KEY: VENUE_READ_API_KEY, VENUE_READ_API_SECRET and VENUE_READ_ADDRESS go together");
  }
  if (e.LEASE_TTL_MS && e.LEASE_RENEW_MS && Number(e.LEASE_RENEW_MS) * 2 > Number(e.LEASE_TTL_MS)) {
    throw new ConfigError("invalid environment variable LEASE_RENEW_MS: must be at most half of LEASE_TTL_MS (a lease is renewed at least twice before it lapses)");
  }
  const x402Enabled = e.X402_ENABLED === "true" || e.X402_ENABLED === "1";
  if (x402Enabled && !e.X402_PAY_TO) throw new ConfigError("invalid environment variable X402_PAY_TO: required when X402_ENABLED=true");
  const chainId = e.CHAIN_ID === "80002" ? 80002 : 137;
  return {
    port: e.PORT ? Number(e.PORT) : 8080,
    host: e.HOST ?? "0.0.0.0",
    databaseUrl: e.DATABASE_URL ?? null,
    dataDir: resolve(e.DATA_DIR ?? "./data"),
    venue,
    venueUrl: e.VENUE_URL ?? null,
    venueWsUrl: venueWsUrlOf(e.VENUE_WS_URL, e.VENUE_URL),
    venueReadCredentials: e.VENUE_READ_API_KEY
      ? {
          api_key: e.VENUE_READ_API_KEY,
          api_secret: e.VENUE_READ_API_SECRET!,
          address: e.VENUE_READ_ADDRESS!,
          ...(e.VENUE_READ_PASSPHRASE ? { passphrase: e.VENUE_READ_PASSPHRASE } : {}),
        }
      : null,
    venueTimeoutMs: e.VENUE_TIMEOUT_MS ? Number(e.VENUE_TIMEOUT_MS) : 3000,
    paperMarkets: e.PAPER_MARKETS ? resolve(e.PAPER_MARKETS) : null,
    builderCode: (e.BUILDER_CODE?.toLowerCase() as `0x${string}`) ?? ZERO32,
    builderCodeDefaulted: !e.BUILDER_CODE,
    chainId,
    sealKeyFile: e.SEAL_KEY_FILE ?? null,
    sealSecretKey: e.SEAL_SECRET_KEY ?? null,
    adminToken: e.ADMIN_TOKEN ?? null,
    x402: {
      enabled: x402Enabled,
      payTo: e.X402_PAY_TO ?? null,
      network: e.X402_NETWORK ?? "eip155:84532",
      priceUsdc: e.X402_PRICE_USDC ?? "0.001",
      facilitatorUrl: e.X402_FACILITATOR_URL ?? null,
    },
    killDeadlineMs: e.KILL_DEADLINE_MS ? Number(e.KILL_DEADLINE_MS) : 5000,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS ? Number(e.SHUTDOWN_GRACE_MS) : 25000,
    killConcurrency: e.KILL_CONCURRENCY ? Number(e.KILL_CONCURRENCY) : 64,
    signatureTtlS: e.SIGNATURE_TTL_S ? Number(e.SIGNATURE_TTL_S) : 300,
    approvalTtlS: e.APPROVAL_TTL_S ? Number(e.APPROVAL_TTL_S) : 3600,
    actorIdleMs: e.ACTOR_IDLE_MS ? Number(e.ACTOR_IDLE_MS) : 10 * 60 * 1000,
    actorMailboxMax: e.ACTOR_MAILBOX_MAX ? Number(e.ACTOR_MAILBOX_MAX) : 256,
    eventsRetentionH: e.EVENTS_RETENTION_H ? Number(e.EVENTS_RETENTION_H) : 72,
    eventsKeepaliveMs: e.EVENTS_KEEPALIVE_MS ? Number(e.EVENTS_KEEPALIVE_MS) : 15_000,
    rateLimitPerS: e.RATE_LIMIT_PER_S ? Number(e.RATE_LIMIT_PER_S) : 0,
    maxBodyBytes: e.MAX_BODY_BYTES ? Number(e.MAX_BODY_BYTES) : 64 * 1024,
    chain: {
      rpcUrl: e.CHAIN_RPC_URL ?? null,
      confirmations: e.CHAIN_CONFIRMATIONS ? Number(e.CHAIN_CONFIRMATIONS) : 5,
      exchanges: e.CHAIN_EXCHANGES
        ? [...new Set(e.CHAIN_EXCHANGES.split(",").map((a) => a.toLowerCase() as `0x${string}`))]
        : [EXCHANGE_V2, NEG_RISK_EXCHANGE_V2, EXCHANGE_V3[chainId]!],
      conditionalTokens: (e.CHAIN_CTF_ADDRESS as `0x${string}` | undefined) ?? CONDITIONAL_TOKENS[chainId],
      pollMs: e.CHAIN_POLL_MS ? Number(e.CHAIN_POLL_MS) : 1000,
      startBlock: e.CHAIN_START_BLOCK ? BigInt(e.CHAIN_START_BLOCK) : null,
    },
    logLevel: e.LOG_LEVEL ?? "info",
    webhooks: {
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE === "true" || e.WEBHOOK_ALLOW_PRIVATE === "1",
      retryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE_MS ? e.WEBHOOK_RETRY_SCHEDULE_MS.split(",").map(Number) : DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS ? Number(e.WEBHOOK_TIMEOUT_MS) : 10_000,
      concurrency: e.WEBHOOK_CONCURRENCY ? Number(e.WEBHOOK_CONCURRENCY) : 16,
    },
    instanceId: e.INSTANCE_ID ?? `${hostname()}-${process.pid}`,
    lease: leaseConfig(e),
  };
}

/**
 * Agent lease timings. An owner asked to hand an agent over waits for its venue calls (at most
 * VENUE_TIMEOUT_MS) and a second more; a request waits for that, a lapse and a second more.
 */
function leaseConfig(e: Env): Config["lease"] {
  const ttlMs = e.LEASE_TTL_MS ? Number(e.LEASE_TTL_MS) : 1500;
  const venueTimeoutMs = e.VENUE_TIMEOUT_MS ? Number(e.VENUE_TIMEOUT_MS) : 3000;
  const handoffMs = e.LEASE_HANDOFF_MS ? Number(e.LEASE_HANDOFF_MS) : venueTimeoutMs + 1000;
  return {
    ttlMs,
    renewMs: e.LEASE_RENEW_MS ? Number(e.LEASE_RENEW_MS) : Math.max(50, Math.floor(ttlMs / 3)),
    waitMs: e.LEASE_WAIT_MS ? Number(e.LEASE_WAIT_MS) : handoffMs + ttlMs + 1000,
    handoffMs,
  };
}

/** Whether a URL parses, with its percent-escapes decodable (the PostgreSQL driver decodes them). */
function parsesAsUrl(value: string): boolean {
  try {
    const u = new URL(value);
    for (const part of [u.username, u.password, u.hostname, u.pathname]) decodeURIComponent(part);
    return u.hostname !== "";
  } catch {
    return false;
  }
}

function describe(schema: any): string {
  if (schema.anyOf) return `must be one of ${schema.anyOf.map((s: any) => JSON.stringify(s.const)).join(", ")}`;
  if (schema["x-min"] !== undefined) return `must be an integer from ${schema["x-min"]} to ${schema["x-max"]}`;
  if (schema.pattern) return `does not match the expected format ${schema.pattern}`;
  if (schema.minLength) return "must not be empty";
  return "is not valid";
}

/** Polymarket's WebSocket host, used when VENUE_URL is Polymarket's CLOB. */
export const POLYMARKET_WS_URL = "wss://ws-subscriptions-clob.polymarket.com";

/** VENUE_WS_URL as given (without a trailing /ws/market or /ws/user), else derived from VENUE_URL. */
export function venueWsUrlOf(wsUrl: string | undefined, venueUrl: string | undefined): string | null {
  if (wsUrl === "off") return null;
  if (wsUrl) return wsUrl.replace(/\/+$/, "").replace(/\/ws\/(market|user)$/, "");
  if (!venueUrl) return null;
  const u = new URL(venueUrl);
  if (u.hostname === "clob.polymarket.com") return POLYMARKET_WS_URL;
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  return u.toString().replace(/\/+$/, "");
}
