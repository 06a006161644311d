/**
 * A live local order book per outcome token, kept from the venue's market channel (`/ws/market`,
 * research/polymarket-live.md §1): a `book` event replaces the token's book, a `price_change` entry sets
 * one level to its new absolute size ("0" removes it), `last_trade_price` updates the last price. There
 * are no sequence numbers: deltas apply only to a book whose snapshot arrived, and every (re)subscribe
 * brings a fresh snapshot.
 *
 * - A token is subscribed on its first `book(token)` and dropped after `idleMs` without a read.
 * - At most `maxTokensPerConnection` (200) tokens per connection; more tokens open more connections.
 * - The text `PING` every `pingIntervalMs` (10 s) on every subscribed connection; a connection that has
 *   sent nothing (not even `PONG`) for three intervals is taken as dead and reconnected.
 * - After a disconnect the connection's books are stale (`book()` answers null) until the
 *   resubscription's snapshot arrives; reconnection with exponential backoff and jitter.
 *
 * WebSocket framing comes from the runtime's WebSocket client (Bun's, or any WHATWG-compatible one).
 */
import type { BookLevel, OrderBook } from "../../domain/market.ts";
import { type Clock, systemClock } from "../../domain/clock.ts";
import { toUnits } from "../../domain/units.ts";

export interface MarketChannelOptions {
  /** The market channel's URL, e.g. wss://ws-subscriptions-clob.polymarket.com/ws/market. */
  url: string;
  clock?: Clock;
  maxTokensPerConnection?: number;
  pingIntervalMs?: number;
  /** A token not read for this long is unsubscribed and its book dropped (default 10 min). */
  idleMs?: number;
  backoffMinMs?: number;
  backoffMaxMs?: number;
  /** WebSocket constructor (default: the runtime's global WebSocket). */
  WebSocket?: typeof WebSocket;
  /** Told of connection changes (logging); never given message contents. */
  onState?: (e: { connection: number; state: "open" | "closed"; tokens: number; attempt?: number }) => void;
}

export interface MarketChannelStats {
  connections: number;
  tokens: number;
  synced: number;
  reconnects: number;
  messages: number;
}

interface LocalBook {
  token: string;
  conn: Conn;
  synced: boolean;
  bids: Map<bigint, BookLevel>;
  asks: Map<bigint, BookLevel>;
  lastTrade: string | null;
  /** Local receipt time of the last snapshot or delta (epoch ms). */
  updatedAt: number;
  lastRead: number;
  cached: OrderBook | null;
}

interface Conn {
  id: number;
  ws: WebSocket | null;
  open: boolean;
  /** The initial `type: market` message went out on the current socket. */
  subscribed: boolean;
  tokens: Set<string>;
  attempt: number;
  retryTimer: ReturnType<typeof setTimeout> | null;
  lastHeard: number;
  lastPing: number;
  closed: boolean;
}

export class MarketChannel {
  private readonly url: string;
  private readonly clock: Clock;
  private readonly maxPerConn: number;
  private readonly pingMs: number;
  private readonly idleMs: number;
  private readonly backoffMin: number;
  private readonly backoffMax: number;
  private readonly WS: typeof WebSocket;
  private readonly onState?: MarketChannelOptions["onState"];
  private readonly books = new Map<string, LocalBook>();
  private readonly conns: Conn[] = [];
  private nextId = 1;
  private timer: ReturnType<typeof setInterval> | null = null;
  private closed = false;
  private reconnects = 0;
  private messages = 0;

  constructor(opts: MarketChannelOptions) {
    this.url = opts.url;
    this.clock = opts.clock ?? systemClock;
    this.maxPerConn = opts.maxTokensPerConnection ?? 200;
    this.pingMs = opts.pingIntervalMs ?? 10_000;
    this.idleMs = opts.idleMs ?? 600_000;
    this.backoffMin = opts.backoffMinMs ?? 250;
    this.backoffMax = opts.backoffMaxMs ?? 5_000;
    this.WS = opts.WebSocket ?? globalThis.WebSocket;
    this.onState = opts.onState;
    this.timer = setInterval(() => this.tick(), Math.min(this.pingMs, 1_000));
    this.timer.unref?.();
  }

  /**
   * The token's live book, or null while it has none (first use, or stale after a disconnect until
   * the resubscription's snapshot). Subscribes the token on first use. `timestamp_ms` is the local time
   * of the book's last update.
   */
  book(token: string): OrderBook | null {
    if (this.closed) return null;
    const now = this.clock.now();
    let b = this.books.get(token);
    if (!b) {
      b = this.subscribe(token, now);
    }
    b.lastRead = now;
    if (!b.synced) return null;
    if (!b.cached) {
      b.cached = {
        token_id: token,
        bids: sortLevels(b.bids, true),
        asks: sortLevels(b.asks, false),
        last_trade_price: b.lastTrade,
        timestamp_ms: b.updatedAt,
      };
    }
    return b.cached;
  }

