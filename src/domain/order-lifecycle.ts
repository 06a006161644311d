/**
 * The order lifecycle as one table: status × event → next status. The agent's actor asks it before it
 * changes an order, the order store's conditional updates take their allowed "from" statuses from it
 * (`fromStatuses`), and the tests read it. An event the table does not allow from an order's status is
 * logged and ignored by the actor, never applied.
 *
 * docs/api.md#orders describes the statuses; docs/decisions.md ("The order lifecycle table") the
 * choices made where the venue's truth meets them (fills after a cancel, fills taken back).
 */
import type { OrderStatus } from "./order-status.ts";

export type OrderEvent =
  // a person's decision on an order above approval_threshold_usdc
  | "approve_for_signature"
  | "approve_for_placement"
  | "reject_by_person"
  | "approval_expired"
  // payload mode before the venue
  | "signature_verified"
  | "signature_expired"
  /** A client's cancel of an order that never reached the venue. */
  | "cancel_local"
  /** Never sent: halted before the call, no credentials, no stored message. */
  | "not_sent"
  // the venue's answer to a placement
  | "venue_open"
  | "venue_matched"
  | "venue_unmatched"
  | "venue_refused"
  | "venue_timeout"
  // reconciliation against the venue's read of the order
  | "reconciled_open"
  | "reconciled_filled"
  | "reconciled_cancelled"
  | "reconciled_missing"
  /** Reconciliation of an open order whose client cancel was sent and not settled: it had matched, or it was cancelled. */
  | "cancel_settled_filled"
  | "cancel_settled"
  // a client's cancel at the venue
  | "cancel_confirmed"
  | "cancel_found_filled"
  /** The venue cancelled, but what filled could not be read (a refused or failed read): unknown, never "nothing filled". */
  | "cancel_unreadable"
  // the kill switch
  | "kill_cancelled"
  | "kill_filled"
  | "kill_failed"
  // the venue's truth, reported by a source (the chain, the user channel, the paper venue)
  /** A fill that leaves shares unfilled. */
  | "fill"
  /** A fill after which the whole order has filled. */
  | "fill_complete"
  /** A fill taken back (trade FAILED, block reorganised away). */
  | "fill_reverted"
  | "venue_cancelled"
  | "venue_expired"
  | "venue_placed";

type Row = Partial<Record<OrderStatus, OrderStatus>>;

const ACTIVE: OrderStatus[] = ["pending_approval", "awaiting_signature", "submitting", "open", "unknown"];
const all = (from: OrderStatus[], to: OrderStatus): Row => Object.fromEntries(from.map((s) => [s, to]));

/** The table: for each event, the statuses it applies from and the status it leads to. */
export const ORDER_LIFECYCLE: Readonly<Record<OrderEvent, Readonly<Row>>> = {
  approve_for_signature: { pending_approval: "awaiting_signature" },
  approve_for_placement: { pending_approval: "submitting" },
  reject_by_person: { pending_approval: "rejected" },
  approval_expired: { pending_approval: "expired" },
  signature_verified: { awaiting_signature: "submitting" },
  signature_expired: { awaiting_signature: "expired" },
  cancel_local: { awaiting_signature: "cancelled", pending_approval: "cancelled" },
  not_sent: { submitting: "rejected" },
  venue_open: { submitting: "open" },
  venue_matched: { submitting: "filled" },
  venue_unmatched: { submitting: "cancelled" },
  venue_refused: { submitting: "rejected" },
  venue_timeout: { submitting: "unknown" },
  reconciled_open: { submitting: "open", unknown: "open" },
  reconciled_filled: { submitting: "filled", unknown: "filled" },
  reconciled_cancelled: { submitting: "cancelled", unknown: "cancelled" },
  cancel_settled_filled: { open: "filled" },
  cancel_settled: { open: "cancelled" },
  reconciled_missing: { submitting: "rejected", unknown: "rejected" },
  cancel_confirmed: { open: "cancelled", unknown: "cancelled" },
  cancel_found_filled: { open: "filled", unknown: "filled" },
  cancel_unreadable: { open: "unknown", unknown: "unknown" },
  kill_cancelled: all(ACTIVE, "cancelled"),
  kill_filled: all(ACTIVE, "filled"),
  kill_failed: all(ACTIVE, "failed"),
  // A fill while the placement's answer is awaited leaves the order to that answer; one on an order
  // that ended (cancelled, expired, or failed by a kill) had matched before: it keeps counting, and a
  // fill that completes the order makes it filled.
  fill: { submitting: "submitting", open: "open", unknown: "open", filled: "filled", cancelled: "cancelled", expired: "expired", failed: "failed" },
  fill_complete: { submitting: "submitting", open: "filled", unknown: "filled", filled: "filled", cancelled: "filled", expired: "filled", failed: "filled" },
  fill_reverted: { submitting: "submitting", open: "open", unknown: "unknown", filled: "open", cancelled: "cancelled", expired: "expired", failed: "failed" },
  venue_cancelled: { open: "cancelled", unknown: "cancelled" },
  venue_expired: { open: "expired", unknown: "expired" },
  venue_placed: { open: "open", unknown: "open" },
};

/** The status `event` leads to from `status`, or null when the table does not allow it. */
export function nextStatus(status: OrderStatus, event: OrderEvent): OrderStatus | null {
  return ORDER_LIFECYCLE[event][status] ?? null;
}

/** Whether the table allows `event` from `status`. */
export function allows(status: OrderStatus, event: OrderEvent): boolean {
  return nextStatus(status, event) !== null;
}

/**
 * The statuses `event` applies from (those leading to `to`, when given): the "from" of the store's
 * conditional update for that event.
 */
export function fromStatuses(event: OrderEvent, to?: OrderStatus): OrderStatus[] {
  const row = ORDER_LIFECYCLE[event];
  return (Object.keys(row) as OrderStatus[]).filter((s) => to === undefined || row[s] === to);
}

/** The event of a placement's answer, by the status it leads to. */
export function placementEvent(to: "open" | "filled" | "cancelled"): OrderEvent {
  return to === "open" ? "venue_open" : to === "filled" ? "venue_matched" : "venue_unmatched";
}

/** The event of a reconciliation's read, by the status it leads to. */
export function reconcileEvent(to: "open" | "filled" | "cancelled" | "rejected"): OrderEvent {
  return to === "open" ? "reconciled_open" : to === "filled" ? "reconciled_filled" : to === "cancelled" ? "reconciled_cancelled" : "reconciled_missing";
}

/** An order's whole size in shares (6-decimal units) from its signed message: a buy's takerAmount, a sell's makerAmount. */
export function orderSharesUnits(message: { side: 0 | 1; makerAmount: string; takerAmount: string }): bigint {
  return BigInt(message.side === 0 ? message.takerAmount : message.makerAmount);
}
