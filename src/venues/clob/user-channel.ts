/**
 * The venue's user channel (`/ws/user`, research/polymarket-live.md §2) for delegated agents, with a
 * REST catch-up after every (re)connect, as a source of VenueReports (src/domain/venue-report.ts).
 *
 * - One connection per credential set (`follow(id, open)`). The credentials are opened in-process only
 *   for the subscribe message and for the catch-up's signed reads, through `open` (the vault's
 *   withOpened, or a caller's equivalent); this module never stores them. It keeps only a SHA-256 of
 *   the API key, to recognise its own legs in a trade's `maker_orders`.
 * - Reconnection with exponential backoff and jitter; `PING` every 10 s; a connection silent for three
 *   intervals is taken as dead.
 * - After each connect (start-up included), once subscribed, and every `catchUpEveryMs` (5 min): GET /data/trades (after the last trade
 *   time seen, less a minute; at start-up after `since`) and GET /data/orders, both paged. Trades
 *   become fills as on the channel (source `rest`); orders the service holds open (`openOrders`) that
 *   the venue no longer lists are read with GET /data/order/{id}: a cancelled one is reported
 *   cancelled (or expired), and one the venue no longer knows with no trade seen in the catch-up is
 *   reported cancelled (Polymarket answers only active orders there).
 * - Events → reports: trade MATCHED/MINED/CONFIRMED/RETRYING → `fill` keyed `trade:<id>` with that
 *   status (one per leg of ours: the taker order, and each maker order whose owner is our key);
 *   FAILED → `fill_reverted` (trade_failed); order PLACEMENT → `placed`; CANCELLATION → `cancelled`, or
 *   `expired` for a GTD order whose expiration has passed; UPDATE → nothing (fills come from trades).
 *
 * Duplicates are expected (a trade's statuses, the catch-up repeating what the channel said): the
 * sink's fill key makes each fill count once.
 */
import { createHash } from "node:crypto";
import { type Clock, systemClock } from "../../domain/clock.ts";
import { toUnits } from "../../domain/units.ts";
import type { VenueCredentials } from "../../domain/venue-credentials.ts";
import type { FillStatus, OrderRef, VenueReport, VenueReportSink, VenueReportSource } from "../../domain/venue-report.ts";
import { l2Headers } from "./l2-auth.ts";

/** Opens a credential set for the duration of `use` (the vault's withOpened); never kept by the caller. */
export type OpenCredentials = <T>(use: (c: VenueCredentials) => Promise<T>) => Promise<T>;

export interface UserChannelLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

export interface UserChannelOptions {
  /** The user channel's URL, e.g. wss://ws-subscriptions-clob.polymarket.com/ws/user. */
  url: string;
  /** The venue's REST base URL, for the catch-up. */
  restUrl: string;
  sink: VenueReportSink;
  clock?: Clock;
  fetch?: typeof fetch;
  /** Per REST call (default 5000 ms). */
  timeoutMs?: number;
  pingIntervalMs?: number;
  backoffMinMs?: number;
  backoffMaxMs?: number;
  WebSocket?: typeof WebSocket;
  logger?: UserChannelLogger;
  /** A REST catch-up also runs this often on a subscribed connection (periodic reconciliation; default 5 min, 0: never). */
  catchUpEveryMs?: number;
}

export interface FollowOptions {
  /** Condition ids to follow; every market when absent. */
  markets?: string[];
  /** The start-up catch-up reads trades after this time (default: all the key's trades). */
  since?: Date;
  /** Venue order ids the service holds open for this credential set (the catch-up checks them). */
  openOrders?: () => Promise<string[]> | string[];
}

export interface FollowState {
  connected: boolean;
  subscribed: boolean;
  reconnects: number;
  catchUps: number;
  lastCatchUpError: string | null;
}

interface Follow {
  id: string;
  open: OpenCredentials;
  opts: FollowOptions;
  ws: WebSocket | null;
  keyTag: string | null;
  subscribed: boolean;
  attempt: number;
  retryTimer: ReturnType<typeof setTimeout> | null;
  lastHeard: number;
  lastPing: number;
  /** Latest trade time seen (epoch ms), for the next catch-up's `after`. */
  lastTradeAt: number;
  reconnects: number;
  catchUps: number;
  lastCatchUpError: string | null;
  catchUp: Promise<void> | null;
  /** When the last catch-up started (epoch ms). */
  lastCatchUpAt: number;
  stopped: boolean;
}

const END_CURSOR = "LTE=";
const MAX_PAGES = 1000;
/** The catch-up reads trades from this long before the last one seen (clock skew, same-second trades). */
const CATCH_UP_OVERLAP_MS = 60_000;

