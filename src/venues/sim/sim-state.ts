/**
 * What the venue simulator remembers between requests: API credentials, registered wallets, fault
 * settings, per-order post and cancel counts, trades, each key's orders, heartbeat sessions.
 */
import type { PaperVenue } from "../paper/paper-venue.ts";
import type { SimTrade } from "./sim-wire.ts";

export type SimScope = "order:place" | "order:cancel" | (string & {});

export interface SimCredential {
  api_key: string;
  api_secret: string;
  passphrase: string;
  address: string;
  scopes: Set<string>;
}

export interface SimFaults {
  /** Added before answering every venue call. */
  latency_ms: number;
  /** Added on cancels (DELETE /order, /orders, /cancel-all, /cancel-market-orders). */
  cancel_latency_ms: number;
  /** Share of cancels never answered (held until the client goes away or the server stops). */
  cancel_hang_ratio: number;
  /** Share of order posts answered 500 (order not placed). */
  error_ratio: number;
  /** Share of cancels answered `cancel_error_status` with {error} (orders not cancelled). */
  cancel_error_ratio: number;
  /** 500, 502, 503 or 429; a 429 carries Retry-After: cancel_retry_after_s. */
  cancel_error_status: number;
  cancel_retry_after_s: number;
  /** Added before every WebSocket message the simulator sends. */
  ws_delay_ms: number;
  /** Share of WebSocket messages never sent. */
  ws_drop_ratio: number;
  /** Share of WebSocket upgrades refused (HTTP 503). */
  ws_refuse_ratio: number;
  /** Between a trade's statuses on the user channel (MATCHED → MINED → CONFIRMED). */
  trade_mine_ms: number;
  /** Share of trades that end RETRYING → FAILED instead. */
  trade_fail_ratio: number;
}

export const NO_FAULTS: Readonly<SimFaults> = Object.freeze({
  latency_ms: 0,
  cancel_latency_ms: 0,
  cancel_hang_ratio: 0,
  error_ratio: 0,
  cancel_error_ratio: 0,
  cancel_error_status: 500,
  cancel_retry_after_s: 1,
  ws_delay_ms: 0,
  ws_drop_ratio: 0,
  ws_refuse_ratio: 0,
  trade_mine_ms: 0,
  trade_fail_ratio: 0,
});

/** Validates a partial fault update; answers the new settings or an error message. */
export function mergeFaults(current: SimFaults, update: unknown): SimFaults | string {
  if (!update || typeof update !== "object" || Array.isArray(update)) return "body must be a JSON object";
  const next = { ...current };
  for (const [k, v] of Object.entries(update)) {
    if (!(k in NO_FAULTS)) return `unknown fault ${k}`;
    if (k === "cancel_error_status") {
      if (v !== 429 && v !== 500 && v !== 502 && v !== 503) return "cancel_error_status must be 429, 500, 502 or 503";
    } else {
      const isRatio = k.endsWith("ratio");
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || (isRatio && v > 1)) {
        return `${k} must be ${isRatio ? "a number in [0, 1]" : "a non-negative number"}`;
      }
    }
    (next as Record<string, number>)[k] = v as number;
  }
  return next;
}

interface HeartbeatSession {
  id: string;
  timer: ReturnType<typeof setTimeout>;
}

export class VenueSimState {
  readonly credentials = new Map<string, SimCredential>();
  /** Proxy, Safe and deposit wallets (lowercase) → their owner's address. */
  readonly wallets = new Map<string, string>();
  faults: SimFaults = { ...NO_FAULTS };
  readonly posts = new Map<string, number>();
  readonly cancels = new Map<string, number>();
  /** Requests currently held open by cancel_hang_ratio. */
  hanging = 0;
  readonly trades: SimTrade[] = [];
  readonly tradesByOrder = new Map<string, string[]>();
  /** Order ids placed by each API key, in order. */
  readonly ordersByKey = new Map<string, string[]>();
  readonly heartbeats = new Map<string, HeartbeatSession>();
  /** Requests answered per "METHOD /path" (venue routes; control routes excluded). */
  readonly routes = new Map<string, number>();
  /** Orders cancelled because their key's heartbeats stopped. */
  heartbeatCancels = 0;

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

  registerWallet(wallet: string, owner: string): void {
    this.wallets.set(wallet.toLowerCase(), owner);
  }

  ownerOf(wallet: string): string | undefined {
    return this.wallets.get(wallet.toLowerCase());
  }

  recordOrder(key: string, id: string): void {
    let ids = this.ordersByKey.get(key);
    if (!ids) this.ordersByKey.set(key, (ids = []));
    ids.push(id);
  }

  recordTrade(t: SimTrade): void {
    this.trades.push(t);
    for (const id of [t.taker_order_id, t.maker_order_id]) {
      let ids = this.tradesByOrder.get(id);
      if (!ids) this.tradesByOrder.set(id, (ids = []));
      ids.push(t.id);
    }
  }

  /** The key's orders still resting on a book. */
  liveOrdersOf(key: string): string[] {
    return (this.ordersByKey.get(key) ?? []).filter((id) => this.venue.order(id)?.status === "live");
  }

  /** `requests`: every venue request answered, by "METHOD /route" (WebSocket upgrades as "GET /ws/market", "GET /ws/user"). */
  stats(): { requests: Record<string, number>; posts: Record<string, number>; cancels: Record<string, number> } {
    return { requests: Object.fromEntries(this.routes), posts: Object.fromEntries(this.posts), cancels: Object.fromEntries(this.cancels) };
  }

  /** Faults and stats back to none; credentials, wallets, orders and trades stay. */
  reset(): void {
    this.faults = { ...NO_FAULTS };
    this.posts.clear();
    this.cancels.clear();
    this.routes.clear();
  }

  stopHeartbeats(): void {
    for (const s of this.heartbeats.values()) clearTimeout(s.timer);
    this.heartbeats.clear();
  }
}
