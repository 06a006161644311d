/**
 * The venue simulator (docs/architecture.md#venues): a real HTTP server standing in for Polymarket's CLOB V2 for the
 * calls a trading client makes, with the request and answer shapes of the official
 * `@polymarket/clob-client-v2`, and matching done by the paper venue's engine.
 *
 * Public:   GET /ok, /time, /version ({version}: the configured order version, 2 or 3), /markets,
 *           /markets/{condition_id}, /markets-by-token/{token_id}, /clob-markets/{condition_id}, /book,
 *           /tick-size, /neg-risk (?token_id=)
 * L1:       POST /auth/api-key, GET /auth/derive-api-key — ClobAuth EIP-712 headers (l1-auth.ts); the key
 *           of (address, nonce) is derived, so creating it twice is refused and deriving answers it.
 * L2:       GET /auth/api-keys, DELETE /auth/api-key, GET /data/order/{id}, GET /data/orders (the key's
 *           open orders), GET /data/trades (the key's trades, taker or maker), POST /order, POST /orders
 *           (batch, at most 15), DELETE /order {orderID}, DELETE /orders [ids], DELETE /cancel-all,
 *           DELETE /cancel-market-orders {market?, asset_id?}, POST /v1/heartbeats {heartbeat_id}.
 *
 * L2 HMAC headers are verified over the exact raw body received, for credentials registered with
 * POST /_sim/credentials {api_key, api_secret, passphrase?, address?, scopes} or created over L1 (both
 * scopes). POLY_ADDRESS must be the key's address.
 * - POST /order with signature "" is a delegated order: it needs the order:place scope. Any other
 *   signature is verified for its signature type (verify-posted-order.ts) under the exchange domain of
 *   the order's market (v1: "2", CTF Exchange V2 or Neg Risk; v2: "3", ExchangeV3); a signature valid
 *   under the other version's domain is refused with "order_version_mismatch", any other bad one with
 *   "invalid signature". Proxy, Safe and deposit wallets are registered with POST /_sim/wallets
 *   {wallet, owner}. The order's signer must be the key's address (type 3: the wallet's owner must be).
 * - Orders are checked against the market's tick size and minimum size, matched price-time against the
 *   book, and each match is a trade (GET /data/trades) with a transaction hash ("" while MATCHED, as Polymarket).
 * - Cancels need the order:cancel scope and cancel only the key's own orders.
 * - Heartbeats: the first POST /v1/heartbeats (any heartbeat_id, "" included) starts a session and answers
 *   {heartbeat_id}; each next one must send the last id answered (else 400 with the current id). When
 *   none arrives within `heartbeatTimeoutMs` (default 10 s), every open order of the key is cancelled
 *   and the session ends.
 *
 * Test controls (no auth, no injected latency):
 *   POST /_sim/credentials, POST /_sim/wallets {wallet, owner}, POST /_sim/faults (partial updates, see
 *   SimFaults), GET /_sim/faults, GET /_sim/stats → {requests: {"METHOD /route": n}, posts: {id: n},
 *   cancels: {id: n}}, POST /_sim/reset (faults and stats; held cancels answered 503), POST /_sim/ws/drop {channel?} (closes open
 *   sockets abruptly), GET /_sim/chain (with `chain`: the RPC URL, the exchanges' and Conditional
 *   Tokens' addresses and the sending account; 404 without).
 * Chain (`chain`, sim-chain.ts): each submission's matches are settled in one transaction emitting
 * OrderFilled from the market's exchange address; the trades carry its hash.
 * Channels: /ws/market and /ws/user in Polymarket's message shapes (sim-channels.ts).
 * Faults: latency_ms before answering every venue call; cancel_latency_ms more on cancels;
 * cancel_hang_ratio of cancels are never answered (held until the client goes away or the server
 * stops; nothing is cancelled); cancel_error_ratio of cancels are answered cancel_error_status with
 * {error} (429 with Retry-After: cancel_retry_after_s; nothing is cancelled); error_ratio of posts are
 * answered 500 {error} (order not placed); ws_delay_ms, ws_drop_ratio, ws_refuse_ratio, trade_mine_ms and
 * trade_fail_ratio act on the channels (sim-channels.ts).
 */

