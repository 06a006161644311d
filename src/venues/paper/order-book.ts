/**
 * One outcome token's limit order book with price-time priority.
 *
 * Prices and sizes are bigint base units (PRICE_DECIMALS / SIZE_DECIMALS, i.e. 10^-6), never floats.
 * Each side is an array of price levels kept best first (bids descending, asks ascending); each level
 * is a FIFO queue. Cancels are O(1) on the order plus a level removal when the level empties.
 */

import { fromUnits } from "../../domain/units.ts";
import { PRICE_DECIMALS, SIZE_DECIMALS } from "../markets-file.ts";
import type { BookLevel } from "../venue.ts";

export type BookSide = "buy" | "sell";

export interface RestingOrder {
  readonly id: string;
  readonly side: BookSide;
  /** Limit price, 10^-6 units. */
  readonly price: bigint;
  /** Unfilled shares, 10^-6 units; 0 once filled or removed. */
  remaining: bigint;
  /** Unix seconds after which the order is expired (GTD); 0 for none. */
  readonly expiresAt: number;
  /** Arrival sequence number (time priority). */
  readonly seq: number;
  /** Internal: the level the order sits in, null once it left the book. */
  level: PriceLevel | null;
}

export interface BookFill {
  maker: RestingOrder;
  /** Execution price: the resting (maker) order's price. */
  price: bigint;
  size: bigint;
}

export class PriceLevel {
  queue: RestingOrder[] = [];
  head = 0;
  total = 0n;
  live = 0;
  constructor(readonly price: bigint) {}

  /** First live order, dropping dead entries at the head. */
  front(): RestingOrder | undefined {
    while (this.head < this.queue.length) {
      const o = this.queue[this.head];
      if (o.level === this && o.remaining > 0n) return o;
      this.head++;
    }
    return undefined;
  }

