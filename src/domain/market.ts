/** Markets and order-book snapshots as the venues describe them (docs/architecture.md#the-markets-file). Prices and sizes are decimal strings. */

export type Outcome = { token_id: string; outcome: string };

/** The market's protocol: `v1` CTF token ids (exchange domain "2"), `v2` Protocol V2 position ids (ExchangeV3, domain "3"). */
export type MarketVersion = "v1" | "v2";

/** A market as the markets file (docs/architecture.md#the-markets-file) describes it, without books. */
export interface Market {
  condition_id: string;
  question: string;
  category: string;
  end_date: string; // ISO 8601
  active: boolean;
  closed: boolean;
  accepting_orders: boolean;
  neg_risk: boolean;
  tick_size: string; // "0.01"
  min_order_size: string; // shares, "5"
  /** Protocol version; absent means "v1". */
  version?: MarketVersion;
  tokens: Outcome[];
}

export type BookLevel = { price: string; size: string };

/** An order book snapshot for one outcome token. */
export interface OrderBook {
  token_id: string;
  bids: BookLevel[]; // best (highest) first
  asks: BookLevel[]; // best (lowest) first
  last_trade_price: string | null;
  /** When the snapshot was taken at the venue, epoch milliseconds. */
  timestamp_ms: number;
}
