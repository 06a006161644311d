import { fromStatuses, reconcileEvent } from "../src/domain/order-lifecycle.ts";
import type { OrderStatus } from "../src/domain/order-status.ts";
import { filledUnitsOf, orderStatusFor } from "../src/domain/venue-status.ts";
import type { ActorCore } from "./actor-core.ts";
import type { ReconcileResult } from "./messages.ts";
import type { ActorLimits, StoredOrder } from "./ports.ts";
import { readVenueState } from "./read-venue-state.ts";
import { settleOrder } from "./settle-order.ts";

export async function reconcileOrder<L extends ActorLimits, R extends StoredOrder>(actor: ActorCore<L, R>, row: R): Promise<ReconcileResult> {
  const p = actor.requirePorts();
  if (row.status === "submitting" && actor.isInflight(row.id)) return "pending";
  const venueOrderId = row.venueOrderId ?? row.orderHash;
  if (!venueOrderId) return "skipped";
  const read = await readVenueState(actor, row, venueOrderId);
  if (read === "refused") return "skipped";
  if (read === "venue_down") return "venue_down";
  const { state } = read;
  const to: OrderStatus = state ? orderStatusFor(state.status) : "rejected";
  const reason = state ? `reconciled with the venue (${state.status})` : "reconciled: the venue has no such order";
  const { moved } = await settleOrder(actor, row.id, fromStatuses(reconcileEvent(to)), to, reason, state ? { venueOrderId: state.venue_order_id, filledUnits: filledUnitsOf(state.filled_usdc) } : {});
  return moved ? "settled" : "skipped";
}
