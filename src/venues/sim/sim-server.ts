/**
 * The venue simulator (CONTRACT 11.3): a real HTTP server speaking the CLOB V2 wire format that
 * ClobVenue speaks (see the route table in src/venues/clob/clob-venue.ts), with matching done by
 * the paper venue's engine.
 *
 * Authentication: L2 HMAC headers are verified over the exact raw body received, for credentials
 * registered with POST /_sim/credentials {api_key, api_secret, passphrase?, address?, scopes}.
 * - POST /order with signature "" (delegated) needs the order:place scope; a signed order
 *   (0x + 130 hex; the service verified it) is accepted from any registered key.
 *   The body's owner must be the caller's API key; the order's signer must be the key's address
 *   when an address was registered.
 * - DELETE /order, /orders need the order:cancel scope and cancel only the key's own orders.
 * - GET /data/order/{id} and /auth/api-keys accept any registered key.
 *
 * Test controls (no auth, no injected latency):
 *   POST /_sim/credentials, POST /_sim/faults {latency_ms, cancel_latency_ms, cancel_hang_ratio,
 *   error_ratio, cancel_error_ratio, cancel_error_status, cancel_retry_after_s} (partial updates), GET /_sim/faults, GET /_sim/stats → {posts: {id: n}, cancels: {id: n}},
 *   POST /_sim/reset (faults and stats).
 * Faults: latency_ms before answering every venue call; cancel_latency_ms more on cancels;
 * cancel_hang_ratio of cancels are never answered (held until the client goes away or the server
 * stops; the order is not cancelled); error_ratio of posts are answered 500 {error} (order not placed).
 */

import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { fromUnits } from "../../money/units.ts";
import { PRICE_DECIMALS, SIZE_DECIMALS } from "../markets-file.ts";
import { type PaperOrder, PaperVenue, type PaperVenueOptions } from "../paper/paper-venue.ts";
import type { Market, OrderMessage, OrderType } from "../venue.ts";
import { verifyL2Signature } from "../clob/l2-auth.ts";
import { END_CURSOR, INITIAL_CURSOR } from "../clob/clob-venue.ts";

export type SimScope = "order:place" | "order:cancel" | (string & {});

export interface SimCredential {
  api_key: string;
  api_secret: string;
  passphrase: string;
  address: string;
  scopes: Set<string>;
}

export interface SimFaults {
  latency_ms: number;
  cancel_latency_ms: number;
  cancel_hang_ratio: number;
  error_ratio: number;
  /** Share of cancels answered with an error (`cancel_error_status`, 500 or 429; the order stays live). */
  cancel_error_ratio: number;
  /** Status of those errors: 500, or 429 with `Retry-After: cancel_retry_after_s`. */
  cancel_error_status: number;
  cancel_retry_after_s: number;
}

export interface VenueSimOptions {
  port?: number;
  hostname?: string;
  /** Path of a markets file; used when `markets` is not given. */
  marketsFile?: string;
  /** Markets-file entries (CONTRACT 11.4) in memory. */
  markets?: unknown;
  /** Options of the underlying paper engine (chainId for order ids, clock). */
  paper?: PaperVenueOptions;
  /** Page size of GET /markets (default 100). */
  marketsPageSize?: number;
  /** Random source for faults, [0, 1) (tests). */
  random?: () => number;
}

export interface VenueSim {
  url: string;
  port: number;
  stop(): Promise<void>;
  state: VenueSimState;
}

/** The repository's markets fixture. */
export const DEFAULT_MARKETS_FILE = resolve(import.meta.dir, "../../../fixtures/markets.json");

const NO_FAULTS: SimFaults = Object.freeze({ latency_ms: 0, cancel_latency_ms: 0, cancel_hang_ratio: 0, error_ratio: 0, cancel_error_ratio: 0, cancel_error_status: 500, cancel_retry_after_s: 0 });
const SIGNATURE_RE = /^0x[0-9a-fA-F]{130}$/;
const ORDER_TYPES = new Set(["GTC", "GTD", "FOK", "FAK"]);

export class VenueSimState {
  readonly credentials = new Map<string, SimCredential>();
  faults: SimFaults = { ...NO_FAULTS };
  readonly posts = new Map<string, number>();
  readonly cancels = new Map<string, number>();
  /** Requests currently held open by cancel_hang_ratio. */
  hanging = 0;

  constructor(readonly venue: PaperVenue) {}

