/**
 * The simulator's WebSocket channels, in Polymarket's wire shapes (research/polymarket-live.md §1, §2):
 *
 *   /ws/market  → first message {"assets_ids": [...], "type": "market"} (a second one answers the text
 *                 "INVALID OPERATION"), then {"operation": "subscribe"|"unsubscribe", "assets_ids": [...]}.
 *                 Sends a `book` snapshot per asset on subscribe (a JSON array of events), `price_change`
 *                 deltas (absolute size per level, "0" removes it) when orders are placed, cancelled or
 *                 expire, and `last_trade_price` then a fresh `book` after a trade.
 *   /ws/user    → first message {"auth": {apiKey, secret, passphrase}, "type": "user", "markets"?: [condition
 *                 ids]}: the raw L2 credentials, as Polymarket takes them; wrong ones close the socket with
 *                 1008. Sends the key's `order` events (PLACEMENT, UPDATE, CANCELLATION with size_matched; a
 *                 GTD expiry is a CANCELLATION) and `trade` events (MATCHED, then MINED and CONFIRMED, or
 *                 RETRYING and FAILED under the trade_fail_ratio fault), once to each side of the trade.
 *   Both        → the text "PING" answers "PONG"; a PING before a valid subscription closes with 1008
 *                 "invalid subscription payload".
 *
 * Faults (SimFaults): ws_delay_ms delays every message sent; ws_drop_ratio drops that share of them;
 * ws_refuse_ratio refuses that share of upgrades (HTTP 503); POST /_sim/ws/drop closes open sockets
 * abruptly; trade_mine_ms spaces the trade statuses; trade_fail_ratio makes trades end FAILED.
 */
import { createHash } from "node:crypto";
import type { ServerWebSocket } from "bun";
import { fromUnits } from "../../domain/units.ts";
import { PRICE_DECIMALS, SIZE_DECIMALS } from "../markets-file.ts";
import type { PaperOrder, PaperVenue } from "../paper/paper-venue.ts";
import type { VenueSimState } from "./sim-state.ts";
import { type SimTrade, tradeJson } from "./sim-wire.ts";

export type SimChannel = "market" | "user";

export interface SimSocketData {
  channel: SimChannel;
  subscribed: boolean;
  /** market: the subscribed asset ids. */
  assets: Set<string>;
  /** user: the API key it follows, and its condition-id filter (null: every market). */
  apiKey?: string;
  markets?: Set<string> | null;
}

type Levels = Map<string, string>;

export type OrderEventType = "PLACEMENT" | "UPDATE" | "CANCELLATION";