export class UserChannel {
  private readonly url: string;
  private readonly rest: string;
  private readonly sink: VenueReportSink;
  private readonly clock: Clock;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly pingMs: number;
  private readonly backoffMin: number;
  private readonly backoffMax: number;
  private readonly WS: typeof WebSocket;
  private readonly logger?: UserChannelLogger;
  private readonly catchUpEveryMs: number;
  private readonly follows = new Map<string, Follow>();
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(opts: UserChannelOptions) {
    this.url = opts.url;
    this.rest = opts.restUrl.replace(/\/+$/, "");
    this.sink = opts.sink;
    this.clock = opts.clock ?? systemClock;
    this.fetchImpl = opts.fetch ?? fetch;
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.pingMs = opts.pingIntervalMs ?? 10_000;
    this.backoffMin = opts.backoffMinMs ?? 250;
    this.backoffMax = opts.backoffMaxMs ?? 30_000;
    this.WS = opts.WebSocket ?? globalThis.WebSocket;
    this.logger = opts.logger;
    this.catchUpEveryMs = opts.catchUpEveryMs ?? 300_000;
  }

  /** Follows one credential set under `id` (one connection per id); a second call for the same id changes nothing. */
  follow(id: string, open: OpenCredentials, opts: FollowOptions = {}): void {
    if (this.follows.has(id)) return;
    const f: Follow = {
      id,
      open,
      opts,
      ws: null,
      keyTag: null,
      subscribed: false,
      attempt: 0,
      retryTimer: null,
      lastHeard: 0,
      lastPing: 0,
      lastTradeAt: opts.since ? opts.since.getTime() + CATCH_UP_OVERLAP_MS : 0,
      reconnects: 0,
      catchUps: 0,
      lastCatchUpError: null,
      catchUp: null,
      lastCatchUpAt: 0,
      stopped: false,
    };
    this.follows.set(id, f);
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), Math.min(this.pingMs, 1000));
      this.timer.unref?.();
    }
    this.connect(f);
  }

  /** Stops following `id` and closes its connection. */
  unfollow(id: string): void {
    const f = this.follows.get(id);
    if (!f) return;
    this.follows.delete(id);
    this.shut(f);
  }

  following(): string[] {
    return [...this.follows.keys()];
  }

  state(id: string): FollowState | null {
    const f = this.follows.get(id);
    if (!f) return null;
    return { connected: !!f.ws && f.ws.readyState === 1, subscribed: f.subscribed, reconnects: f.reconnects, catchUps: f.catchUps, lastCatchUpError: f.lastCatchUpError };
  }

  /** Resolves when the catch-up under way for `id` (if any) has finished. */
  async settled(id: string): Promise<void> {
    await this.follows.get(id)?.catchUp;
  }

  /** Runs a REST catch-up for `id` now (the periodic reconciliation calls this). */
  catchUpNow(id: string): Promise<void> {
    const f = this.follows.get(id);
    if (!f) return Promise.resolve();
    return this.startCatchUp(f);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const pending = [...this.follows.values()].map((f) => f.catchUp);
    for (const f of this.follows.values()) this.shut(f);
    this.follows.clear();
    await Promise.allSettled(pending);
  }

  // ---------------------------------------------------------------- connection

  private connect(f: Follow): void {
    if (f.stopped) return;
    f.retryTimer = null;
    let ws: WebSocket;
    try {
      ws = new this.WS(this.url);
    } catch (err) {
      this.logger?.warn("user channel: connect failed", { follow: f.id, error: (err as Error)?.message });
      this.retry(f);
      return;
    }
    f.ws = ws;
    f.subscribed = false;
    ws.onopen = () => {
      if (f.ws !== ws) return;
      f.lastHeard = this.clock.now();
      void this.subscribe(f, ws);
    };
    ws.onmessage = (ev) => {
      if (f.ws !== ws) return;
      f.lastHeard = this.clock.now();
      this.onMessage(f, typeof ev.data === "string" ? ev.data : String(ev.data));
    };
    ws.onclose = (ev) => {
      if (f.ws !== ws) return;
      this.lost(f, `closed ${ev.code}${ev.reason ? ` ${ev.reason}` : ""}`);
    };
    ws.onerror = () => {
      // onclose follows
    };
  }

  private async subscribe(f: Follow, ws: WebSocket): Promise<void> {
    try {
      // The credentials are open only while the subscribe message is built and sent.
      await f.open(async (c) => {
        if (!c || !c.api_key || !c.api_secret) throw new Error("no usable credentials");
        f.keyTag = tagOf(c.api_key);
        const m: Record<string, unknown> = { auth: { apiKey: c.api_key, secret: c.api_secret, passphrase: c.passphrase ?? "" }, type: "user" };
        if (f.opts.markets && f.opts.markets.length > 0) m.markets = f.opts.markets;
        ws.send(JSON.stringify(m));
      });
    } catch (err) {
      this.logger?.warn("user channel: subscribe failed", { follow: f.id, error: safeMessage(err) });
      if (f.ws === ws) this.lost(f, "subscribe failed");
      return;
    }
    if (f.ws !== ws) return;
    f.subscribed = true;
    f.lastPing = this.clock.now();
    this.logger?.info("user channel: subscribed", { follow: f.id, reconnects: f.reconnects });
    f.attempt = 0;
    void this.startCatchUp(f);
  }

  private lost(f: Follow, why: string): void {
    const ws = f.ws;
    f.ws = null;
    f.subscribed = false;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      try {
        ws.close();
      } catch {
        // already closed
      }
    }
    if (f.stopped) return;
    f.reconnects++;
    this.logger?.warn("user channel: disconnected", { follow: f.id, why });
    this.retry(f);
  }

  private retry(f: Follow): void {
    if (f.stopped) return;
    const base = Math.min(this.backoffMax, this.backoffMin * 2 ** f.attempt);
    f.attempt++;
    f.retryTimer = setTimeout(() => this.connect(f), base / 2 + Math.random() * (base / 2));
    f.retryTimer.unref?.();
  }

  private shut(f: Follow): void {
    f.stopped = true;
    if (f.retryTimer) clearTimeout(f.retryTimer);
    f.retryTimer = null;
    const ws = f.ws;
    f.ws = null;
    f.subscribed = false;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      try {
        ws.close(1000);
      } catch {
        // already closed
      }
    }
  }

  private tick(): void {
    const now = this.clock.now();
    for (const f of this.follows.values()) {
      if (!f.ws || !f.subscribed) continue;
      if (now - f.lastHeard > 3 * this.pingMs) {
        this.lost(f, "silent");
        continue;
      }
      if (now - f.lastPing >= this.pingMs) {
        f.lastPing = now;
        try {
          f.ws.send("PING");
        } catch {
          // onclose reconnects
        }
      }
      if (this.catchUpEveryMs > 0 && !f.catchUp && now - f.lastCatchUpAt >= this.catchUpEveryMs) void this.startCatchUp(f);
    }
  }

  // ---------------------------------------------------------------- events

  private onMessage(f: Follow, text: string): void {
    if (text[0] !== "{" && text[0] !== "[") return; // PONG and other plain texts
    let m: unknown;
    try {
      m = JSON.parse(text);
    } catch {
      return;
    }
    for (const e of Array.isArray(m) ? m : [m]) {
      if (!e || typeof e !== "object") continue;
      const ev = e as Record<string, any>;
      const now = new Date(this.clock.now());
      const reports = ev.event_type === "trade" ? tradeReports(ev, f.keyTag, "user_channel", now) : ev.event_type === "order" ? orderReports(ev, "user_channel", now) : [];
      if (ev.event_type === "trade") this.noteTradeTime(f, ev, now);
      this.deliver(reports);
    }
  }

  private noteTradeTime(f: Follow, ev: Record<string, any>, now: Date): void {
    const at = timeOf(ev.match_time ?? ev.matchtime ?? ev.timestamp, now).getTime();
    if (at > f.lastTradeAt) f.lastTradeAt = at;
  }

  private deliver(reports: VenueReport[]): void {
    for (const r of reports) {
      try {
        this.sink.report(r);
      } catch (err) {
        this.logger?.warn("user channel: the sink threw", { kind: r.kind, error: safeMessage(err) });
      }
    }
  }

  // ---------------------------------------------------------------- REST catch-up

  private startCatchUp(f: Follow): Promise<void> {
    if (f.catchUp) return f.catchUp;
    f.lastCatchUpAt = this.clock.now();
    const run = this.catchUp(f)
      .then(() => {
        f.catchUps++;
        f.lastCatchUpError = null;
      })
      .catch((err) => {
        f.lastCatchUpError = safeMessage(err);
        this.logger?.warn("user channel: catch-up failed", { follow: f.id, error: f.lastCatchUpError });
      })
      .finally(() => {
        f.catchUp = null;
      });
    f.catchUp = run;
    return run;
  }

  private async catchUp(f: Follow): Promise<void> {
    const held = f.opts.openOrders ? await f.opts.openOrders() : [];
    const now = new Date(this.clock.now());
    const after = f.lastTradeAt > 0 ? Math.max(0, Math.floor((f.lastTradeAt - CATCH_UP_OVERLAP_MS) / 1000)) : null;
    const { trades, closed } = await f.open(async (c) => {
      f.keyTag = tagOf(c.api_key);
      const trades = await this.pages(c, "/data/trades", after !== null ? { after: String(after) } : {});
      const open = await this.pages(c, "/data/orders", {});
      const openIds = new Set(open.map((o) => String(o.id ?? "").toLowerCase()));
      const closed: Array<{ id: string; order: Record<string, any> | null }> = [];
      for (const id of held) {
        if (openIds.has(id.toLowerCase())) continue;
        closed.push({ id, order: await this.readOrder(c, id) });
      }
      return { trades, closed };
    });
    const traded = new Set<string>();
    for (const t of trades) {
      const reports = tradeReports(t, f.keyTag, "rest", now);
      for (const r of reports) if (r.ref.venueOrderId) traded.add(r.ref.venueOrderId.toLowerCase());
      this.noteTradeTime(f, t, now);
      this.deliver(reports);
    }
    for (const { id, order } of closed) {
      if (order) {
        const status = String(order.status ?? "").toUpperCase().replace(/^ORDER_STATUS_/, "");
        if (status.startsWith("CANCEL")) this.deliver(orderReports({ ...order, id: order.id ?? id, type: "CANCELLATION" }, "rest", now));
        continue;
      }
      if (!traded.has(id.toLowerCase())) this.deliver([{ kind: "cancelled", ref: refOf(id), source: "rest", at: now }]);
    }
  }

  private async pages(c: VenueCredentials, path: string, query: Record<string, string>): Promise<Record<string, any>[]> {
    const out: Record<string, any>[] = [];
    let cursor = "MA==";
    for (let i = 0; i < MAX_PAGES; i++) {
      const body = await this.get(c, path, { ...query, next_cursor: cursor });
      if (body === null) throw new Error(`GET ${path}: not found`);
      const data: unknown = Array.isArray(body) ? body : body?.data;
      if (Array.isArray(data)) for (const x of data) if (x && typeof x === "object") out.push(x as Record<string, any>);
      const next = Array.isArray(body) ? END_CURSOR : body?.next_cursor;
      if (typeof next !== "string" || next === "" || next === END_CURSOR || next === cursor) break;
      cursor = next;
    }
    return out;
  }

  private async readOrder(c: VenueCredentials, id: string): Promise<Record<string, any> | null> {
    const body = await this.get(c, `/data/order/${encodeURIComponent(id)}`, {});
    return body && typeof body === "object" && !Array.isArray(body) && (body.id || body.status) ? body : null;
  }

  /** A signed GET; null for 404; throws on any other failure (the catch-up is retried at the next connect). */
  private async get(c: VenueCredentials, path: string, query: Record<string, string>): Promise<any> {
    const qs = new URLSearchParams(query).toString();
    const headers = { Accept: "application/json", ...l2Headers(c, { method: "GET", path, timestamp: Math.floor(this.clock.now() / 1000) }) };
    const res = await this.fetchImpl(`${this.rest}${path}${qs ? `?${qs}` : ""}`, { headers, signal: AbortSignal.timeout(this.timeoutMs) });
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
    const text = await res.text();
    return text ? JSON.parse(text) : null;
  }
}

