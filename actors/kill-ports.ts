import type { VenueCredentials } from "../src/domain/venue-credentials.ts";
import { filledUnitsOf } from "../src/domain/venue-status.ts";
import type { ActorCore } from "./actor-core.ts";
import { ACTIVE_STATUS_LIST } from "../src/domain/order-status.ts";
import type { ActorLimits, CancelOutcome, CancelRetry, KillOutcome, KillPorts, StoredOrder, TrackedOrder, VenueCancelResult } from "./ports.ts";

export function buildKillPorts<L extends ActorLimits, R extends StoredOrder>(
  actor: ActorCore<L, R>,
  credentials: Promise<VenueCredentials | undefined>,
  onRefused: (orderId: string, refusal: Extract<VenueCancelResult, { ok: false }>) => void,
  retry?: CancelRetry,
  /** The reason written in each order's history: the kill's, or "cancel-all" (docs/api.md#post-v1agentsidcancel-all). */
  label = "kill switch",
): KillPorts {
  const p = actor.requirePorts();
  return {
    cancelAtVenue: async (order: TrackedOrder, signal: AbortSignal): Promise<CancelOutcome> => {
      try {
        const c = await credentials;
        // Unknown after a timeout, or submitting from an earlier process: the venue id is the order hash.
        const venueOrderId = order.venueOrderId ?? (await p.orders.get(order.id))?.orderHash ?? null;
        if (!venueOrderId) return { status: "failed" };
        const once = (id: string, s: AbortSignal) => p.venue.cancelOrder({ venue_order_id: id, credentials: c }, { signal: s });
        const r = retry ? await retry(venueOrderId, once, signal) : await once(venueOrderId, signal);
        if (!r.ok) {
          onRefused(order.id, r);
          return { status: "failed" };
        }
        if (!r.already) return { status: "cancelled" };
        // Nothing left to cancel: it was cancelled or it matched before the kill reached it.
        const state = await p.venue.getOrder({ venue_order_id: venueOrderId, credentials: c }, { signal }).catch(() => null);
        if (!state) return { status: "cancelled" };
        const filledUnits = filledUnitsOf(state.filled_usdc);
        return state.status === "matched" ? { status: "filled", filledUnits: filledUnits || order.notionalUnits } : { status: "cancelled", filledUnits };
      } catch {
        return { status: "failed" };
      }
    },
    saveOutcomes: async (outcomes) => {
      const plain = (status: KillOutcome["status"]) => outcomes.filter((o) => o.status === status && o.filledUnits === undefined).map((o) => o.orderId);
      await Promise.all([
        p.orders.transitionMany(plain("cancelled"), [...ACTIVE_STATUS_LIST], "cancelled", label),
        p.orders.transitionMany(plain("failed"), [...ACTIVE_STATUS_LIST], "failed", `${label}: cancellation not confirmed before the deadline`, { flaggedForReview: true }),
        ...outcomes
          .filter((o) => o.filledUnits !== undefined)
          .map((o) => p.orders.transition(o.orderId, [...ACTIVE_STATUS_LIST], o.status, label === "kill switch" ? o.reason : `${label}: ${o.status}`, { filledUnits: o.filledUnits })),
      ]);
    },
  };
}