export class SimChannels {
  private readonly sockets = new Set<ServerWebSocket<SimSocketData>>();
  /** What each market socket was last told of each book, per asset: price → size. */
  private readonly published = new Map<string, { bids: Levels; asks: Levels }>();
  private readonly touched = new Set<string>();
  private readonly traded = new Map<string, SimTrade>();
  /** GTD orders still live, watched for their expiry. */
  private readonly gtdLive = new Set<string>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private sweepTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly venue: PaperVenue,
    private readonly state: VenueSimState,
    private readonly random: () => number,
    sweepEveryMs = 100,
  ) {
    this.sweepTimer = setInterval(() => this.sweepExpired(), sweepEveryMs);
    this.sweepTimer.unref?.();
  }

  get openSockets(): number {
    return this.sockets.size;
  }

  /** True when this upgrade is to be refused (ws_refuse_ratio). */
  refuseUpgrade(): boolean {
    const r = this.state.faults.ws_refuse_ratio;
    return r > 0 && this.random() < r;
  }

  open(ws: ServerWebSocket<SimSocketData>): void {
    this.sockets.add(ws);
  }

  close(ws: ServerWebSocket<SimSocketData>): void {
    this.sockets.delete(ws);
  }

  /** Closes every open socket (of one channel) abruptly; answers how many. */
  drop(channel?: SimChannel): number {
    let n = 0;
    for (const ws of [...this.sockets]) {
      if (channel && ws.data.channel !== channel) continue;
      this.sockets.delete(ws);
      n++;
      const t = (ws as unknown as { terminate?: () => void }).terminate;
      if (typeof t === "function") t.call(ws);
      else ws.close(1006, "dropped");
    }
    return n;
  }

  stop(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const ws of [...this.sockets]) ws.close(1001, "server stopping");
    this.sockets.clear();
  }

  message(ws: ServerWebSocket<SimSocketData>, raw: string | Buffer): void {
    const text = typeof raw === "string" ? raw : raw.toString("utf8");
    const d = ws.data;
    if (text === "PING") {
      if (!d.subscribed) ws.close(1008, "invalid subscription payload");
      else ws.send("PONG");
      return;
    }
    let m: any;
    try {
      m = JSON.parse(text);
    } catch {
      ws.close(1008, "invalid subscription payload");
      return;
    }
    if (!m || typeof m !== "object") {
      ws.close(1008, "invalid subscription payload");
      return;
    }
    if (d.channel === "market") this.marketMessage(ws, m);
    else this.userMessage(ws, m);
  }

  private marketMessage(ws: ServerWebSocket<SimSocketData>, m: any): void {
    const d = ws.data;
    const ids: unknown = m.assets_ids;
    const list = Array.isArray(ids) ? ids.filter((x): x is string => typeof x === "string" && x !== "") : null;
    if (m.type === "market" || m.type === "MARKET") {
      if (d.subscribed) {
        ws.send("INVALID OPERATION");
        return;
      }
      if (!list) {
        ws.close(1008, "invalid subscription payload");
        return;
      }
      d.subscribed = true;
      this.subscribeAssets(ws, list, m.initial_dump !== false);
      return;
    }
    if ((m.operation === "subscribe" || m.operation === "unsubscribe") && list && d.subscribed) {
      if (m.operation === "unsubscribe") for (const a of list) d.assets.delete(a);
      else this.subscribeAssets(ws, list, m.initial_dump !== false);
      return;
    }
    ws.send("INVALID OPERATION");
  }

  private subscribeAssets(ws: ServerWebSocket<SimSocketData>, assets: string[], dump: boolean): void {
    const books: unknown[] = [];
    for (const a of assets) {
      if (ws.data.assets.has(a)) continue;
      ws.data.assets.add(a);
      if (!dump) continue;
      const b = this.bookEvent(a);
      if (b) books.push(b);
    }
    if (books.length > 0) this.send(ws, JSON.stringify(books));
  }

  private userMessage(ws: ServerWebSocket<SimSocketData>, m: any): void {
    const d = ws.data;
    if (d.subscribed) {
      if ((m.operation === "subscribe" || m.operation === "unsubscribe") && Array.isArray(m.markets)) {
        const ms = m.markets.filter((x: unknown): x is string => typeof x === "string").map((x: string) => x.toLowerCase());
        if (m.operation === "subscribe") {
          if (d.markets) for (const x of ms) d.markets.add(x);
        } else {
          d.markets ??= new Set();
          for (const x of ms) d.markets.delete(x);
        }
        return;
      }
      ws.send("INVALID OPERATION");
      return;
    }
    const a = m.auth;
    if ((m.type !== "user" && m.type !== "USER") || !a || typeof a !== "object") {
      ws.close(1008, "invalid subscription payload");
      return;
    }
    const cred = typeof a.apiKey === "string" ? this.state.credentials.get(a.apiKey) : undefined;
    if (!cred || a.secret !== cred.api_secret || (cred.passphrase && a.passphrase !== cred.passphrase)) {
      ws.close(1008, "invalid auth");
      return;
    }
    d.subscribed = true;
    d.apiKey = cred.api_key;
    d.markets = Array.isArray(m.markets) && m.markets.length > 0 ? new Set(m.markets.filter((x: unknown) => typeof x === "string").map((x: string) => x.toLowerCase())) : null;
  }

  // ---------------------------------------------------------------- what the engine did

  /** An order was accepted (after its matching). */
  placed(rec: PaperOrder, trades: SimTrade[]): void {
    this.touched.add(rec.token_id);
    if (rec.status === "live" && rec.expiration > 0) this.gtdLive.add(rec.id);
    this.orderEvent(rec, "PLACEMENT");
    for (const t of trades) {
      const maker = this.venue.order(t.maker_order_id);
      if (maker) {
        if (maker.status !== "live") this.gtdLive.delete(maker.id);
        this.orderEvent(maker, "UPDATE");
      }
      this.traded.set(t.token_id, t);
      this.tradeEvents(t);
    }
    // A FAK/FOK remainder killed, or a GTC/GTD that took all it could and rests: a killed one is closed now.
    if (rec.status === "unmatched" || ((rec.order_type === "FAK" || rec.order_type === "FOK") && rec.status !== "live" && rec.filled_size < rec.original_size)) {
      this.orderEvent(rec, "CANCELLATION");
    }
    this.flush();
  }

  /** An order was cancelled through the API (by its owner or its heartbeat's end). */
  cancelled(rec: PaperOrder): void {
    this.gtdLive.delete(rec.id);
    this.touched.add(rec.token_id);
    this.orderEvent(rec, "CANCELLATION");
  }

  /** GTD orders whose expiration passed leave the book now, each reported as a CANCELLATION. */
  sweepExpired(): void {
    if (this.gtdLive.size === 0) return;
    for (const id of [...this.gtdLive]) {
      const rec = this.venue.order(id); // expires the order's book as of now
      if (!rec || rec.status === "live") continue;
      this.gtdLive.delete(id);
      if (rec.status === "cancelled") {
        this.touched.add(rec.token_id);
        this.orderEvent(rec, "CANCELLATION");
      }
    }
    this.flush();
  }

  /** Sends the market channel what changed in the touched books since it was last told. */
  flush(): void {
    if (this.touched.size === 0 && this.traded.size === 0) return;
    const now = Date.now();
    const tokens = new Set([...this.touched, ...this.traded.keys()]);
    this.touched.clear();
    const traded = new Map(this.traded);
    this.traded.clear();
    const listening = [...this.sockets].filter((ws) => ws.data.channel === "market" && ws.data.subscribed);
    for (const token of tokens) {
      const audience = listening.filter((ws) => ws.data.assets.has(token));
      const book = this.venue.fullBook(token);
      const market = this.venue.marketForToken(token);
      if (!book || !market) continue;
      const bids: Levels = new Map(book.bids.map((l) => [l.price, l.size]));
      const asks: Levels = new Map(book.asks.map((l) => [l.price, l.size]));
      const before = this.published.get(token) ?? { bids: new Map(), asks: new Map() };
      this.published.set(token, { bids, asks });
      if (audience.length === 0) continue;
      const t = traded.get(token);
      const frames: string[] = [];
      if (t) {
        const taker = this.venue.order(t.taker_order_id);
        frames.push(
          JSON.stringify({
            event_type: "last_trade_price",
            asset_id: token,
            market: market.condition_id,
            price: fromUnits(t.price, PRICE_DECIMALS),
            size: fromUnits(t.size, SIZE_DECIMALS),
            side: taker?.side === "sell" ? "SELL" : "BUY",
            fee_rate_bps: "0",
            timestamp: String(now),
          }),
        );
        const b = this.bookEvent(token);
        if (b) frames.push(JSON.stringify(b));
      } else {
        const best_bid = book.bids[0]?.price ?? "0";
        const best_ask = book.asks[0]?.price ?? "1";
        const changes: Record<string, string>[] = [];
        for (const [side, now_, was] of [
          ["BUY", bids, before.bids],
          ["SELL", asks, before.asks],
        ] as const) {
          for (const [price, size] of now_) if (was.get(price) !== size) changes.push({ asset_id: token, price, size, side, hash: changeHash(token, price, size), best_bid, best_ask });
          for (const price of was.keys()) if (!now_.has(price)) changes.push({ asset_id: token, price, size: "0", side, hash: changeHash(token, price, "0"), best_bid, best_ask });
        }
        if (changes.length === 0) continue;
        frames.push(JSON.stringify({ market: market.condition_id, price_changes: changes, timestamp: String(now), event_type: "price_change" }));
      }
      for (const ws of audience) for (const f of frames) this.send(ws, f);
    }
  }

  // ---------------------------------------------------------------- events

  private bookEvent(token: string): Record<string, unknown> | null {
    const m = this.venue.marketForToken(token);
    const b = this.venue.fullBook(token);
    if (!m || !b) return null;
    this.published.set(token, { bids: new Map(b.bids.map((l) => [l.price, l.size])), asks: new Map(b.asks.map((l) => [l.price, l.size])) });
    const body: Record<string, unknown> = {
      event_type: "book",
      asset_id: token,
      market: m.condition_id,
      // Polymarket lists levels worst first: bids ascending, asks descending.
      bids: [...b.bids].reverse(),
      asks: [...b.asks].reverse(),
      timestamp: String(b.timestamp_ms),
      hash: "",
      last_trade_price: b.last_trade_price ?? "",
    };
    body.hash = createHash("sha1").update(JSON.stringify(body)).digest("hex");
    return body;
  }

  private orderEvent(rec: PaperOrder, type: OrderEventType): void {
    if (!rec.owner) return;
    const status = type === "CANCELLATION" ? "CANCELED" : rec.status === "live" ? "LIVE" : rec.status === "matched" ? "MATCHED" : rec.status.toUpperCase();
    const ev = {
      event_type: "order",
      id: rec.id,
      owner: rec.owner,
      order_owner: rec.owner,
      market: rec.condition_id,
      asset_id: rec.token_id,
      side: rec.side === "buy" ? "BUY" : "SELL",
      original_size: fromUnits(rec.original_size, SIZE_DECIMALS),
      size_matched: fromUnits(rec.filled_size, SIZE_DECIMALS),
      price: fromUnits(rec.price, PRICE_DECIMALS),
      associate_trades: this.state.tradesByOrder.get(rec.id) ?? null,
      outcome: rec.outcome,
      type,
      created_at: String(Math.floor(rec.created_at / 1000)),
      expiration: String(rec.expiration),
      order_type: rec.order_type,
      status,
      maker_address: rec.maker,
      timestamp: String(Math.floor(Date.now() / 1000)),
    };
    this.toUser(rec.owner, rec.condition_id, JSON.stringify(ev));
  }

  /** The trade's MATCHED event to each side, then its later statuses. */
  private tradeEvents(t: SimTrade): void {
    this.emitTrade(t);
    const step = this.state.faults.trade_mine_ms;
    const fail = this.state.faults.trade_fail_ratio > 0 && this.random() < this.state.faults.trade_fail_ratio;
    const next = fail ? (["RETRYING", "FAILED"] as const) : (["MINED", "CONFIRMED"] as const);
    next.forEach((status, i) => {
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          t.status = status;
          this.emitTrade(t);
        },
        step * (i + 1),
      );
      this.timers.add(timer);
    });
  }

  private emitTrade(t: SimTrade): void {
    const taker = this.venue.order(t.taker_order_id);
    const maker = this.venue.order(t.maker_order_id);
    const owners = new Set([taker?.owner, maker?.owner].filter((o): o is string => !!o && this.state.credentials.has(o)));
    for (const owner of owners) {
      const j = tradeJson(t, this.venue, owner);
      const ev = { event_type: "trade", type: "TRADE", ...j, trade_owner: owner, timestamp: j.last_update };
      this.toUser(owner, j.market, JSON.stringify(ev));
    }
  }

  private toUser(apiKey: string, market: string, frame: string): void {
    const m = market.toLowerCase();
    for (const ws of this.sockets) {
      const d = ws.data;
      if (d.channel !== "user" || !d.subscribed || d.apiKey !== apiKey) continue;
      if (d.markets && !d.markets.has(m)) continue;
      this.send(ws, frame);
    }
  }

  private send(ws: ServerWebSocket<SimSocketData>, frame: string): void {
    const f = this.state.faults;
    if (f.ws_drop_ratio > 0 && this.random() < f.ws_drop_ratio) return;
    if (f.ws_delay_ms > 0) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (this.sockets.has(ws)) ws.send(frame);
      }, f.ws_delay_ms);
      this.timers.add(timer);
      return;
    }
    ws.send(frame);
  }
}

function changeHash(token: string, price: string, size: string): string {
  return createHash("sha1").update(`${token}:${price}:${size}:${Date.now()}`).digest("hex");
}
