import { fromStatuses } from "../src/domain/order-lifecycle.ts";
import { filledUnitsOf, orderStatusFor } from "../src/domain/venue-status.ts";
import type { ActorCore } from "./actor-core.ts";
import type { ReconcileResult } from "./messages.ts";
import type { ActorLimits, StoredOrder } from "./ports.ts";
import { readVenueState } from "./read-venue-state.ts";
import { settleOrder } from "./settle-order.ts";

/**
 * Settles an `open` order whose client cancel was sent to the venue and never settled here (a crash
 * after the venue call, or a call that was not answered): reads the venue's state of the order, as
 * reconciliation does for `unknown` orders, and records it. Cancelled there: `cancelled`; matched:
 * `filled`; still live: the client's cancel never took effect, so the marker is cleared and the order
 * stays `open`. Nothing is posted or cancelled at the venue. An order a client cancel is running for
 * in this process is left to that cancel; a venue that does not answer is tried again next pass.
 */
export async function reconcileCancel<L extends ActorLimits, R extends StoredOrder>(actor: ActorCore<L, R>, row: R): Promise<ReconcileResult> {
  const p = actor.requirePorts();
  const requestedAt = row.cancelRequestedAt;
  if (row.status !== "open" || !requestedAt) return "skipped";
  if (actor.isCancelling(row.id)) return "pending";
  const venueOrderId = row.venueOrderId ?? row.orderHash;
  if (!venueOrderId) return "skipped";
  const read = await readVenueState(actor, row, venueOrderId);
  if (read === "refused") return "skipped";
  if (read === "venue_down") return "venue_down";
  const { state } = read;
  if (!state) {
    // An order the venue acknowledged and no longer knows: nothing to conclude; it is read again next pass.
    p.observer.warn("reconciliation: the venue has no such order for a cancel that was not settled", { order_id: row.id });
    return "skipped";
  }
  const to = orderStatusFor(state.status);
  const filledUnits = filledUnitsOf(state.filled_usdc);
  if (to === "open") {
    await p.orders.clearCancelRequested(row.id, requestedAt);
    return "skipped";
  }
  const { moved } =
    to === "filled"
      ? await settleOrder(actor, row.id, fromStatuses("cancel_settled_filled"), "filled", "matched at the venue before the cancellation", { filledUnits: filledUnits || row.notionalUnits })
      : await settleOrder(actor, row.id, fromStatuses("cancel_settled"), "cancelled", "cancelled by the client (settled by reconciliation with the venue)", { filledUnits });
  return moved ? "settled" : "skipped";
}