  /** True when the token is subscribed and its book in sync. */
  isSynced(token: string): boolean {
    return this.books.get(token)?.synced === true;
  }

  stats(): MarketChannelStats {
    let synced = 0;
    for (const b of this.books.values()) if (b.synced) synced++;
    return { connections: this.conns.filter((c) => c.open).length, tokens: this.books.size, synced, reconnects: this.reconnects, messages: this.messages };
  }

  /** Tokens per connection (tests, metrics). */
  connectionSizes(): number[] {
    return this.conns.map((c) => c.tokens.size);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const c of this.conns) this.shut(c);
    this.conns.length = 0;
    this.books.clear();
  }

  // ---------------------------------------------------------------- subscriptions

  private subscribe(token: string, now: number): LocalBook {
    let conn = this.conns.find((c) => c.tokens.size < this.maxPerConn);
    if (!conn) {
      conn = { id: this.nextId++, ws: null, open: false, subscribed: false, tokens: new Set(), attempt: 0, retryTimer: null, lastHeard: now, lastPing: 0, closed: false };
      this.conns.push(conn);
    }
    const b: LocalBook = { token, conn, synced: false, bids: new Map(), asks: new Map(), lastTrade: null, updatedAt: 0, lastRead: now, cached: null };
    this.books.set(token, b);
    conn.tokens.add(token);
    if (conn.open && conn.subscribed) this.sendJson(conn, { operation: "subscribe", assets_ids: [token] });
    else if (conn.open) this.sendInitial(conn);
    else if (!conn.ws && !conn.retryTimer) this.connect(conn);
    return b;
  }

  private unsubscribe(b: LocalBook): void {
    const conn = b.conn;
    this.books.delete(b.token);
    conn.tokens.delete(b.token);
    if (conn.tokens.size === 0) {
      this.shut(conn);
      this.conns.splice(this.conns.indexOf(conn), 1);
      return;
    }
    if (conn.open && conn.subscribed) this.sendJson(conn, { operation: "unsubscribe", assets_ids: [b.token] });
  }

  private tick(): void {
    const now = this.clock.now();
    for (const b of [...this.books.values()]) if (now - b.lastRead > this.idleMs) this.unsubscribe(b);
    for (const c of this.conns) {
      if (!c.open || !c.subscribed) continue;
      if (now - c.lastHeard > 3 * this.pingMs) {
        // Silent for three PING intervals: dead. Reconnect.
        this.lost(c);
        continue;
      }
      if (now - c.lastPing >= this.pingMs) {
        c.lastPing = now;
        try {
          c.ws?.send("PING");
        } catch {
          // the close handler reconnects
        }
      }
    }
  }

  // ---------------------------------------------------------------- connections

  private connect(c: Conn): void {
    if (this.closed || c.closed) return;
    c.retryTimer = null;
    let ws: WebSocket;
    try {
      ws = new this.WS(this.url);
    } catch {
      this.retry(c);
      return;
    }
    c.ws = ws;
    c.open = false;
    c.subscribed = false;
    ws.onopen = () => {
      if (c.ws !== ws) return;
      c.open = true;
      c.lastHeard = this.clock.now();
      this.onState?.({ connection: c.id, state: "open", tokens: c.tokens.size, attempt: c.attempt });
      c.attempt = 0;
      this.sendInitial(c);
    };
    ws.onmessage = (ev) => {
      if (c.ws !== ws) return;
      c.lastHeard = this.clock.now();
      this.onMessage(c, typeof ev.data === "string" ? ev.data : String(ev.data));
    };
    ws.onclose = () => {
      if (c.ws === ws) this.lost(c);
    };
    ws.onerror = () => {
      // onclose follows
    };
  }

  private sendInitial(c: Conn): void {
    if (c.tokens.size === 0) return;
    c.lastPing = this.clock.now();
    c.subscribed = this.sendJson(c, { assets_ids: [...c.tokens], type: "market" });
  }

  /** The connection dropped: its books are stale until the resubscription's snapshot. */
  private lost(c: Conn): void {
    const ws = c.ws;
    c.ws = null;
    c.open = false;
    c.subscribed = false;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      try {
        ws.close();
      } catch {
        // already closed
      }
    }
    for (const t of c.tokens) {
      const b = this.books.get(t);
      if (b) {
        b.synced = false;
        b.cached = null;
      }
    }
    this.onState?.({ connection: c.id, state: "closed", tokens: c.tokens.size });
    if (!this.closed && !c.closed && c.tokens.size > 0) {
      this.reconnects++;
      this.retry(c);
    }
  }

  private retry(c: Conn): void {
    const base = Math.min(this.backoffMax, this.backoffMin * 2 ** c.attempt);
    c.attempt++;
    const delay = base / 2 + Math.random() * (base / 2);
    c.retryTimer = setTimeout(() => this.connect(c), delay);
    c.retryTimer.unref?.();
  }

  private shut(c: Conn): void {
    c.closed = true;
    if (c.retryTimer) clearTimeout(c.retryTimer);
    c.retryTimer = null;
    const ws = c.ws;
    c.ws = null;
    c.open = false;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      try {
        ws.close(1000);
      } catch {
        // already closed
      }
    }
  }

  private sendJson(c: Conn, m: unknown): boolean {
    try {
      c.ws?.send(JSON.stringify(m));
      return !!c.ws;
    } catch {
      return false;
    }
  }

  // ---------------------------------------------------------------- messages

  private onMessage(c: Conn, text: string): void {
    if (text[0] !== "{" && text[0] !== "[") return; // PONG, INVALID OPERATION, NO NEW ASSETS
    let m: unknown;
    try {
      m = JSON.parse(text);
    } catch {
      return;
    }
    this.messages++;
    const events = Array.isArray(m) ? m : [m];
    const now = this.clock.now();
    for (const e of events) {
      if (!e || typeof e !== "object") continue;
      const ev = e as Record<string, any>;
      switch (ev.event_type) {
        case "book":
          this.applyBook(c, ev, now);
          break;
        case "price_change":
          this.applyChanges(ev, now);
          break;
        case "last_trade_price": {
          const b = this.books.get(String(ev.asset_id));
          if (b && b.synced && typeof ev.price === "string") {
            b.lastTrade = ev.price;
            b.updatedAt = now;
            b.cached = null;
          }
          break;
        }
        default:
          break;
      }
    }
  }

  private applyBook(c: Conn, ev: Record<string, any>, now: number): void {
    const b = this.books.get(String(ev.asset_id));
    if (!b || b.conn !== c) return;
    b.bids = levelsOf(ev.bids);
    b.asks = levelsOf(ev.asks);
    if (typeof ev.last_trade_price === "string" && ev.last_trade_price !== "") b.lastTrade = ev.last_trade_price;
    b.synced = true;
    b.updatedAt = now;
    b.cached = null;
  }

  private applyChanges(ev: Record<string, any>, now: number): void {
    const list: unknown = ev.price_changes ?? ev.changes;
    if (!Array.isArray(list)) return;
    for (const x of list) {
      if (!x || typeof x !== "object") continue;
      const ch = x as Record<string, any>;
      const b = this.books.get(String(ch.asset_id ?? ev.asset_id));
      // Deltas apply only to a book whose snapshot arrived (no sequence numbers to check them by).
      if (!b || !b.synced) continue;
      const key = priceKey(ch.price);
      if (key === null || typeof ch.size !== "string") continue;
      const side = ch.side === "BUY" || ch.side === "buy" ? b.bids : ch.side === "SELL" || ch.side === "sell" ? b.asks : null;
      if (!side) continue;
      let size: bigint;
      try {
        size = ZERO_SIZE.test(ch.size) ? 0n : toUnits(ch.size, 18, "floor");
      } catch {
        continue;
      }
      if (size <= 0n) side.delete(key);
      else side.set(key, { price: ch.price, size: ch.size });
      b.updatedAt = now;
      b.cached = null;
    }
  }
}

