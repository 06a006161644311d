/**
 * The venue port: everything the service and the agent actors ask of a venue.
 * Implemented by the embedded paper venue (src/venues/paper), the CLOB V2 HTTP
 * adapter (src/venues/clob). Prices and sizes are decimal strings, never floats.
 */

export type Outcome = { token_id: string; outcome: string };

/** A market as the markets file (CONTRACT 11.4) describes it, without books. */
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

/** The signed struct of CONTRACT section 6: uint256 as decimal strings, uint8 as numbers. */
export interface OrderMessage {
  salt: string;
  maker: `0x${string}`;
  signer: `0x${string}`;
  tokenId: string;
  makerAmount: string;
  takerAmount: string;
  side: 0 | 1;
  signatureType: number;
  timestamp: string;
  metadata: `0x${string}`;
  builder: `0x${string}`;
}

export type OrderType = "GTC" | "GTD" | "FOK" | "FAK";

/** Polymarket L2 credentials of the order's signer, passed through and never stored (CONTRACT 7). */
export interface VenueAuth {
  address?: string;
  api_key: string;
  passphrase: string;
  timestamp: string;
  signature: string;
}

/** Decrypted scoped credentials of a delegated agent; lives only for one call. */
export interface VenueCredentials {
  api_key: string;
  api_secret: string;
  passphrase?: string;
  /** The address the credentials belong to (the agent's signer). */
  address: string;
}

export interface PostSignedOrder {
  order: OrderMessage;
  signature: `0x${string}`;
  order_type: OrderType;
  /** Unix seconds; "0" for no expiry. */
  expiration: string;
  /** The venue's owner id (Polymarket: the API key of the signer); from venue_auth when given. */
  owner?: string;
  venue_auth?: VenueAuth;
}

export interface PlaceDelegatedOrder {
  credentials: VenueCredentials;
  /** Our order id, sent as the venue's client id when it has one. */
  client_order_id: string;
  order: OrderMessage;
  order_type: OrderType;
  expiration: string;
}

/** live: resting on the book; matched: filled at once; unmatched: FOK/FAK that did not fill. */
export type VenueOrderStatus = "live" | "matched" | "delayed" | "unmatched" | "cancelled";

export type PostResult =
  | { ok: true; venue_order_id: string; status: VenueOrderStatus; filled_usdc?: string }
  | { ok: false; error: string };

/**
 * ok: the order is no longer live at the venue. `already` says the venue had
 * nothing left to cancel (it was cancelled or matched before): the caller
 * should read the order to learn whether it filled.
 */
export type CancelResult =
  | { ok: true; already?: boolean }
  /** `status`: the venue's HTTP status when it answered with an error; `retryAfterMs`: its Retry-After. */
  | { ok: false; error: string; status?: number; retryAfterMs?: number };

export interface VenueOrderState {
  venue_order_id: string;
  status: VenueOrderStatus;
  filled_usdc: string;
}

export interface CallOptions {
  /** Aborts the call (kill deadline, per-call timeout). */
  signal?: AbortSignal;
}

/** Thrown when a venue call did not answer in time or the connection failed. */
export class VenueUnavailableError extends Error {
  override name = "VenueUnavailableError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export interface Venue {
  readonly name: string;
  listMarkets(opts?: CallOptions): Promise<Market[]>;
  /** The market holding this outcome token, or null when the venue has none. */
  getMarketByToken(tokenId: string, opts?: CallOptions): Promise<Market | null>;
  getBook(tokenId: string, opts?: CallOptions): Promise<OrderBook | null>;
  postSignedOrder(req: PostSignedOrder, opts?: CallOptions): Promise<PostResult>;
  placeDelegatedOrder(req: PlaceDelegatedOrder, opts?: CallOptions): Promise<PostResult>;
  /** Cancels one order. "Already cancelled or matched" is ok: true. */
  cancelOrder(
    req: { venue_order_id: string; credentials?: VenueCredentials },
    opts?: CallOptions,
  ): Promise<CancelResult>;
  /** Batch cancel (DELETE /orders), where the venue has it: one result per id. */
  cancelOrders?(req: { venue_order_ids: string[]; credentials?: VenueCredentials }, opts?: CallOptions): Promise<Record<string, CancelResult>>;
  /** The venue's view of one order, or null when the venue does not know it. */
  getOrder(req: { venue_order_id: string; credentials?: VenueCredentials }, opts?: CallOptions): Promise<VenueOrderState | null>;
  /** Asks the venue to confirm credentials with an authenticated read. */
  confirmCredentials(credentials: VenueCredentials, opts?: CallOptions): Promise<boolean>;
  /** Reachability for /readyz. */
  ping(opts?: CallOptions): Promise<boolean>;
  close?(): Promise<void>;
}
