/**
 * Set-up shared by the end-to-end suites of the venue's truth through the real service process
 * (`bun src/main.ts`, VENUE=clob against the venue simulator, VENUE_WS_URL derived from VENUE_URL):
 * wallets and the official client (@polymarket/clob-client-v2) as owner and counterparty, agents with
 * their venue credentials stored through the service, polling helpers.
 */
import { expect } from "bun:test";
import { rmSync } from "node:fs";
import { type ApiKeyCreds, ClobClient, OrderType, Side } from "@polymarket/clob-client-v2";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import markets from "../../fixtures/markets.json" with { type: "json" };
import type { VenueSim } from "../../src/venues/sim/sim-server.ts";
import { copyOfTemplate } from "../support/databases.ts";
import { officialSigner } from "../support/official-client.ts";
import { ownPostgresDatabase } from "../support/own-postgres-database.ts";
import { ADMIN_TOKEN, type ServiceProcess, startService } from "../support/service-process.ts";

/** The first plain 0.01-tick market of fixtures/markets.json (Yes: bids 0.48, asks 0.50). */
export const MARKET = (markets as any[]).find((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
export const TOKEN: string = MARKET.tokens[0].token_id;
export const SEAL = Buffer.alloc(32, 41).toString("base64");
export const OPEN_LIMITS = {
  duplicate_window_s: 0,
  max_orders_per_minute: 100_000,
  max_open_orders: 1000,
  capital_usdc: 1_000_000,
  max_market_exposure_pct: 1,
  kelly_fallback_pct: 1,
  book_max_age_s: 3600,
  max_order_usdc: 1000,
  daily_volume_usdc: 100_000,
};

export type DbKind = "pglite" | "postgres";
/** The database kinds to run on: PGlite always, PostgreSQL with TEST_DATABASE_URL. */
export const KINDS: DbKind[] = process.env.TEST_DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];

/** Where a service keeps its state: a DATA_DIR (also for PostgreSQL: the seal key is in the env) and, on PostgreSQL, its own database. */
export interface ServiceHome {
  env: Record<string, string>;
  cleanup(): void;
}

export async function serviceHome(kind: DbKind, suffix: string): Promise<ServiceHome> {
  const dataDir = await copyOfTemplate();
  const env: Record<string, string> = { DATA_DIR: dataDir, SEAL_SECRET_KEY: SEAL };
  if (kind === "postgres") env.DATABASE_URL = (await ownPostgresDatabase(suffix))!;
  return { env, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
}

export function startClobService(sim: VenueSim, home: ServiceHome, extra: Record<string, string> = {}): Promise<ServiceProcess> {
  return startService({ VENUE: "clob", VENUE_URL: sim.url, VENUE_TIMEOUT_MS: "3000", LOG_LEVEL: "info", ...home.env, ...extra }, 60_000);
}

export async function call(base: string, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { "content-type": "application/json", ...(key ? { "x-api-key": key } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

export async function newOrg(base: string, name: string): Promise<string> {
  const org = await call(base, "", "POST", "/v1/orgs", { name }, { authorization: `Bearer ${ADMIN_TOKEN}` });
  expect(org.status).toBe(201);
  return org.body.api_key.key as string;
}

export interface Trader {
  address: string;
  client: ClobClient;
  creds: ApiKeyCreds;
}

/** A wallet's official client against the simulator, with its L2 credentials created over L1. */
export async function traderOf(sim: VenueSim, pk: Hex): Promise<Trader> {
  const account = privateKeyToAccount(pk);
  const creds = await new ClobClient({ host: sim.url, chain: 137, signer: officialSigner(account) }).createOrDeriveApiKey();
  return { address: account.address, creds, client: new ClobClient({ host: sim.url, chain: 137, signer: officialSigner(account), creds, throwOnError: true }) };
}

/** A delegated agent of `owner`'s wallet: its venue credentials stored through the service. */
export async function delegatedAgent(base: string, key: string, owner: Trader, limits: Record<string, unknown> = {}): Promise<string> {
  const r = await call(base, key, "POST", "/v1/agents", { wallet_address: owner.address, limits: { ...OPEN_LIMITS, ...limits } });
  expect(r.status).toBe(201);
  const stored = await call(base, key, "POST", `/v1/agents/${r.body.id}/creds`, {
    api_key: owner.creds.key,
    api_secret: owner.creds.secret,
    passphrase: owner.creds.passphrase,
    scopes: ["order:place", "order:cancel"],
  });
  expect(stored.status).toBe(200);
  expect(stored.body.mode).toBe("delegated");
  return r.body.id as string;
}

/** A counterparty's FAK sell through the official client; when the venue answered it. */
export async function sells(who: Trader, price: number, size: number): Promise<number> {
  const order = await who.client.createOrder({ tokenID: TOKEN, price, size, side: Side.SELL });
  const r: any = await who.client.postOrder(order, OrderType.FAK);
  expect(r.success).toBe(true);
  return Date.now();
}

export const simStats = async (sim: VenueSim): Promise<Record<string, number>> =>
  ((await (await fetch(`${sim.url}/_sim/stats`)).json()) as { requests: Record<string, number> }).requests;
export const simPost = (sim: VenueSim, path: string, body: unknown) =>
  fetch(`${sim.url}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

export async function until<T>(what: string, get: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 5000, every = 20): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await get();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${String(last)})`);
    await Bun.sleep(every);
  }
}

/**
 * Waits until the service follows the credential set on the user channel: a new `/ws/user` upgrade
 * and then the REST catch-up's `GET /data/orders` (it runs once subscribed).
 */
export async function untilFollowed(sim: VenueSim, before: Record<string, number>, ms = 10_000): Promise<void> {
  await until(
    "the user channel's subscription and catch-up",
    async () => {
      const s = await simStats(sim);
      return (s["GET /ws/user"] ?? 0) > (before["GET /ws/user"] ?? 0) && (s["GET /data/orders"] ?? 0) > (before["GET /data/orders"] ?? 0);
    },
    ms,
  );
}

/** The events of an SSE stream of the service (replayed from `after=0`) until `pick` finds one. */
export async function eventMatching(base: string, key: string, agentId: string, pick: (e: any) => boolean, ms = 5000): Promise<any> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), ms);
  try {
    const res = await fetch(`${base}/v1/events?agent_id=${agentId}&after=0`, { headers: { "x-api-key": key }, signal: ctl.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the event stream ended");
      buf += decoder.decode(value, { stream: true });
      let sep: number;
      while ((sep = buf.indexOf("\n\n")) >= 0) {
        const frame = buf.slice(0, sep);
        buf = buf.slice(sep + 2);
        const data = frame
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trim())
          .join("\n");
        if (!data) continue;
        const e = JSON.parse(data);
        if (pick(e)) return e;
      }
    }
  } finally {
    clearTimeout(timer);
    ctl.abort();
  }
}