  registerCredential(c: { api_key: string; api_secret: string; passphrase?: string; address?: string; scopes: string[] }): void {
    this.credentials.set(c.api_key, {
      api_key: c.api_key,
      api_secret: c.api_secret,
      passphrase: c.passphrase ?? "",
      address: c.address ?? "",
      scopes: new Set(c.scopes),
    });
  }

  stats(): { posts: Record<string, number>; cancels: Record<string, number> } {
    return { posts: Object.fromEntries(this.posts), cancels: Object.fromEntries(this.cancels) };
  }

  reset(): void {
    this.faults = { ...NO_FAULTS };
    this.posts.clear();
    this.cancels.clear();
  }
}

export function startVenueSim(opts: VenueSimOptions = {}): VenueSim {
  const venue =
    opts.markets !== undefined
      ? PaperVenue.fromEntries(opts.markets, { name: "venue-sim", ...opts.paper })
      : PaperVenue.fromFile(opts.marketsFile ?? DEFAULT_MARKETS_FILE, {
          name: "venue-sim",
          ...opts.paper,
        });
  const state = new VenueSimState(venue);
  const random = opts.random ?? Math.random;
  const pageSize = opts.marketsPageSize ?? 100;
  const stopping = new AbortController();
  const held = new Set<() => void>();

  /** Resolves after `ms`, or early when the server stops or the client goes away. */
  const delay = (ms: number, req: Request): Promise<void> => {
    if (!(ms > 0)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stopping.signal.removeEventListener("abort", done);
        req.signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      stopping.signal.addEventListener("abort", done, { once: true });
      req.signal.addEventListener("abort", done, { once: true });
    });
  };

  /** Never answers until the client aborts or the server stops. */
  const hang = (req: Request): Promise<Response> =>
    new Promise((resolve) => {
      state.hanging++;
      const done = () => {
        if (!held.delete(done)) return;
        state.hanging--;
        req.signal.removeEventListener("abort", done);
        resolve(json({ error: "request abandoned" }, 503));
      };
      held.add(done);
      req.signal.addEventListener("abort", done, { once: true });
      if (stopping.signal.aborted) done();
    });

  const authenticate = (req: Request, path: string, raw: string): SimCredential | Response => {
    const h = req.headers;
    const key = h.get("POLY_API_KEY");
    const sig = h.get("POLY_SIGNATURE");
    const ts = h.get("POLY_TIMESTAMP");
    if (!key || !sig || !ts) return json({ error: "Unauthorized/Invalid api key" }, 401);
    const cred = state.credentials.get(key);
    if (!cred) return json({ error: "Unauthorized/Invalid api key" }, 401);
    if (cred.passphrase && h.get("POLY_PASSPHRASE") !== cred.passphrase) return json({ error: "Unauthorized/Invalid api key" }, 401);
    if (cred.address && (h.get("POLY_ADDRESS") ?? "").toLowerCase() !== cred.address.toLowerCase()) {
      return json({ error: "Unauthorized/Invalid api key" }, 401);
    }
    const ok = verifyL2Signature({ secret: cred.api_secret, timestamp: ts, method: req.method, path, body: raw, signature: sig });
    if (!ok) return json({ error: "Unauthorized/Invalid L2 signature" }, 401);
    return cred;
  };

  const marketJson = (m: Market) => {
    const tick = Number(m.tick_size);
    return {
      condition_id: m.condition_id,
      question_id: m.condition_id,
      question: m.question,
      description: "",
      market_slug: slug(m.question),
      end_date_iso: m.end_date,
      game_start_time: null,
      active: m.active,
      closed: m.closed,
      archived: false,
      accepting_orders: m.accepting_orders,
      enable_order_book: true,
      minimum_order_size: Number(m.min_order_size),
      minimum_tick_size: tick,
      neg_risk: m.neg_risk,
      category: m.category,
      tags: [m.category],
      tokens: m.tokens.map((t) => {
        const b = venue.bookSnapshot(t.token_id);
        return { token_id: t.token_id, outcome: t.outcome, price: b?.last_trade_price ? Number(b.last_trade_price) : 0, winner: false };
      }),
    };
  };

  const orderJson = (o: PaperOrder) => ({
    id: o.id,
    status: `ORDER_STATUS_${o.status === "cancelled" ? "CANCELED" : o.status.toUpperCase()}`,
    owner: o.owner,
    maker_address: o.maker,
    market: o.condition_id,
    asset_id: o.token_id,
    side: o.side === "buy" ? "BUY" : "SELL",
    original_size: fromUnits(o.original_size, SIZE_DECIMALS),
    size_matched: fromUnits(o.filled_size, SIZE_DECIMALS),
    price: fromUnits(o.price, PRICE_DECIMALS),
    outcome: o.outcome,
    expiration: String(o.expiration),
    order_type: o.order_type,
    associate_trades: [],
    created_at: Math.floor(o.created_at / 1000),
    // Extension of the simulator: exact filled notional at execution prices.
    filled_usdc: fromUnits(o.filled_usdc),
  });

  const cancelIds = (cred: SimCredential, ids: string[]) => {
    const canceled: string[] = [];
    const not_canceled: Record<string, string> = {};
    for (const id of ids) {
      const rec = venue.order(id);
      if (!rec) {
        not_canceled[id] = "order not found";
        continue;
      }
      if (rec.owner !== cred.api_key) {
        not_canceled[id] = "not the owner of the order";
        continue;
      }
      const out = venue.cancel(id);
      if (out.kind === "cancelled") canceled.push(id);
      else not_canceled[id] = "order can't be found - already canceled or matched";
    }
    return { canceled, not_canceled };
  };

  const handleVenue = async (req: Request, url: URL): Promise<Response> => {
    const path = url.pathname;
    const method = req.method;

    if (method === "GET" && path === "/ok") return new Response("OK");
    if (method === "GET" && path === "/time") return new Response(String(Math.floor(Date.now() / 1000)));

    if (method === "GET" && path === "/markets") {
      const cursor = url.searchParams.get("next_cursor") || INITIAL_CURSOR;
      let offset: number;
      try {
        offset = Number(atob(cursor));
      } catch {
        offset = Number.NaN;
      }
      if (!Number.isInteger(offset) || offset < 0) return json({ error: "invalid next_cursor" }, 400);
      const all = venue.allMarkets();
      const data = all.slice(offset, offset + pageSize).map(marketJson);
      const next = offset + pageSize < all.length ? btoa(String(offset + pageSize)) : END_CURSOR;
      return json({ limit: pageSize, count: data.length, next_cursor: next, data });
    }
    if (method === "GET" && path.startsWith("/markets/")) {
      const m = venue.marketByCondition(decodeURIComponent(path.slice("/markets/".length)));
      return m ? json(marketJson(m)) : json({ error: "market not found" }, 404);
    }
    if (method === "GET" && path.startsWith("/markets-by-token/")) {
      const tokenId = decodeURIComponent(path.slice("/markets-by-token/".length));
      const m = venue.marketForToken(tokenId);
      if (!m) return json({ error: "market not found" }, 404);
      return json({ condition_id: m.condition_id, primary_token_id: m.tokens[0]?.token_id, secondary_token_id: m.tokens[1]?.token_id });
    }
    if (method === "GET" && path === "/book") {
      const tokenId = url.searchParams.get("token_id");
      if (!tokenId) return json({ error: "token_id is required" }, 400);
      const m = venue.marketForToken(tokenId);
      const b = venue.fullBook(tokenId);
      if (!m || !b) return json({ error: "No orderbook exists for the requested token id" }, 404);
      // Polymarket lists levels worst first: bids ascending, asks descending.
      const body = {
        market: m.condition_id,
        asset_id: tokenId,
        timestamp: String(b.timestamp_ms),
        hash: "",
        bids: [...b.bids].reverse(),
        asks: [...b.asks].reverse(),
        min_order_size: m.min_order_size,
        tick_size: m.tick_size,
        neg_risk: m.neg_risk,
        last_trade_price: b.last_trade_price ?? "",
      };
      body.hash = createHash("sha1").update(JSON.stringify(body)).digest("hex");
      return json(body);
    }

    // ---- authenticated routes
    const raw = await req.text();

    if (method === "GET" && path === "/auth/api-keys") {
      const cred = authenticate(req, path, raw);
      if (cred instanceof Response) return cred;
      return json({ apiKeys: [cred.api_key] });
    }

    if (method === "GET" && path.startsWith("/data/order/")) {
      const cred = authenticate(req, path, raw);
      if (cred instanceof Response) return cred;
      const rec = venue.order(decodeURIComponent(path.slice("/data/order/".length)));
      return rec ? json(orderJson(rec)) : json({ error: "order not found" }, 404);
    }

    if (method === "POST" && path === "/order") {
      const cred = authenticate(req, path, raw);
      if (cred instanceof Response) return cred;
      const parsed = parsePostOrder(raw);
      if (typeof parsed === "string") return json({ error: parsed }, 400);
      if (parsed.owner !== cred.api_key) return json({ error: "the order owner has to be the owner of the API KEY" }, 400);
      const id = venue.orderIdFor(parsed.order);
      if (!id) return json({ error: "Invalid order payload" }, 400);
      state.posts.set(id, (state.posts.get(id) ?? 0) + 1);
      if (state.faults.error_ratio > 0 && random() < state.faults.error_ratio) {
        return json({ error: "Internal server error (simulated fault)" }, 500);
      }
      if (parsed.signature === "") {
        if (!cred.scopes.has("order:place")) return json({ error: "delegated order needs an API key with the order:place scope" }, 403);
      } else if (!SIGNATURE_RE.test(parsed.signature)) {
        return json({ error: "invalid order signature" }, 400);
      }
      if (cred.address && parsed.order.signer.toLowerCase() !== cred.address.toLowerCase()) {
        return json({ error: "the order signer does not match the API key's address" }, 400);
      }
      const r = venue.submit({ order: parsed.order, order_type: parsed.orderType, expiration: parsed.expiration, owner: cred.api_key });
      if (!r.ok) return json({ success: false, errorMsg: r.error, orderID: "", status: "", transactionsHashes: [], tradeIDs: [] });
      const rec = venue.order(r.venue_order_id)!;
      const usdc = fromUnits(rec.filled_usdc);
      const shares = fromUnits(rec.filled_size, SIZE_DECIMALS);
      return json({
        success: true,
        errorMsg: "",
        orderID: r.venue_order_id,
        status: r.status,
        makingAmount: rec.side === "buy" ? usdc : shares,
        takingAmount: rec.side === "buy" ? shares : usdc,
        transactionsHashes: [],
        tradeIDs: [],
      });
    }

    if (method === "DELETE" && (path === "/order" || path === "/orders")) {
      const cred = authenticate(req, path, raw);
      if (cred instanceof Response) return cred;
      let ids: string[];
      try {
        const body = JSON.parse(raw);
        ids = path === "/order" ? [body?.orderID] : body;
        if (!Array.isArray(ids) || ids.length === 0 || !ids.every((x) => typeof x === "string" && x)) throw new Error();
      } catch {
        return json({ error: path === "/order" ? "body must be {orderID}" : "body must be a JSON array of order ids" }, 400);
      }
      ids = [...new Set(ids)];
      for (const id of ids) state.cancels.set(id, (state.cancels.get(id) ?? 0) + 1);
      if (!cred.scopes.has("order:cancel")) return json({ error: "API key lacks the order:cancel scope" }, 403);
      await delay(state.faults.cancel_latency_ms, req);
      if (state.faults.cancel_hang_ratio > 0 && random() < state.faults.cancel_hang_ratio) return hang(req);
      if (state.faults.cancel_error_ratio > 0 && random() < state.faults.cancel_error_ratio) {
        const status = state.faults.cancel_error_status;
        const headers: Record<string, string> = status === 429 ? { "Retry-After": String(state.faults.cancel_retry_after_s) } : {};
        return json({ error: status === 429 ? "Too many requests (simulated fault)" : "Internal server error (simulated fault)" }, status, headers);
      }
      return json(cancelIds(cred, ids));
    }

    return json({ error: `no route ${method} ${path}` }, 404);
  };

  const handleSim = async (req: Request, url: URL): Promise<Response> => {
    const path = url.pathname;
    if (req.method === "POST" && path === "/_sim/credentials") {
      const b = await readJson(req);
      if (!b || typeof b.api_key !== "string" || !b.api_key || typeof b.api_secret !== "string" || !b.api_secret) {
        return json({ error: "api_key and api_secret are required" }, 400);
      }
      if (b.scopes !== undefined && (!Array.isArray(b.scopes) || !b.scopes.every((s: unknown) => typeof s === "string"))) {
        return json({ error: "scopes must be an array of strings" }, 400);
      }
      if ((b.passphrase !== undefined && typeof b.passphrase !== "string") || (b.address !== undefined && typeof b.address !== "string")) {
        return json({ error: "passphrase and address must be strings" }, 400);
      }
      state.registerCredential({ api_key: b.api_key, api_secret: b.api_secret, passphrase: b.passphrase, address: b.address, scopes: b.scopes ?? [] });
      return json({ ok: true, api_key: b.api_key, scopes: b.scopes ?? [] }, 201);
    }
    if (req.method === "POST" && path === "/_sim/faults") {
      const b = await readJson(req);
      if (!b || typeof b !== "object") return json({ error: "body must be a JSON object" }, 400);
      const next = { ...state.faults };
      for (const k of Object.keys(b)) {
        const v = b[k];
        if (!(k in NO_FAULTS)) return json({ error: `unknown fault ${k}` }, 400);
        const isRatio = k.endsWith("ratio");
        if (k === "cancel_error_status" && v !== 500 && v !== 429) return json({ error: "cancel_error_status must be 500 or 429" }, 400);
        if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || (isRatio && v > 1)) {
          return json({ error: `${k} must be ${isRatio ? "a number in [0, 1]" : "a non-negative number"}` }, 400);
        }
        (next as Record<string, number>)[k] = v;
      }
      state.faults = next;
      return json(state.faults);
    }
    if (req.method === "GET" && path === "/_sim/faults") return json(state.faults);
    if (req.method === "GET" && path === "/_sim/stats") return json(state.stats());
    if (req.method === "POST" && path === "/_sim/reset") {
      state.reset();
      return json({ ok: true });
    }
    return json({ error: `no route ${req.method} ${path}` }, 404);
  };

  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: opts.hostname ?? "127.0.0.1",
    idleTimeout: 0, // injected latencies and held cancels may exceed the default 10 s
    async fetch(req) {
      const url = new URL(req.url);
      try {
        if (url.pathname.startsWith("/_sim/")) return await handleSim(req, url);
        await delay(state.faults.latency_ms, req);
        return await handleVenue(req, url);
      } catch (err) {
        return json({ error: `simulator error: ${(err as Error)?.message ?? String(err)}` }, 500);
      }
    },
  });

  const port = server.port as number;
  return {
    url: `http://${opts.hostname ?? "127.0.0.1"}:${port}`,
    port,
    state,
    async stop() {
      stopping.abort();
      for (const release of [...held]) release();
      await server.stop(true);
    },
  };
}