/** Price texts read so far and their keys: a market's prices are a few hundred texts ("0.45", "0.455"). */
const priceKeys = new Map<string, bigint | null>();
const MAX_PRICE_KEYS = 10_000;

/** A size of zero ("0", "0.00"): the level is gone. */
const ZERO_SIZE = /^0+(?:\.0*)?$/;

function priceKey(p: unknown): bigint | null {
  if (typeof p !== "string") return null;
  const known = priceKeys.get(p);
  if (known !== undefined) return known;
  let key: bigint | null;
  try {
    key = toUnits(p, 18, "floor");
  } catch {
    key = null;
  }
  if (priceKeys.size >= MAX_PRICE_KEYS) priceKeys.clear();
  priceKeys.set(p, key);
  return key;
}

function levelsOf(arr: unknown): Map<bigint, BookLevel> {
  const out = new Map<bigint, BookLevel>();
  if (!Array.isArray(arr)) return out;
  for (const x of arr) {
    if (!x || typeof x !== "object") continue;
    const { price, size } = x as { price?: unknown; size?: unknown };
    const k = priceKey(price);
    if (k === null || typeof size !== "string") continue;
    try {
      if (toUnits(size, 18, "floor") <= 0n) continue;
    } catch {
      continue;
    }
    out.set(k, { price: price as string, size });
  }
  return out;
}

function sortLevels(m: Map<bigint, BookLevel>, desc: boolean): BookLevel[] {
  return [...m.entries()].sort((a, b) => (a[0] === b[0] ? 0 : (a[0] > b[0]) === desc ? -1 : 1)).map((e) => e[1]);
}
