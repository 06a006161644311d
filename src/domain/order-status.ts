/** Order statuses (docs/api.md#orders), agent modes and breaker reasons: one name each, used by every layer. */

export type Mode = "payload" | "delegated";
export type BreakerReason = "kill" | "venue_errors" | "manual";
export type OrderSide = "buy" | "sell";

export type OrderStatus =
  | "awaiting_signature"
  | "submitting"
  | "open"
  | "filled"
  | "cancelled"
  | "expired"
  | "rejected"
  | "failed"
  | "unknown";

/** Statuses whose notional is still reserved or at the venue. */
export const ACTIVE_STATUS_LIST = ["awaiting_signature", "submitting", "open", "unknown"] as const satisfies readonly OrderStatus[];
export const ACTIVE_STATUSES: ReadonlySet<OrderStatus> = new Set(ACTIVE_STATUS_LIST);

/** A venue's status of an order. live: resting on the book; matched: filled at once; unmatched: FOK/FAK that did not fill. */
export type VenueOrderStatus = "live" | "matched" | "delayed" | "unmatched" | "cancelled";