import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { resolve } from "node:path";
import { fromUnits } from "../../domain/units.ts";
import { END_CURSOR, INITIAL_CURSOR } from "../clob/clob-venue.ts";
import { decodeSecret } from "../clob/l2-auth.ts";
import { SIZE_DECIMALS } from "../markets-file.ts";
import { type PaperOrder, PaperVenue, type PaperVenueOptions } from "../paper/paper-venue.ts";
import type { Market, OrderMessage, OrderType } from "../venue.ts";
import { selectOrderDomain } from "../../eip712/order-typed-data.ts";
import { deriveApiCreds, verifyL1Headers } from "./l1-auth.ts";
import { type SimChannel, SimChannels, type SimSocketData } from "./sim-channels.ts";
import { mergeFaults, type SimCredential, type SimFaults, VenueSimState } from "./sim-state.ts";
import { clobMarketJson, marketJson, orderJson, page, type SimTrade, tradeJson } from "./sim-wire.ts";
import { verifyPostedOrder } from "./verify-posted-order.ts";
import type { SimChain } from "./sim-chain.ts";

export { NO_FAULTS, type SimCredential, type SimFaults, type SimScope, VenueSimState } from "./sim-state.ts";

export interface VenueSimOptions {
  port?: number;
  hostname?: string;
  /** Path of a markets file; used when `markets` is not given. */
  marketsFile?: string;
  /** Markets-file entries (docs/architecture.md#the-markets-file) in memory. */
  markets?: unknown;
  /** Options of the underlying paper engine (chainId for order ids and domains, clock). */
  paper?: PaperVenueOptions;
  /** Page size of GET /markets (default 100). */
  marketsPageSize?: number;
  /** Page size of GET /data/orders and /data/trades (default 100). */
  dataPageSize?: number;
  /** What GET /version answers: 2 (CTF Exchange V2, v1 markets, the default) or 3 (ExchangeV3, v2 markets). */
  orderVersion?: 2 | 3;
  /** A key's orders are cancelled when no heartbeat arrives within this (default 10000 ms). */
  heartbeatTimeoutMs?: number;
  /** Random source for faults, [0, 1) (tests). */
  random?: () => number;
  /** Settles every match on a local chain (`--chain URL`, sim-chain.ts); GET /_sim/chain names its addresses. */
  chain?: SimChain;
}

export interface VenueSim {
  url: string;
  /** ws://host:port: the channels are at `${wsUrl}/ws/market` and `${wsUrl}/ws/user`. */
  wsUrl: string;
  port: number;
  stop(): Promise<void>;
  state: VenueSimState;
}

/** The repository's markets fixture. */
export const DEFAULT_MARKETS_FILE = resolve(import.meta.dir, "../../../fixtures/markets.json");
/** Most orders in one POST /orders (as the venue). */
export const MAX_BATCH_ORDERS = 15;

const ORDER_TYPES = new Set(["GTC", "GTD", "FOK", "FAK"]);
const ALL_SCOPES = ["order:place", "order:cancel"];
const UNAUTHORIZED = "Unauthorized/Invalid api key";

type PostAnswer = { status: number; body: Record<string, unknown> };

