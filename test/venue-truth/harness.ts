/**
 * The venue's truth end to end (issue #22): the real service process (`bun src/main.ts`, VENUE=clob)
 * against the venue simulator settling every match on Anvil (`chain`), with the chain source on
 * (CHAIN_RPC_URL); agents trade through the service, counterparties through Polymarket's official
 * client. The helpers of the suites in this folder.
 */
import { expect } from "bun:test";
import { rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { type ApiKeyCreds, ClobClient, createL2Headers, OrderType, orderToJsonV2, Side } from "@polymarket/clob-client-v2";
import { sql } from "drizzle-orm";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { openDatabase } from "../../src/db/database.ts";
import { SimChain } from "../../src/venues/sim/sim-chain.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import markets from "../../fixtures/markets.json" with { type: "json" };
import { type Anvil, startAnvil } from "../support/anvil.ts";
import { copyOfTemplate, postgresUrl } from "../support/databases.ts";
import { officialSigner } from "../support/official-client.ts";
import { ownPostgresDatabase } from "../support/own-postgres-database.ts";
import { ADMIN_TOKEN, type ServiceProcess, startService } from "../support/service-process.ts";

/** Confirmations a fill needs here. */
export const CONF = 3;
export const POLL_MS = 100;
/** The first plain 0.01-tick market (Yes: bids 0.48, asks 0.50): an order at 0.49 is alone at the top. */
const PLAIN = (markets as any[]).find((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
export const YES: string = PLAIN.tokens[0].token_id;
export const LIMITS = { daily_volume_usdc: 100_000, capital_usdc: 100_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600, duplicate_window_s: 0 };
const SEAL = Buffer.alloc(32, 7).toString("base64");

export const kinds = ["pglite", ...(postgresUrl ? ["postgres"] : [])] as const;
export type Kind = (typeof kinds)[number];

export interface World {
  anvil: Anvil;
  sim: VenueSim;
}

/** Anvil and the simulator settling on it (one of each per test file). */
export async function startWorld(): Promise<World> {
  const anvil = await startAnvil();
  const sim = startVenueSim({ port: 0, hostname: "127.0.0.1", chain: await SimChain.connect(anvil.url, 137) });
  return { anvil, sim };
}

export async function stopWorld(w: World | undefined): Promise<void> {
  await w?.sim.stop();
  await w?.anvil.stop();
}

/** A database for the service process: a PGlite data directory, or a PostgreSQL database of its own. */
export class ServiceDb {
  private constructor(
    readonly kind: Kind,
    readonly env: Record<string, string>,
    private readonly dir: string | null,
  ) {}

  static async create(kind: Kind, suffix: string): Promise<ServiceDb> {
    if (kind === "postgres") return new ServiceDb(kind, { DATABASE_URL: (await ownPostgresDatabase(suffix))! }, null);
    const dir = await copyOfTemplate();
    return new ServiceDb(kind, { DATA_DIR: dir }, dir);
  }

  /** Runs SQL on the database while the service is stopped (PGlite is single-process). */
  async execute(query: string): Promise<Record<string, unknown>[]> {
    const db = this.dir ? await openDatabase({ kind: "pglite", dataDir: this.dir }) : await openDatabase({ kind: "postgres", url: this.env.DATABASE_URL!, max: 1 }, false);
    try {
      const r = (await db.db.execute(sql.raw(query))) as unknown as Record<string, unknown>[] | { rows: Record<string, unknown>[] };
      return Array.isArray(r) ? [...r] : r.rows;
    } finally {
      await db.close();
    }
  }

  remove(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The service process of `db`, VENUE=clob at the simulator, the chain source following Anvil. */
export function startBroker(w: World, db: ServiceDb): Promise<ServiceProcess> {
  return startService(
    {
      ...db.env,
      VENUE: "clob",
      VENUE_URL: w.sim.url,
      CHAIN_RPC_URL: w.anvil.url,
      CHAIN_CONFIRMATIONS: String(CONF),
      CHAIN_POLL_MS: String(POLL_MS),
      SEAL_SECRET_KEY: SEAL,
      // The sink's "venue report delivered" lines (what the actor made of each report).
      LOG_LEVEL: "debug",
      // The chain path alone: the user channel (which also reports delegated fills) is tested on its own.
      VENUE_WS_URL: "off",
    },
    60_000,
  );
}

export interface Call {
  status: number;
  body: any;
}

export class Api {
  /** The service's log lines, for a failure's message. */
  logs: () => string[] = () => [];

  constructor(
    public url: string,
    readonly key: string,
  ) {}

  async call(method: string, path: string, body?: unknown): Promise<Call> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { "content-type": "application/json", "x-api-key": this.key },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  }

  static async newOrg(url: string): Promise<Api> {
    const res = await fetch(`${url}/v1/orgs`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` }, body: JSON.stringify({ name: "venue truth" }) });
    expect(res.status).toBe(201);
    return new Api(url, ((await res.json()) as any).api_key.key);
  }

  order(id: string): Promise<any> {
    return this.call("GET", `/v1/orders/${id}`).then((r) => {
      expect(r.status).toBe(200);
      return r.body;
    });
  }

  agent(id: string): Promise<any> {
    return this.call("GET", `/v1/agents/${id}`).then((r) => {
      expect(r.status).toBe(200);
      return r.body;
    });
  }

  positions(id: string): Promise<any[]> {
    return this.call("GET", `/v1/agents/${id}/positions`).then((r) => {
      expect(r.status).toBe(200);
      return r.body.positions;
    });
  }

  /** Polls GET /v1/orders/{id} until `ok` holds; answers the order and when it held. */
  async waitOrder(id: string, what: string, ok: (o: any) => boolean, timeoutMs = 10_000): Promise<{ order: any; at: number }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const order = await this.order(id);
      if (ok(order)) return { order, at: Date.now() };
      if (Date.now() > deadline) {
        const lines = this.logs().filter((l) => l.includes(id) || (order.order_hash && l.includes(order.order_hash)));
        throw new Error(`order ${id}: not ${what} within ${timeoutMs} ms: ${JSON.stringify(order)}\n${lines.join("\n")}`);
      }
      await Bun.sleep(50);
    }
  }

  /** Waits until /readyz says the chain source's cursor is at `block` or above. */
  async waitCursor(block: bigint, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r: any = await (await fetch(`${this.url}/readyz`)).json();
      if (r.chain === "following" && r.chain_cursor_block !== null && BigInt(r.chain_cursor_block) >= block) return;
      if (Date.now() > deadline) throw new Error(`chain cursor not at ${block} within ${timeoutMs} ms: ${JSON.stringify(r)}`);
      await Bun.sleep(50);
    }
  }
}

/** The events of one agent's SSE stream (GET /v1/events, from its first event), as they come. */
export class EventStream {
  readonly events: { id: number; type: string; data: any }[] = [];
  private readonly abort = new AbortController();
  private done: Promise<void>;

  constructor(api: Api, agentId: string) {
    this.done = (async () => {
      const res = await fetch(`${api.url}/v1/events?agent_id=${agentId}&after=0`, { headers: { "x-api-key": api.key }, signal: this.abort.signal });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += decoder.decode(value, { stream: true });
        let i: number;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = frame.split("\n").find((l) => l.startsWith("data: "));
          if (data) this.events.push(JSON.parse(data.slice(6)));
        }
      }
    })().catch(() => undefined);
  }

  /** The `order` events of `orderId` that report a fill. */
  fillsOf(orderId: string): any[] {
    return this.events.filter((e) => e.type === "order" && e.data.order.id === orderId && e.data.fill);
  }

  async waitFor(what: string, find: () => any, timeoutMs = 10_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no ${what} on the event stream within ${timeoutMs} ms: ${JSON.stringify(this.events.map((e) => ({ id: e.id, type: e.type, status: e.data?.order?.status, fill: e.data?.fill })))}`);
      await Bun.sleep(50);
    }
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}

/** A wallet with its own L2 API key at the simulator (created over L1, as a new user gets one). */
export interface Trader {
  pk: Hex;
  address: `0x${string}`;
  creds: ApiKeyCreds;
  client: ClobClient;
}

export async function newTrader(sim: VenueSim): Promise<Trader> {
  const pk = generatePrivateKey();
  const account = privateKeyToAccount(pk);
  const signer = officialSigner(account);
  const creds = await new ClobClient({ host: sim.url, chain: 137, signer }).createOrDeriveApiKey();
  return { pk, address: account.address, creds, client: new ClobClient({ host: sim.url, chain: 137, signer, creds, throwOnError: true }) };
}

/** The owner's venue_auth (its L2 headers) over a request, computed by the official client. */
export async function venueAuth(o: Trader, req: { method: string; requestPath: string; body?: string }) {
  const h = await createL2Headers(officialSigner(privateKeyToAccount(o.pk)), o.creds, req);
  return { address: h.POLY_ADDRESS, api_key: h.POLY_API_KEY, passphrase: h.POLY_PASSPHRASE, timestamp: h.POLY_TIMESTAMP, signature: h.POLY_SIGNATURE };
}

/** A payload agent of `owner`'s wallet (its limits opened wide). */
export async function payloadAgent(api: Api, owner: Trader): Promise<string> {
  const agent = await api.call("POST", "/v1/agents", { wallet_address: owner.address });
  expect(agent.status).toBe(201);
  expect((await api.call("PATCH", `/v1/agents/${agent.body.id}/limits`, LIMITS)).status).toBe(200);
  return agent.body.id;
}

/** A delegated agent of a new wallet: venue credentials registered at the simulator and posted to the service. */
export async function delegatedAgent(api: Api, sim: VenueSim): Promise<{ agentId: string; address: `0x${string}` }> {
  const address = privateKeyToAccount(generatePrivateKey()).address;
  const agentId = await payloadAgent(api, { address } as Trader);
  const c = { api_key: crypto.randomUUID(), api_secret: randomBytes(32).toString("base64url"), passphrase: randomBytes(16).toString("hex") };
  const scopes = ["order:place", "order:cancel"];
  expect((await fetch(`${sim.url}/_sim/credentials`, { method: "POST", body: JSON.stringify({ ...c, address, scopes }) })).status).toBe(201);
  const r = await api.call("POST", `/v1/agents/${agentId}/creds`, { ...c, scopes });
  expect(r.status).toBe(200);
  return { agentId, address };
}

/** Payload mode: intent → signed by the owner with viem → submit-signed with its venue_auth; the order rests (open). */
export async function restPayloadBuy(api: Api, owner: Trader, agentId: string, sizeUsdc = 4.9, price = 0.49): Promise<{ orderId: string; orderHash: string }> {
  const intent = await api.call("POST", "/v1/orders/intent", { agent_id: agentId, market_id: YES, side: "buy", size_usdc: sizeUsdc, price });
  expect(intent.status).toBe(201);
  const submitted = await submitSigned(api, owner, intent.body);
  expect(submitted.status).toBe(200);
  expect(submitted.body.status).toBe("open");
  return { orderId: intent.body.order_id, orderHash: intent.body.order_hash };
}

/** Signs an intent's unsigned order with viem and submits it with the owner's venue_auth over the official client's POST /order body. */
export async function submitSigned(api: Api, owner: Trader, intent: any): Promise<Call> {
  const m = intent.unsigned_order.message;
  const signature = await privateKeyToAccount(owner.pk).signTypedData(intent.unsigned_order);
  const body = orderToJsonV2({ ...m, side: m.side === 0 ? "BUY" : "SELL", expiration: intent.expiration, signature } as any, owner.creds.key, intent.order_type as OrderType);
  const auth = await venueAuth(owner, { method: "POST", requestPath: "/order", body: JSON.stringify(body) });
  return api.call("POST", "/v1/orders/submit-signed", { order_id: intent.order_id, signature, venue_auth: auth });
}

/** Delegated mode: the intent is placed by the service and rests (open). */
export async function restDelegatedBuy(api: Api, agentId: string, sizeUsdc = 4.9, price = 0.49): Promise<{ orderId: string; orderHash: string }> {
  const intent = await api.call("POST", "/v1/orders/intent", { agent_id: agentId, market_id: YES, side: "buy", size_usdc: sizeUsdc, price });
  expect(intent.status).toBe(201);
  expect(intent.body).toMatchObject({ mode: "delegated", status: "open" });
  return { orderId: intent.body.order_id, orderHash: intent.body.order_hash };
}

/** A counterparty sells `shares` at 0.49 into the resting bid with the official client (FAK); answers the settlement's transaction hash. */
export async function counterpartySells(sim: VenueSim, shares: number): Promise<string> {
  const t = await newTrader(sim);
  const took: any = await t.client.postOrder(await t.client.createOrder({ tokenID: YES, price: 0.49, size: shares, side: Side.SELL }), OrderType.FAK);
  expect(took).toMatchObject({ success: true, status: "matched" });
  expect(took.transactionsHashes).toHaveLength(1);
  return took.transactionsHashes[0].toLowerCase();
}

/** The block of a transaction. */
export async function blockOf(anvil: Anvil, txHash: string, timeoutMs = 5000): Promise<bigint> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await anvil.rpc<{ blockNumber: string } | null>("eth_getTransactionReceipt", [txHash]);
    if (r) return BigInt(r.blockNumber);
    if (Date.now() > deadline) throw new Error(`no receipt for ${txHash} within ${timeoutMs} ms`);
    await Bun.sleep(20);
  }
}