  compact(): void {
    if (this.head > 32 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}

/** Single levels of a book, read without a snapshot (the simulator's price_change deltas). */
export interface BookLevels {
  /** Shares resting at `price` on `side` (10^-6 units); 0 when there is no such level. */
  levelTotal(side: BookSide, price: bigint): bigint;
  /** The best price with shares resting on `side`, or null when that side is empty. */
  bestPrice(side: BookSide): bigint | null;
}

export interface BookSnapshot {
  bids: readonly BookLevel[];
  asks: readonly BookLevel[];
}

export class TokenBook implements BookLevels {
  /** Best (highest) first. */
  readonly bids: PriceLevel[] = [];
  /** Best (lowest) first. */
  readonly asks: PriceLevel[] = [];
  /** Bumped on every change; snapshots are cached per version. */
  version = 0;
  private seq = 0;
  private readonly orders = new Map<string, RestingOrder>();
  private nextExpiry = Number.POSITIVE_INFINITY;
  private cached: { version: number; depth: number; snap: BookSnapshot } | null = null;

  constructor(readonly tokenId: string) {}

  get size(): number {
    return this.orders.size;
  }

  get(id: string): RestingOrder | undefined {
    return this.orders.get(id);
  }

  /** Puts an order at the back of its price level. */
  add(o: { id: string; side: BookSide; price: bigint; size: bigint; expiresAt?: number }): RestingOrder {
    if (o.size <= 0n) throw new RangeError("resting size must be positive");
    if (this.orders.has(o.id)) throw new Error(`order ${o.id} already rests on the book`);
    const levels = o.side === "buy" ? this.bids : this.asks;
    let level = findLevel(levels, o.price, o.side);
    if (!level) {
      level = new PriceLevel(o.price);
      levels.splice(insertionIndex(levels, o.price, o.side), 0, level);
    }
    const order: RestingOrder = {
      id: o.id,
      side: o.side,
      price: o.price,
      remaining: o.size,
      expiresAt: o.expiresAt ?? 0,
      seq: ++this.seq,
      level,
    };
    level.queue.push(order);
    level.total += o.size;
    level.live++;
    this.orders.set(o.id, order);
    if (order.expiresAt > 0 && order.expiresAt < this.nextExpiry) this.nextExpiry = order.expiresAt;
    this.version++;
    return order;
  }

  /** Takes a resting order off the book; returns it (with its remaining size) or undefined. */
  remove(id: string): RestingOrder | undefined {
    const order = this.orders.get(id);
    if (!order) return undefined;
    this.detach(order);
    this.version++;
    return order;
  }

  /**
   * Shares an incoming order could fill right now at `limit` (counting at most up to `need`).
   * Used for fill-or-kill.
   */
  available(side: BookSide, limit: bigint, need: bigint): bigint {
    const levels = side === "buy" ? this.asks : this.bids;
    let sum = 0n;
    for (const level of levels) {
      if (!crosses(side, limit, level.price)) break;
      sum += level.total;
      if (sum >= need) break;
    }
    return sum;
  }

  /**
   * Executes an incoming order against the opposite side at price-time priority, up to `size`
   * shares, at the resting orders' prices. Consumed resting orders leave the book.
   */
  match(side: BookSide, limit: bigint, size: bigint): { fills: BookFill[]; remaining: bigint } {
    const levels = side === "buy" ? this.asks : this.bids;
    const fills: BookFill[] = [];
    let remaining = size;
    while (remaining > 0n && levels.length > 0) {
      const level = levels[0];
      if (!crosses(side, limit, level.price)) break;
      const maker = level.front();
      if (!maker) {
        levels.shift(); // defensive: an empty level should have been removed already
        continue;
      }
      const q = maker.remaining < remaining ? maker.remaining : remaining;
      maker.remaining -= q;
      level.total -= q;
      remaining -= q;
      fills.push({ maker, price: level.price, size: q });
      if (maker.remaining === 0n) {
        level.live--;
        level.head++;
        maker.level = null;
        this.orders.delete(maker.id);
        if (level.live === 0) levels.shift();
        else level.compact();
      }
    }
    if (fills.length) this.version++;
    return { fills, remaining };
  }

  /** Removes every GTD order whose expiry (unix seconds) is at or before `nowSec`. */
  purgeExpired(nowSec: number): RestingOrder[] {
    if (nowSec < this.nextExpiry) return [];
    const removed: RestingOrder[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const o of this.orders.values()) {
      if (o.expiresAt === 0) continue;
      if (o.expiresAt <= nowSec) removed.push(o);
      else if (o.expiresAt < next) next = o.expiresAt;
    }
    for (const o of removed) this.detach(o);
    this.nextExpiry = next;
    if (removed.length) this.version++;
    return removed;
  }

  levelTotal(side: BookSide, price: bigint): bigint {
    const level = findLevel(side === "buy" ? this.bids : this.asks, price, side);
    return level ? level.total : 0n;
  }

  bestPrice(side: BookSide): bigint | null {
    // As snapshot(): a level with nothing left in it is not shown.
    for (const level of side === "buy" ? this.bids : this.asks) if (level.total > 0n) return level.price;
    return null;
  }

  /** Aggregated levels, best first, at most `depth` per side; cached until the book changes. */
  snapshot(depth: number): BookSnapshot {
    const c = this.cached;
    if (c && c.version === this.version && c.depth === depth) return c.snap;
    const conv = (levels: PriceLevel[]): readonly BookLevel[] => {
      const out: BookLevel[] = [];
      for (let i = 0; i < levels.length && out.length < depth; i++) {
        const l = levels[i];
        if (l.total <= 0n) continue;
        out.push(Object.freeze({ price: fromUnits(l.price, PRICE_DECIMALS), size: fromUnits(l.total, SIZE_DECIMALS) }));
      }
      return Object.freeze(out);
    };
    const snap: BookSnapshot = Object.freeze({ bids: conv(this.bids), asks: conv(this.asks) });
    this.cached = { version: this.version, depth, snap };
    return snap;
  }

  private detach(order: RestingOrder): void {
    const level = order.level;
    this.orders.delete(order.id);
    if (!level) return;
    level.total -= order.remaining;
    level.live--;
    order.level = null;
    if (level.live === 0) {
      const levels = order.side === "buy" ? this.bids : this.asks;
      const i = levels.indexOf(level);
      if (i >= 0) levels.splice(i, 1);
    }
  }
}

/** Does an incoming order on `side` with limit `limit` trade against a resting level at `levelPrice`? */
export function crosses(side: BookSide, limit: bigint, levelPrice: bigint): boolean {
  return side === "buy" ? levelPrice <= limit : levelPrice >= limit;
}

/** Levels are best first: bids descending, asks ascending. `side` is the side of the resting orders. */
function better(side: BookSide, a: bigint, b: bigint): boolean {
  return side === "buy" ? a > b : a < b;
}

function insertionIndex(levels: PriceLevel[], price: bigint, side: BookSide): number {
  let lo = 0;
  let hi = levels.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (better(side, levels[mid].price, price)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function findLevel(levels: PriceLevel[], price: bigint, side: BookSide): PriceLevel | undefined {
  const i = insertionIndex(levels, price, side);
  const l = levels[i];
  return l && l.price === price ? l : undefined;
}
