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
 * Sending: what one tick of the event loop produced goes out together, after it (setImmediate): the
 * market channel's book changes of the tick as one price_change per token (the levels the tick's
 * placements, cancels and expiries touched, read from the book, against what the channel was last
 * told), and each socket's frames in one write (ServerWebSocket.cork), one event per frame as before.
 *
 * Faults (SimFaults): ws_delay_ms delays every message sent; ws_drop_ratio drops that share of them;
 * ws_refuse_ratio refuses that share of upgrades (HTTP 503); POST /_sim/ws/drop closes open sockets
 * abruptly; trade_mine_ms spaces the trade statuses; trade_fail_ratio makes trades end FAILED.
 */
import { createHash, randomBytes } from "node:crypto";
import type { ServerWebSocket } from "bun";
import { fromUnits } from "../../domain/units.ts";
import { PRICE_DECIMALS, SIZE_DECIMALS } from "../markets-file.ts";
import type { BookSide } from "../paper/order-book.ts";
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
type Socket = ServerWebSocket<SimSocketData>;
/** Per side, the prices of the levels whose size may have changed since the market channel was last told. */
interface DirtyLevels {
  buy: bigint[];
  sell: bigint[];
}

export type OrderEventType = "PLACEMENT" | "UPDATE" | "CANCELLATION";

export class SimChannels {
  private readonly sockets = new Set<Socket>();
  /** Subscribed user sockets by the API key they follow. */
  private readonly userByKey = new Map<string, Set<Socket>>();
  /** Subscribed market sockets by asset. */
  private readonly marketByAsset = new Map<string, Set<Socket>>();
  /** What the market channel was last told of each book, per asset: price → size (absent: not known). */
  private readonly published = new Map<string, { bids: Levels; asks: Levels }>();
  /** Per asset, the levels changed since the last flush, by side and price. */
  private readonly dirty = new Map<string, DirtyLevels>();
  /** Per asset, the last trade of each placement that traded since the last flush. */
  private readonly traded = new Map<string, SimTrade[]>();
  /** Frames to send at the end of this tick, per socket, in order. */
  private readonly outbox = new Map<Socket, string[]>();
  private scheduled = false;
  /** price_change entry hashes: opaque 40-hex strings, unique per entry. */
  private readonly hashSalt = randomBytes(16).toString("hex");
  private hashSeq = 0;
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

  open(ws: Socket): void {
    this.sockets.add(ws);
  }

  close(ws: Socket): void {
    this.forget(ws);
  }