// ------------------------------------------------------------------ events → reports (pure)

/** SHA-256 of an API key, so the key itself is not kept. */
export function tagOf(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex");
}

function refOf(id: string): OrderRef {
  const ref: OrderRef = { venueOrderId: id };
  if (/^0x[0-9a-fA-F]{64}$/.test(id)) ref.orderHash = id.toLowerCase() as `0x${string}`;
  return ref;
}

function timeOf(v: unknown, dflt: Date): Date {
  if (typeof v === "number" || (typeof v === "string" && /^[0-9]+(\.[0-9]+)?$/.test(v))) {
    const n = Number(v);
    if (Number.isFinite(n) && n > 0) return new Date(n < 1e12 ? n * 1000 : n);
  }
  if (typeof v === "string" && v) {
    const t = Date.parse(v);
    if (!Number.isNaN(t)) return new Date(t);
  }
  return dflt;
}

function unitsOf(v: unknown): bigint | null {
  if (typeof v !== "string" && typeof v !== "number") return null;
  const s = typeof v === "number" ? String(v) : v;
  if (s === "") return null;
  try {
    return toUnits(s, 6, "floor");
  } catch {
    return null;
  }
}

const TRADE_STATUS: Record<string, FillStatus | "failed"> = {
  MATCHED: "matched",
  MATCHED_NOT_BROADCASTED: "matched",
  MINED: "mined",
  CONFIRMED: "confirmed",
  RETRYING: "retrying",
  FAILED: "failed",
};