export function startVenueSim(opts: VenueSimOptions = {}): VenueSim {
  /** Trades of the submission in progress (the engine is synchronous, so no two interleave). */
  let collecting: SimTrade[] | null = null;
  /** GTD expiries, told to the channels once they exist. */
  let expired: (rec: PaperOrder) => void = () => {};
  const paperOpts: PaperVenueOptions = {
    name: "venue-sim",
    ...opts.paper,
    onFill: (f) => {
      opts.paper?.onFill?.(f);
      const t: SimTrade = {
        id: randomUUID(),
        taker_order_id: f.taker_order_id,
        maker_order_id: f.maker_order_id,
        token_id: f.token_id,
        price: f.price,
        size: f.size,
        at_ms: f.at,
        transaction_hash: `0x${randomBytes(32).toString("hex")}`,
        status: "MATCHED",
      };
      state.recordTrade(t);
      collecting?.push(t);
    },
    onExpire: (rec) => {
      opts.paper?.onExpire?.(rec);
      expired(rec);
    },
  };
  const venue =
    opts.markets !== undefined ? PaperVenue.fromEntries(opts.markets, paperOpts) : PaperVenue.fromFile(opts.marketsFile ?? DEFAULT_MARKETS_FILE, paperOpts);
  const state = new VenueSimState(venue);
  const random = opts.random ?? Math.random;
  const channels = new SimChannels(venue, state, random);
  expired = (rec) => channels.expired(rec);
  const pageSize = opts.marketsPageSize ?? 100;
  const dataPageSize = opts.dataPageSize ?? 100;
  const orderVersion = opts.orderVersion ?? 2;
  const heartbeatTimeoutMs = opts.heartbeatTimeoutMs ?? 10_000;
  const chainId = venue.chainId;
  const seed = randomBytes(32);
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
    if (!key || !sig || !ts) return json({ error: UNAUTHORIZED }, 401);
    const cred = state.credentials.get(key);
    if (!cred) return json({ error: UNAUTHORIZED }, 401);
    if (cred.passphrase && h.get("POLY_PASSPHRASE") !== cred.passphrase) return json({ error: UNAUTHORIZED }, 401);
    if (cred.address && !sameAddress(h.get("POLY_ADDRESS") ?? "", cred.address)) return json({ error: UNAUTHORIZED }, 401);
    const ok = verifyL2(cred, `${ts}${req.method}${path}`, raw, sig);
    if (!ok) return json({ error: "Unauthorized/Invalid L2 signature" }, 401);
    return cred;
  };

  // ---------------------------------------------------------------- orders

  /**
   * One order payload of POST /order or /orders, checked, verified and submitted; answered without a
   * promise when nothing waits (a delegated order, no chain).
   */
  const submitOne = (cred: SimCredential, payload: unknown): PostAnswer | Promise<PostAnswer> => {
    const parsed = parsePostOrder(payload);
    if (typeof parsed === "string") return { status: 400, body: { error: parsed } };
    if (parsed.owner !== cred.api_key) return { status: 400, body: { error: "the order owner has to be the owner of the API KEY" } };
    const id = venue.orderIdFor(parsed.order);
    if (!id) return { status: 400, body: { error: "Invalid order payload" } };
    state.posts.set(id, (state.posts.get(id) ?? 0) + 1);
    if (state.faults.error_ratio > 0 && random() < state.faults.error_ratio) {
      return { status: 500, body: { error: "Internal server error (simulated fault)" } };
    }
    const { order } = parsed;
    if (parsed.signature === "") {
      if (!cred.scopes.has("order:place")) return { status: 403, body: { error: "delegated order needs an API key with the order:place scope" } };
      if (cred.address && !sameAddress(order.signer, cred.address)) {
        return { status: 400, body: { error: "the order signer does not match the API key's address" } };
      }
      return place(cred, parsed, id);
    }
    const keyHolder = order.signatureType === 3 ? state.ownerOf(order.signer) : order.signer;
    if (cred.address && (keyHolder ?? "").toLowerCase() !== cred.address.toLowerCase()) {
      return { status: 400, body: { error: "the order signer does not match the API key's address" } };
    }
    const market = venue.marketForToken(BigInt(order.tokenId).toString());
    if (!market) return place(cred, parsed, id);
    return checkSignature(order, parsed.signature, market).then((refusal) => (refusal ? { status: 400, body: { error: refusal } } : place(cred, parsed, id)));
  };

  /** The checked order to the engine; its trades settled on the chain first when there is one. */
  const place = (cred: SimCredential, parsed: ParsedPost, id: string): PostAnswer | Promise<PostAnswer> => {
    collecting = [];
    let trades: SimTrade[];
    let r: ReturnType<PaperVenue["submit"]>;
    try {
      r = venue.submit({ order: parsed.order, order_type: parsed.orderType, expiration: parsed.expiration, owner: cred.api_key, venue_order_id: id });
    } finally {
      trades = collecting;
      collecting = null;
    }
    if (!r.ok) return { status: 200, body: { success: false, errorMsg: r.error, orderID: "", status: "", transactionsHashes: [], tradeIDs: [] } };
    const placedId = r.venue_order_id;
    const status = r.status;
    if (opts.chain && trades.length) return settleOnChain(opts.chain, trades).then(() => placedAnswer(cred, placedId, status, trades));
    return placedAnswer(cred, placedId, status, trades);
  };

  /** A placed order recorded and told to the channels; the venue's answer. */
  const placedAnswer = (cred: SimCredential, placedId: string, status: string, trades: SimTrade[]): PostAnswer => {
    state.recordOrder(cred.api_key, placedId);
    const rec = venue.order(placedId)!;
    channels.placed(rec, trades);
    const usdc = amountText(rec.filled_usdc);
    const shares = amountText(rec.filled_size, SIZE_DECIMALS);
    return {
      status: 200,
      body: {
        success: true,
        errorMsg: "",
        orderID: placedId,
        status,
        makingAmount: rec.side === "buy" ? usdc : shares,
        takingAmount: rec.side === "buy" ? shares : usdc,
        transactionsHashes: trades.map((t) => t.transaction_hash),
        tradeIDs: trades.map((t) => t.id),
      },
    };
  };

  /** The submission's matches in one transaction on the chain, whose hash the trades then carry. */
  const settleOnChain = async (chain: SimChain, trades: SimTrade[]) => {
    try {
      const hash = await chain.settle(trades, venue);
      for (const t of trades) t.transaction_hash = hash;
    } catch (err) {
      console.error(`venue-sim: settlement on the chain failed: ${(err as Error)?.message ?? String(err)}`);
    }
  };

  /** null when the signature is good for the market's domain; else the venue's refusal. */
  const checkSignature = async (order: OrderMessage, signature: string, market: Market): Promise<string | null> => {
    const ownerOf = (w: string) => state.ownerOf(w);
    let domain: ReturnType<typeof selectOrderDomain>;
    try {
      domain = selectOrderDomain({ chainId, negRisk: market.neg_risk, version: market.version });
    } catch (err) {
      return (err as Error).message;
    }
    const verdict = await verifyPostedOrder({ order, signature, domain, ownerOf });
    if (verdict.ok) return null;
    try {
      const other = selectOrderDomain({ chainId, negRisk: market.neg_risk, version: (market.version ?? "v1") === "v1" ? "v2" : "v1" });
      if ((await verifyPostedOrder({ order, signature, domain: other, ownerOf })).ok) return "order_version_mismatch";
    } catch {
      // no other domain on this chain
    }
    return `invalid signature: ${verdict.reason}`;
  };

  /** Cancels `ids` for `cred`, answering the venue's {canceled, not_canceled}. */
  const cancelIds = (cred: SimCredential, ids: readonly string[]) => {
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
      if (out.kind === "cancelled") {
        canceled.push(id);
        channels.cancelled(out.order);
      } else not_canceled[id] = "order can't be found - already canceled or matched";
    }
    channels.flush();
    return { canceled, not_canceled };
  };

  /** Scope, faults, then the cancellation of what `pick` chooses. */
  const cancelRoute = async (req: Request, cred: SimCredential, named: string[] | null, pick: () => string[]): Promise<Response> => {
    if (named) for (const id of named) state.cancels.set(id, (state.cancels.get(id) ?? 0) + 1);
    if (!cred.scopes.has("order:cancel")) return json({ error: "API key lacks the order:cancel scope" }, 403);
    await delay(state.faults.cancel_latency_ms, req);
    if (state.faults.cancel_hang_ratio > 0 && random() < state.faults.cancel_hang_ratio) return hang(req);
    const f = state.faults;
    if (f.cancel_error_ratio > 0 && random() < f.cancel_error_ratio) {
      const headers: Record<string, string> = f.cancel_error_status === 429 ? { "Retry-After": String(f.cancel_retry_after_s) } : {};
      const error = f.cancel_error_status === 429 ? "Too Many Requests (simulated fault)" : "Internal server error (simulated fault)";
      return json({ error }, f.cancel_error_status, headers);
    }
    const ids = pick();
    if (!named) for (const id of ids) state.cancels.set(id, (state.cancels.get(id) ?? 0) + 1);
    return json(cancelIds(cred, ids));
  };

  // ---------------------------------------------------------------- heartbeats

  const expireHeartbeat = (key: string) => {
    state.heartbeats.delete(key);
    const cred = state.credentials.get(key);
    if (!cred) return;
    const out = cancelIds(cred, state.liveOrdersOf(key));
    state.heartbeatCancels += out.canceled.length;
  };

  const heartbeat = (cred: SimCredential, sent: unknown): Response => {
    const current = state.heartbeats.get(cred.api_key);
    if (current && sent !== current.id) return json({ error: "Invalid Heartbeat ID", heartbeat_id: current.id }, 400);
    if (current) clearTimeout(current.timer);
    const id = randomUUID();
    const timer = setTimeout(() => expireHeartbeat(cred.api_key), heartbeatTimeoutMs);
    timer.unref?.();
    state.heartbeats.set(cred.api_key, { id, timer });
    return json({ heartbeat_id: id, status: "ok" });
  };

  // ---------------------------------------------------------------- routes

  const tokenQuery = (url: ReqUrl): { market: Market; tokenId: string } | Response => {
    const tokenId = url.searchParams.get("token_id");
    if (!tokenId) return json({ error: "token_id is required" }, 400);
    const market = /^[0-9]{1,78}$/.test(tokenId) ? venue.marketForToken(BigInt(tokenId).toString()) : null;
    if (!market) return json({ error: "market not found" }, 404);
    return { market, tokenId: BigInt(tokenId).toString() };
  };

  const handleVenue = async (req: Request, url: ReqUrl): Promise<Response> => {
    const path = url.pathname;
    const method = req.method;

    if (method === "GET") {
      if (path === "/ok") return new Response("OK");
      if (path === "/time") return json(Math.floor(Date.now() / 1000));
      if (path === "/version") return json({ version: orderVersion });
      if (path === "/markets") {
        const p = page(venue.allMarkets(), url.searchParams.get("next_cursor") || INITIAL_CURSOR, pageSize, END_CURSOR);
        if (!p) return json({ error: "invalid next_cursor" }, 400);
        return json({ ...p, data: p.data.map((m) => marketJson(m, venue)) });
      }
      if (path.startsWith("/markets/")) {
        const m = venue.marketByCondition(decodeURIComponent(path.slice("/markets/".length)));
        return m ? json(marketJson(m, venue)) : json({ error: "market not found" }, 404);
      }
      if (path.startsWith("/clob-markets/")) {
        const m = venue.marketByCondition(decodeURIComponent(path.slice("/clob-markets/".length)));
        return m ? json(clobMarketJson(m)) : json({ error: "market not found" }, 404);
      }
      if (path.startsWith("/markets-by-token/")) {
        const tokenId = decodeURIComponent(path.slice("/markets-by-token/".length));
        const m = venue.marketForToken(tokenId);
        if (!m) return json({ error: "market not found" }, 404);
        return json({ condition_id: m.condition_id, primary_token_id: m.tokens[0]?.token_id, secondary_token_id: m.tokens[1]?.token_id });
      }
      if (path === "/tick-size") {
        const q = tokenQuery(url);
        return q instanceof Response ? q : json({ minimum_tick_size: Number(q.market.tick_size) });
      }
      if (path === "/neg-risk") {
        const q = tokenQuery(url);
        return q instanceof Response ? q : json({ neg_risk: q.market.neg_risk });
      }
      if (path === "/book") {
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
    }

    // ---- L1 authentication
    if ((method === "POST" && path === "/auth/api-key") || (method === "GET" && path === "/auth/derive-api-key")) {
      const who = await verifyL1Headers(req.headers, chainId);
      if (typeof who === "string") return json({ error: who }, 401);
      const creds = deriveApiCreds(seed, who.address, who.nonce);
      const exists = state.credentials.has(creds.apiKey);
      if (method === "POST" && exists) return json({ error: "Could not create api key" }, 400);
      if (method === "GET" && !exists) return json({ error: "Could not derive api key!" }, 400);
      if (!exists) state.registerCredential({ api_key: creds.apiKey, api_secret: creds.secret, passphrase: creds.passphrase, address: who.address, scopes: ALL_SCOPES });
      return json(creds);
    }

    // ---- L2 authenticated routes
    const raw = await req.text();
    const cred = authenticate(req, path, raw);
    const authed = (fn: (c: SimCredential) => Response | Promise<Response>) => (cred instanceof Response ? cred : fn(cred));

    if (method === "GET" && path === "/auth/api-keys") return authed((c) => json({ apiKeys: [c.api_key] }));
    if (method === "DELETE" && path === "/auth/api-key") {
      return authed((c) => {
        state.credentials.delete(c.api_key);
        return json("OK");
      });
    }
    if (method === "GET" && path.startsWith("/data/order/")) {
      return authed(() => {
        const id = decodeURIComponent(path.slice("/data/order/".length));
        const rec = venue.order(id);
        return rec ? json(orderJson(rec, state.tradesByOrder.get(id))) : json({ error: "order not found" }, 404);
      });
    }
    if (method === "GET" && path === "/data/orders") {
      return authed((c) => {
        const q = url.searchParams;
        const open = state
          .liveOrdersOf(c.api_key)
          .map((id) => venue.order(id)!)
          .filter((o) => (!q.get("id") || o.id === q.get("id")) && (!q.get("market") || o.condition_id === q.get("market")) && (!q.get("asset_id") || o.token_id === q.get("asset_id")));
        const p = page(open, q.get("next_cursor"), dataPageSize, END_CURSOR);
        if (!p) return json({ error: "invalid next_cursor" }, 400);
        return json({ ...p, data: p.data.map((o) => orderJson(o, state.tradesByOrder.get(o.id))) });
      });
    }
    if (method === "GET" && path === "/data/trades") {
      return authed((c) => {
        const q = url.searchParams;
        const before = q.get("before");
        const after = q.get("after");
        const mine = state.trades.filter((t) => {
          const taker = venue.order(t.taker_order_id);
          const maker = venue.order(t.maker_order_id);
          if (taker?.owner !== c.api_key && maker?.owner !== c.api_key) return false;
          const secs = Math.floor(t.at_ms / 1000);
          return (
            (!q.get("id") || t.id === q.get("id")) &&
            (!q.get("asset_id") || t.token_id === q.get("asset_id")) &&
            (!q.get("market") || taker?.condition_id === q.get("market")) &&
            (!q.get("maker_address") || [taker?.maker, maker?.maker].some((a) => a?.toLowerCase() === q.get("maker_address")!.toLowerCase())) &&
            (!before || secs < Number(before)) &&
            (!after || secs > Number(after))
          );
        });
        const p = page(mine, q.get("next_cursor"), dataPageSize, END_CURSOR);
        if (!p) return json({ error: "invalid next_cursor" }, 400);
        return json({ ...p, data: p.data.map((t) => tradeJson(t, venue, c.api_key)) });
      });
    }
    if (method === "POST" && path === "/order") {
      return authed((c) => {
        const body = parseJson(raw);
        if (body === undefined) return json({ error: "Invalid order payload: not JSON" }, 400);
        const a = submitOne(c, body);
        return a instanceof Promise ? a.then((x) => json(x.body, x.status)) : json(a.body, a.status);
      });
    }
    if (method === "POST" && path === "/orders") {
      return authed(async (c) => {
        const body = parseJson(raw);
        if (!Array.isArray(body) || body.length === 0) return json({ error: "body must be a non-empty JSON array of orders" }, 400);
        if (body.length > MAX_BATCH_ORDERS) return json({ error: `at most ${MAX_BATCH_ORDERS} orders per batch` }, 400);
        const out: Record<string, unknown>[] = [];
        for (const p of body) {
          const a = await submitOne(c, p);
          out.push(a.status === 200 ? a.body : { success: false, errorMsg: String(a.body.error ?? "order refused"), orderID: "", status: "" });
        }
        return json(out);
      });
    }
    if (method === "DELETE" && (path === "/order" || path === "/orders")) {
      return authed((c) => {
        let ids: string[];
        try {
          const body = JSON.parse(raw);
          ids = path === "/order" ? [body?.orderID] : body;
          if (!Array.isArray(ids) || ids.length === 0 || !ids.every((x) => typeof x === "string" && x)) throw new Error();
        } catch {
          return json({ error: path === "/order" ? "body must be {orderID}" : "body must be a JSON array of order ids" }, 400);
        }
        const unique = [...new Set(ids)];
        return cancelRoute(req, c, unique, () => unique);
      });
    }
    if (method === "DELETE" && path === "/cancel-all") return authed((c) => cancelRoute(req, c, null, () => state.liveOrdersOf(c.api_key)));
    if (method === "DELETE" && path === "/cancel-market-orders") {
      return authed((c) => {
        const body = raw ? parseJson(raw) : {};
        if (!body || typeof body !== "object" || Array.isArray(body)) return json({ error: "body must be {market?, asset_id?}" }, 400);
        const { market, asset_id } = body as { market?: unknown; asset_id?: unknown };
        if ((market !== undefined && typeof market !== "string") || (asset_id !== undefined && typeof asset_id !== "string")) {
          return json({ error: "market and asset_id must be strings" }, 400);
        }
        return cancelRoute(req, c, null, () =>
          state.liveOrdersOf(c.api_key).filter((id) => {
            const o = venue.order(id)!;
            return (!market || o.condition_id.toLowerCase() === market.toLowerCase()) && (!asset_id || o.token_id === asset_id);
          }),
        );
      });
    }
    if (method === "POST" && path === "/v1/heartbeats") {
      return authed((c) => {
        const body = raw ? parseJson(raw) : {};
        return heartbeat(c, body && typeof body === "object" ? (body as { heartbeat_id?: unknown }).heartbeat_id : undefined);
      });
    }
    return json({ error: `no route ${method} ${path}` }, 404);
  };

  const handleSim = async (req: Request, url: ReqUrl): Promise<Response> => {
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
    if (req.method === "POST" && path === "/_sim/wallets") {
      const b = await readJson(req);
      const isAddress = (v: unknown) => typeof v === "string" && /^0x[0-9a-fA-F]{40}$/.test(v);
      if (!b || !isAddress(b.wallet) || !isAddress(b.owner)) return json({ error: "wallet and owner must be addresses" }, 400);
      state.registerWallet(b.wallet, b.owner);
      return json({ ok: true, wallet: b.wallet, owner: b.owner }, 201);
    }
    if (req.method === "POST" && path === "/_sim/faults") {
      const next = mergeFaults(state.faults, await readJson(req));
      if (typeof next === "string") return json({ error: next }, 400);
      state.faults = next;
      return json(state.faults);
    }
    if (req.method === "GET" && path === "/_sim/faults") return json(state.faults);
    if (req.method === "POST" && path === "/_sim/ws/drop") {
      const b = await readJson(req);
      const channel = b?.channel;
      if (channel !== undefined && channel !== "market" && channel !== "user") return json({ error: "channel must be market or user" }, 400);
      return json({ dropped: channels.drop(channel as SimChannel | undefined) });
    }
    if (req.method === "GET" && path === "/_sim/stats") return json(state.stats());
    if (req.method === "GET" && path === "/_sim/chain") {
      return opts.chain ? json(opts.chain.describe()) : json({ error: "the simulator was started without --chain" }, 404);
    }
    if (req.method === "POST" && path === "/_sim/reset") {
      state.reset();
      // A cancel still held by an earlier hang fault is answered now (503), so no test inherits it.
      for (const release of [...held]) release();
      return json({ ok: true });
    }
    return json({ error: `no route ${req.method} ${path}` }, 404);
  };

  const server = Bun.serve<SimSocketData, never>({
    port: opts.port ?? 0,
    hostname: opts.hostname ?? "127.0.0.1",
    idleTimeout: 0, // injected latencies and held cancels may exceed the default 10 s
    websocket: {
      idleTimeout: 0,
      open: (ws) => channels.open(ws),
      message: (ws, m) => channels.message(ws, m),
      close: (ws) => channels.close(ws),
    },
    async fetch(req, srv) {
      const url = requestUrl(req.url);
      try {
        if (url.pathname.startsWith("/_sim/")) return await handleSim(req, url);
        if (url.pathname === "/ws/market" || url.pathname === "/ws/user") {
          const route = `GET ${url.pathname}`;
          state.routes.set(route, (state.routes.get(route) ?? 0) + 1);
          if (channels.refuseUpgrade()) return json({ error: "Service Unavailable (simulated fault)" }, 503);
          const channel: SimChannel = url.pathname === "/ws/market" ? "market" : "user";
          if (srv.upgrade(req, { data: { channel, subscribed: false, assets: new Set<string>() } })) return undefined as unknown as Response;
          return json({ error: "expected a WebSocket upgrade" }, 400);
        }
        const route = `${req.method} ${url.pathname.startsWith("/data/order/") ? "/data/order/{id}" : url.pathname}`;
        state.routes.set(route, (state.routes.get(route) ?? 0) + 1);
        if (state.faults.latency_ms > 0) await delay(state.faults.latency_ms, req);
        return await handleVenue(req, url);
      } catch (err) {
        return json({ error: `simulator error: ${(err as Error)?.message ?? String(err)}` }, 500);
      }
    },
  });

  const port = server.port as number;
  return {
    url: `http://${opts.hostname ?? "127.0.0.1"}:${port}`,
    wsUrl: `ws://${opts.hostname ?? "127.0.0.1"}:${port}`,
    port,
    state,
    async stop() {
      stopping.abort();
      state.stopHeartbeats();
      channels.stop();
      for (const release of [...held]) release();
      await server.stop(true);
    },
  };
}

