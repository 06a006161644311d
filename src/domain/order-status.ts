/** Order statuses (docs/api.md#orders), agent modes and breaker reasons: one name each, used by every layer. */

export type Mode = "payload" | "delegated";
/**
 * Why a breaker is tripped: the kill switch, by hand, consecutive venue errors, the runaway guards
 * (docs/api.md#runaway-guards), or a missed heartbeat (docs/api.md#heartbeat-dead-man-switch).
 */
export type BreakerReason = "kill" | "venue_errors" | "manual" | "runaway" | "heartbeat";

/** Reasons that halt an agent as the kill switch does: credentials are refused until a resume. */
export const HALT_REASONS: ReadonlySet<BreakerReason> = new Set(["kill", "heartbeat"]);
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
  | "unknown"
  /** Above the agent's approval_threshold_usdc: approved by the checks, reserved, waiting for a person. */
  | "pending_approval";

/** Statuses whose notional is still reserved or at the venue. */
export const ACTIVE_STATUS_LIST = ["pending_approval", "awaiting_signature", "submitting", "open", "unknown"] as const satisfies readonly OrderStatus[];
export const ACTIVE_STATUSES: ReadonlySet<OrderStatus> = new Set(ACTIVE_STATUS_LIST);

/** A venue's status of an order. live: resting on the book; matched: filled at once; unmatched: FOK/FAK that did not fill. */
export type VenueOrderStatus = "live" | "matched" | "delayed" | "unmatched" | "cancelled";

/** What a status change may set besides the status: the order store's port and its implementation share it. */
export interface StatusPatch {
  venueOrderId?: string | null;
  filledUnits?: bigint;
  flaggedForReview?: boolean;
  /** A new signature deadline (an approved pending_approval order starts waiting for its signature). */
  signatureDeadline?: Date | null;
  /** Who decided (a person's approval or rejection), recorded in the history entry. */
  by?: string;
}