/**
 * A trade event (or a GET /data/trades item) as reports for our legs: the taker order when we were
 * the taker (trader_side TAKER, or the trade's owner is our key), and each maker order whose owner is
 * our key. `keyTag` is tagOf(our API key); null takes only the side trader_side names.
 */
export function tradeReports(t: Record<string, any>, keyTag: string | null, source: VenueReportSource, now: Date): VenueReport[] {
  const id = typeof t.id === "string" ? t.id : "";
  const rawStatus = String(t.status ?? "").toUpperCase().replace(/^TRADE_STATUS_/, "");
  const status = TRADE_STATUS[rawStatus];
  if (!id || !status) return [];
  const ours = (owner: unknown) => keyTag !== null && typeof owner === "string" && owner !== "" && tagOf(owner) === keyTag;
  const legs: Array<{ order: string; size: unknown; price: unknown; bps: unknown }> = [];
  const takerSide = String(t.trader_side ?? "").toUpperCase();
  if (typeof t.taker_order_id === "string" && t.taker_order_id && (takerSide === "TAKER" || ours(t.owner))) {
    legs.push({ order: t.taker_order_id, size: t.size, price: t.price, bps: t.fee_rate_bps });
  }
  if (Array.isArray(t.maker_orders)) {
    for (const mo of t.maker_orders) {
      if (!mo || typeof mo !== "object" || typeof mo.order_id !== "string") continue;
      if (ours(mo.owner) || (keyTag === null && takerSide === "MAKER")) legs.push({ order: mo.order_id, size: mo.matched_amount, price: mo.price, bps: mo.fee_rate_bps });
    }
  }
  const at = timeOf(t.match_time ?? t.matchtime ?? t.timestamp, now);
  const tx = typeof t.transaction_hash === "string" && /^0x[0-9a-fA-F]{64}$/.test(t.transaction_hash) ? (t.transaction_hash.toLowerCase() as `0x${string}`) : undefined;
  const out: VenueReport[] = [];
  for (const leg of legs) {
    const ref = refOf(leg.order);
    const fillKey = `trade:${id}`;
    if (status === "failed") {
      out.push({ kind: "fill_reverted", ref, source, fillKey, reason: "trade_failed", at });
      continue;
    }
    const shares = unitsOf(leg.size);
    const price = unitsOf(leg.price);
    if (shares === null || price === null || shares <= 0n) continue;
    const usdc = (shares * price) / 1_000_000n;
    const bps = unitsOf(leg.bps) ?? 0n; // 6-decimal units of basis points
    const fee = (usdc * bps) / 10_000n / 1_000_000n;
    out.push({
      kind: "fill",
      ref,
      source,
      fillKey,
      tradeId: id,
      ...(tx ? { txHash: tx } : {}),
      sharesUnits: shares,
      usdcUnits: usdc,
      feeUnits: fee,
      price: typeof leg.price === "string" ? leg.price : String(leg.price),
      status,
      at,
    });
  }
  return out;
}