/** What the routes read of a request's URL. */
type ReqUrl = Pick<URL, "pathname" | "searchParams">;

const PLAIN_PATH = /^\/[A-Za-z0-9_/-]*$/;

/**
 * The request's path, without parsing the URL when it is plain (letters, digits, "_", "-" and "/", no
 * query: the URL parser would leave it as it is); any other URL is parsed (dot segments, escapes, a query).
 */
function requestUrl(href: string): ReqUrl {
  const start = href.indexOf("/", href.indexOf("//") + 2);
  if (start > 0) {
    const pathname = href.slice(start);
    if (PLAIN_PATH.test(pathname)) return { pathname, searchParams: new URLSearchParams() };
  }
  return new URL(href);
}

interface ParsedPost {
  order: OrderMessage;
  signature: string;
  owner: string;
  orderType: OrderType;
  expiration: string;
}

/** One order payload (the official client's orderToJsonV2, any key order) into an OrderMessage; a string is an error. */
function parsePostOrder(b: any): ParsedPost | string {
  if (!b || typeof b !== "object" || Array.isArray(b)) return "Invalid order payload: not an object";
  const o = b.order;
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

/** Each credential's HMAC-SHA256 hasher keyed with its secret (decoded once), copied for each message. */
const hmacKeys = new WeakMap<SimCredential, Bun.CryptoHasher>();

/**
 * The L2 check of research/polymarket-live.md: POLY_SIGNATURE is url-safe base64 (padding kept) of
 * HMAC-SHA256 under the base64-decoded secret of timestamp + METHOD + path (`head`) + `body`; either base64
 * alphabet is accepted, compared in constant time (as the service's l2-auth.ts signs it).
 */
function verifyL2(cred: SimCredential, head: string, body: string, signature: string): boolean {
  let keyed = hmacKeys.get(cred);
  if (!keyed) hmacKeys.set(cred, (keyed = new Bun.CryptoHasher("sha256", decodeSecret(cred.api_secret))));
  // 32 bytes are 43 base64 characters and one "=": url-safe base64 with its padding kept.
  const expected = Buffer.from(`${keyed.copy().update(head).update(body).digest("base64url")}=`);
  const got = Buffer.from(urlSafe(signature.trim()));
  return expected.length === got.length && timingSafeEqual(expected, got);
}

function urlSafe(b64: string): string {
  return b64.includes("+") || b64.includes("/") ? b64.replace(/\+/g, "-").replace(/\//g, "_") : b64;
}

/** Two addresses equal but for case. */
function sameAddress(a: string, b: string): boolean {
  return a === b || a.toLowerCase() === b.toLowerCase();
}

/** Units as decimal text (fromUnits), 0 without the arithmetic. */
function amountText(units: bigint, decimals?: number): string {
  return units === 0n ? "0" : fromUnits(units, decimals);
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

async function readJson(req: Request): Promise<any> {
  try {
    return await req.json();
  } catch {
    return null;
  }
}

/** Copied into each answer (a Response takes a copy of the headers it is given). */
const JSON_HEADERS = new Headers({ "Content-Type": "application/json" });

function json(body: unknown, status = 200, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { status, headers: headers ? { "Content-Type": "application/json", ...headers } : JSON_HEADERS });
}