  /** Closes every open socket (of one channel) abruptly; answers how many. */
  drop(channel?: SimChannel): number {
    let n = 0;
    for (const ws of [...this.sockets]) {
      if (channel && ws.data.channel !== channel) continue;
      this.forget(ws);
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
    this.userByKey.clear();
    this.marketByAsset.clear();
    this.outbox.clear();
  }

  /** The socket leaves every index (closed or dropped); its unsent frames are discarded. */
  private forget(ws: Socket): void {
    this.sockets.delete(ws);
    this.outbox.delete(ws);
    const d = ws.data;
    if (d.channel === "user") {
      if (d.apiKey !== undefined) removeFrom(this.userByKey, d.apiKey, ws);
    } else {
      for (const a of d.assets) removeFrom(this.marketByAsset, a, ws);
    }
  }

  message(ws: Socket, raw: string | Buffer): void {
    const text = typeof raw === "string" ? raw : raw.toString("utf8");
    const d = ws.data;
    if (text === "PING") {
      if (!d.subscribed) ws.close(1008, "invalid subscription payload");
      else this.reply(ws, "PONG");
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

  private marketMessage(ws: Socket, m: any): void {
    const d = ws.data;
    const ids: unknown = m.assets_ids;
    const list = Array.isArray(ids) ? ids.filter((x): x is string => typeof x === "string" && x !== "") : null;
    if (m.type === "market" || m.type === "MARKET") {
      if (d.subscribed) {
        this.reply(ws, "INVALID OPERATION");
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
      if (m.operation === "unsubscribe") {
        for (const a of list) if (d.assets.delete(a)) removeFrom(this.marketByAsset, a, ws);
      } else this.subscribeAssets(ws, list, m.initial_dump !== false);
      return;
    }
    this.reply(ws, "INVALID OPERATION");
  }

  private subscribeAssets(ws: Socket, assets: string[], dump: boolean): void {
    const books: unknown[] = [];
    for (const a of assets) {
      if (ws.data.assets.has(a)) continue;
      ws.data.assets.add(a);
      addTo(this.marketByAsset, a, ws);
      if (!dump) continue;
      const b = this.bookEvent(a);
      if (b) books.push(b);
    }
    if (books.length > 0) this.send(ws, JSON.stringify(books));
  }

  private userMessage(ws: Socket, m: any): void {
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
      this.reply(ws, "INVALID OPERATION");
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
    addTo(this.userByKey, cred.api_key, ws);
  }

  // ---------------------------------------------------------------- what the engine did

  /** An order was accepted (after its matching). */
  placed(rec: PaperOrder, trades: SimTrade[]): void {
    this.touch(rec);
    if (rec.status === "live" && rec.expiration > 0) this.gtdLive.add(rec.id);
    this.orderEvent(rec, "PLACEMENT");
    for (const t of trades) {
      const maker = this.venue.order(t.maker_order_id);
      if (maker) {
        this.touch(maker);
        if (maker.status !== "live") this.gtdLive.delete(maker.id);
        this.orderEvent(maker, "UPDATE");
      }
      this.tradeEvents(t);
    }
    if (trades.length > 0) {
      const last = trades[trades.length - 1];
      const list = this.traded.get(last.token_id);
      if (list) list.push(last);
      else this.traded.set(last.token_id, [last]);
    }
    // A FAK/FOK remainder killed, or a GTC/GTD that took all it could and rests: a killed one is closed now.
    if (rec.status === "unmatched" || ((rec.order_type === "FAK" || rec.order_type === "FOK") && rec.status !== "live" && rec.filled_size < rec.original_size)) {
      this.orderEvent(rec, "CANCELLATION");
    }
    this.schedule();
  }

  /** An order was cancelled through the API (by its owner or its heartbeat's end). */
  cancelled(rec: PaperOrder): void {
    this.gtdLive.delete(rec.id);
    this.touch(rec);
    this.orderEvent(rec, "CANCELLATION");
    this.schedule();
  }

  /** A GTD order left its book expired (the engine tells as it happens): its level changed. */
  expired(rec: PaperOrder): void {
    this.touch(rec);
    this.schedule();
  }

  /** GTD orders whose expiration passed leave the book now, each reported as a CANCELLATION. */
  sweepExpired(): void {
    if (this.gtdLive.size === 0) return;
    for (const id of [...this.gtdLive]) {
      const rec = this.venue.order(id); // expires the order's book as of now
      if (!rec || rec.status === "live") continue;
      this.gtdLive.delete(id);
      if (rec.status === "cancelled") {
        this.touch(rec);
        this.orderEvent(rec, "CANCELLATION");
      }
    }
    this.flush();
  }

  /** The order's level may have changed. */
  private touch(rec: PaperOrder): void {
    let levels = this.dirty.get(rec.token_id);
    if (!levels) this.dirty.set(rec.token_id, (levels = { buy: [], sell: [] }));
    const prices = levels[rec.side];
    if (!prices.includes(rec.price)) prices.push(rec.price);
  }

  /** Sends what is pending (market changes, then every socket's frames) at the end of this tick. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Sends the market channel what changed in the touched books since it was last told, then every socket's pending frames. */
  flush(): void {
    if (this.dirty.size > 0 || this.traded.size > 0) this.publishBooks();
    this.sendOutbox();
  }

  private publishBooks(): void {
    const now = String(Date.now());
    // The touched books, then the traded ones not touched; the books of this moment only (telling one may
    // expire orders, which touches its book again for the next flush).
    const tokens = [...this.dirty.keys()];
    for (const t of this.traded.keys()) if (!this.dirty.has(t)) tokens.push(t);
    for (const token of tokens) this.publishBook(token, now);
  }

  private publishBook(token: string, now: string): void {
    // Read first: expiring what is due may touch more levels of this book.
    const book = this.venue.bookLevels(token);
    const touched = this.dirty.get(token);
    this.dirty.delete(token);
    const trades = this.traded.get(token);
    this.traded.delete(token);
    const market = this.venue.marketForToken(token);
    const audience = this.marketByAsset.get(token);
    if (!book || !market || !audience || audience.size === 0) {
      // Nobody listens: what it was told is forgotten, the next one is told the levels as they are.
      this.published.delete(token);
      return;
    }
    const frames: string[] = [];
    if (trades) {
      for (const t of trades) {
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
            timestamp: now,
          }),
        );
      }
      const b = this.bookEvent(token);
      if (b) frames.push(JSON.stringify(b));
    } else if (touched) {
      let told = this.published.get(token);
      if (!told) this.published.set(token, (told = { bids: new Map(), asks: new Map() }));
      const bid = book.bestPrice("buy");
      const ask = book.bestPrice("sell");
      const best_bid = bid === null ? "0" : priceText(bid);
      const best_ask = ask === null ? "1" : priceText(ask);
      const changes: Record<string, string>[] = [];
      // Bids then asks, each best first.
      for (const side of SIDES) {
        const prices = touched[side];
        if (prices.length === 0) continue;
        const levels = side === "buy" ? told.bids : told.asks;
        if (prices.length > 1) prices.sort(side === "buy" ? (a, b) => cmp(b, a) : cmp);
        for (const p of prices) {
          const price = priceText(p);
          const total = book.levelTotal(side, p);
          let size: string;
          if (total > 0n) {
            size = fromUnits(total, SIZE_DECIMALS);
            if (levels.get(price) === size) continue;
            levels.set(price, size);
          } else {
            if (!levels.delete(price)) continue;
            size = "0";
          }
          changes.push({ asset_id: token, price, size, side: side === "buy" ? "BUY" : "SELL", hash: this.changeHash(), best_bid, best_ask });
        }
      }
      if (changes.length === 0) return;
      frames.push(JSON.stringify({ market: market.condition_id, price_changes: changes, timestamp: now, event_type: "price_change" }));
    }
    for (const ws of audience) for (const f of frames) this.send(ws, f);
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
    // Built only for a key some socket follows.
    if (!rec.owner || !this.userByKey.has(rec.owner)) return;
    const status = type === "CANCELLATION" ? "CANCELED" : rec.status === "live" ? "LIVE" : rec.status === "matched" ? "MATCHED" : rec.status.toUpperCase();
    const ev = {
      event_type: "order",
      id: rec.id,
      owner: rec.owner,
      order_owner: rec.owner,
      market: rec.condition_id,
      asset_id: rec.token_id,
      side: rec.side === "buy" ? "BUY" : "SELL",
      original_size: sizeText(rec.original_size),
      size_matched: sizeText(rec.filled_size),
      price: priceText(rec.price),
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
    this.toUser(rec.owner, rec.condition_id, ev);
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
          this.flush();
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
      if (!this.userByKey.has(owner)) continue;
      const j = tradeJson(t, this.venue, owner);
      const ev = { event_type: "trade", type: "TRADE", ...j, trade_owner: owner, timestamp: j.last_update };
      this.toUser(owner, j.market, ev);
    }
  }

  /** One user-channel event to the key's sockets that follow its market (serialized once, if any does). */
  private toUser(apiKey: string, market: string, ev: object): void {
    const sockets = this.userByKey.get(apiKey);
    if (!sockets) return;
    let m: string | undefined;
    let frame: string | undefined;
    for (const ws of sockets) {
      const d = ws.data;
      if (d.markets && !d.markets.has((m ??= market.toLowerCase()))) continue;
      this.send(ws, (frame ??= JSON.stringify(ev)));
    }
  }

  /** A control answer (PONG, INVALID OPERATION): after the frames already pending for the socket. */
  private reply(ws: Socket, text: string): void {
    if (this.outbox.has(ws)) this.queue(ws, text);
    else ws.send(text);
  }

  private send(ws: Socket, frame: string): void {
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
    this.queue(ws, frame);
  }

  private queue(ws: Socket, frame: string): void {
    const pending = this.outbox.get(ws);
    if (pending) pending.push(frame);
    else this.outbox.set(ws, [frame]);
    this.schedule();
  }

  /** Every socket's pending frames, one write per socket. */
  private sendOutbox(): void {
    if (this.outbox.size === 0) return;
    for (const [ws, frames] of this.outbox) {
      if (frames.length === 1) ws.send(frames[0]);
      else ws.cork(() => {
        for (const f of frames) ws.send(f);
      });
    }
    this.outbox.clear();
  }

  private changeHash(): string {
    // Polymarket's entry hash is an opaque 40-hex string (research/polymarket-live.md §1.2): unique per entry here.
    return Bun.SHA1.hash(`${this.hashSalt}:${++this.hashSeq}`, "hex") as string;
  }
}

const SIDES: readonly BookSide[] = ["buy", "sell"];

/** Decimal text of units (fromUnits), remembered for the last few thousand values: prices are on a tick grid, sizes repeat. */
function unitsTextMemo(decimals: number): (units: bigint) => string {
  const texts = new Map<bigint, string>();
  return (units) => {
    let t = texts.get(units);
    if (t === undefined) {
      if (texts.size >= 4096) texts.clear();
      texts.set(units, (t = fromUnits(units, decimals)));
    }
    return t;
  };
}

const priceText = unitsTextMemo(PRICE_DECIMALS);
const sizeText = unitsTextMemo(SIZE_DECIMALS);

function cmp(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function addTo<K, V>(index: Map<K, Set<V>>, key: K, value: V): void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(value);
}

function removeFrom<K, V>(index: Map<K, Set<V>>, key: K, value: V): void {
  const set = index.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) index.delete(key);
}