/** An order event (or an order read with type CANCELLATION) as reports: placed, cancelled or expired. */
export function orderReports(o: Record<string, any>, source: VenueReportSource, now: Date): VenueReport[] {
  const id = typeof o.id === "string" ? o.id : "";
  if (!id) return [];
  const type = String(o.type ?? "").toUpperCase();
  const ref = refOf(id);
  const at = timeOf(o.timestamp, now);
  if (type === "PLACEMENT") return [{ kind: "placed", ref, source, at }];
  if (type !== "CANCELLATION") return [];
  const expiration = Number(o.expiration ?? 0);
  const orderType = String(o.order_type ?? "").toUpperCase();
  // Polymarket reports a GTD expiry as a cancellation: one at or after the order's expiration is its expiry.
  const expired = (orderType === "GTD" || orderType === "") && expiration > 0 && Math.floor(at.getTime() / 1000) + 1 >= expiration;
  const matched = unitsOf(o.size_matched);
  return [{ kind: expired ? "expired" : "cancelled", ref, source, ...(matched !== null ? { sizeMatchedUnits: matched } : {}), at }];
}

function safeMessage(err: unknown): string {
  // Error messages here come from this module, fetch and JSON.parse: none carries credential material.
  return (err as Error)?.message ?? String(err);
}
