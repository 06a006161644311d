import type { OrderStatus } from "../src/domain/order-status.ts";
import { filledUnitsOf, orderStatusFor } from "../src/domain/venue-status.ts";
import type { ActorCore } from "./actor-core.ts";
import type { ReconcileResult } from "./messages.ts";
import type { ActorLimits, StoredOrder, VenueOrderView } from "./ports.ts";
import { settleOrder } from "./settle-order.ts";

export async function reconcileOrder<L extends ActorLimits, R extends StoredOrder>(actor: ActorCore<L, R>, row: R): Promise<ReconcileResult> {
  const p = actor.requirePorts();
  if (row.status === "submitting" && actor.isInflight(row.id)) return "pending";
  const venueOrderId = row.venueOrderId ?? row.orderHash;
  if (!venueOrderId) return "skipped";
  let state: VenueOrderView | null;
  try {
    state = await p.credentials.withAgentCredentialsOrNone(row.agentId, (credentials) =>
      p.venue.getOrder({ venue_order_id: venueOrderId, credentials }, { signal: AbortSignal.timeout(p.config.venueTimeoutMs) }),
    );
  } catch (error) {
    // The venue answered, but refused this read (a 4xx): this order waits for the next pass; the
    // others are still worth reading. Anything else means the venue is not answering.
    if (error instanceof Error && error.name === "VenueRequestError") {
      p.observer.warn("reconciliation: the venue refused to read the order", { order_id: row.id, error: error.message.slice(0, 200) });
      return "skipped";
    }
    return "venue_down";
  }
  const to: OrderStatus = state ? orderStatusFor(state.status) : "rejected";
  const reason = state ? `reconciled with the venue (${state.status})` : "reconciled: the venue has no such order";
  const { moved } = await settleOrder(actor, row.id, ["submitting", "unknown"], to, reason, state ? { venueOrderId: state.venue_order_id, filledUnits: filledUnitsOf(state.filled_usdc) } : {});
  return moved ? "settled" : "skipped";
}