interface ParsedPost {
  order: OrderMessage;
  signature: string;
  owner: string;
  orderType: OrderType;
  expiration: string;
}

/** The POST /order body (see serializePostOrderBody) into an OrderMessage; a string is an error. */
function parsePostOrder(raw: string): ParsedPost | string {
  let b: any;
  try {
    b = JSON.parse(raw);
  } catch {
    return "Invalid order payload: not JSON";
  }
  const o = b?.order;
  if (!o || typeof o !== "object") return "Invalid order payload: order is missing";
  if (!ORDER_TYPES.has(b.orderType)) return "Invalid order payload: orderType must be GTC, GTD, FOK or FAK";
  if (typeof b.owner !== "string") return "Invalid order payload: owner is missing";
  const side = o.side === "BUY" || o.side === 0 ? 0 : o.side === "SELL" || o.side === 1 ? 1 : null;
  if (side === null) return "Invalid order payload: side must be BUY or SELL";
  const salt = typeof o.salt === "number" && Number.isSafeInteger(o.salt) && o.salt >= 0 ? String(o.salt) : typeof o.salt === "string" ? o.salt : null;
  if (salt === null) return "Invalid order payload: salt must be a non-negative integer";
  if (typeof o.signature !== "string") return "Invalid order payload: signature is missing";
  const str = (v: unknown) => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");
  return {
    order: {
      salt,
      maker: str(o.maker) as `0x${string}`,
      signer: str(o.signer || o.maker) as `0x${string}`,
      tokenId: str(o.tokenId),
      makerAmount: str(o.makerAmount),
      takerAmount: str(o.takerAmount),
      side,
      signatureType: typeof o.signatureType === "number" ? o.signatureType : Number(o.signatureType ?? 0),
      timestamp: str(o.timestamp),
      metadata: str(o.metadata) as `0x${string}`,
      builder: str(o.builder) as `0x${string}`,
    },
    signature: o.signature,
    owner: b.owner,
    orderType: b.orderType,
    expiration: str(o.expiration ?? b.expiration ?? "0") || "0",
  };
}

async function readJson(req: Request): Promise<any> {
  try {
    return await req.json();
  } catch {
    return null;
  }
}

function json(body: unknown, status = 200, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...extra } });
}

function slug(q: string): string {
  return q
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 80);
}
