/**
 * The venue port: everything the service and the agent actors ask of a venue.
 * Implemented by the embedded paper venue (src/venues/paper), the CLOB V2 HTTP
 * adapter (src/venues/clob). Prices and sizes are decimal strings, never floats.
 */

import type { VenueCredentials } from "../domain/venue-credentials.ts";
import type { Market, OrderBook } from "../domain/market.ts";
import type { OrderMessage, OrderType } from "../domain/order-message.ts";
import type { VenueOrderStatus } from "../domain/order-status.ts";

// The domain types live in src/domain; they are re-exported here so the port's users keep one import.
export type { BookLevel, Market, MarketVersion, OrderBook, Outcome } from "../domain/market.ts";
export type { OrderMessage, OrderType } from "../domain/order-message.ts";
export type { VenueOrderStatus } from "../domain/order-status.ts";
export type { VenueCredentials } from "../domain/venue-credentials.ts";

/**
 * Polymarket L2 headers of the order's owner, computed by the caller over the exact request the
 * service sends (POST /order, DELETE /order, DELETE /cancel-all), passed through and never stored
 * (docs/api.md#submit-signed, #payload-mode-cancels, #post-v1agentsidkill).
 */
export interface VenueAuth {
  address?: string;
  api_key: string;
  passphrase: string;
  timestamp: string;
  signature: string;
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

export type PostResult =
  | {
      ok: true;
      venue_order_id: string;
      status: VenueOrderStatus;
      filled_usdc?: string;
      /** Shares matched at placement, when the venue says (decimal text). */
      filled_shares?: string;
      /** The trades (and their transactions) the placement's matches made, when the venue names them. */
      trade_ids?: string[];
      tx_hashes?: string[];
    }
  | { ok: false; error: string };

/**
 * ok: the order is no longer live at the venue. `already` says the venue had
 * nothing left to cancel (it was cancelled or matched before): the caller
 * should read the order to learn whether it filled.
 */
export type CancelResult = { ok: true; already?: boolean } | { ok: false; error: string; status?: number; retry_after_s?: number };

/** The venue's answer to a cancel-all: the ids it cancelled, and why it did not cancel the others. */
export interface CancelAllAnswer {
  canceled: string[];
  not_canceled: Record<string, string>;
}

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
  /**
   * Cancels one order. "Already cancelled or matched" is ok: true. With `venue_auth` (the owner's L2
   * headers over `DELETE /order {"orderID": id}`) the request carries those headers as they are and
   * goes out on its own (never gathered into a batch, whose body they would not sign).
   */
  cancelOrder(
    req: { venue_order_id: string; credentials?: VenueCredentials; venue_auth?: VenueAuth },
    opts?: CallOptions,
  ): Promise<CancelResult>;
  /**
   * Cancels every open order of one venue account in one call (CLOB: DELETE /cancel-all), with the
   * account's credentials or the owner's pass-through L2 headers. Throws VenueUnavailableError when
   * the venue does not answer, and a refusal (4xx) as an error with a `status`.
   */
  cancelAll?(
    req: { credentials?: VenueCredentials; venue_auth?: VenueAuth },
    opts?: CallOptions,
  ): Promise<CancelAllAnswer>;
  /**
   * Cancels many orders in as few venue calls as the venue allows (CLOB: one DELETE /orders per
   * batch); one result per id, with the same meaning as cancelOrder's.
   */
  cancelOrders?(
    req: { venue_order_ids: string[]; credentials?: VenueCredentials },
    opts?: CallOptions,
  ): Promise<Record<string, CancelResult>>;
  /** The venue's view of one order, or null when the venue does not know it. */
  getOrder(req: { venue_order_id: string; credentials?: VenueCredentials }, opts?: CallOptions): Promise<VenueOrderState | null>;
  /** Asks the venue to confirm credentials with an authenticated read. */
  confirmCredentials(credentials: VenueCredentials, opts?: CallOptions): Promise<boolean>;
  /** Reachability for /readyz. */
  ping(opts?: CallOptions): Promise<boolean>;
  close?(): Promise<void>;
}
