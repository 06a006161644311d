import { fromStatuses } from "../src/domain/order-lifecycle.ts";
import type { VenueCredentials } from "../src/domain/venue-credentials.ts";
import { filledUnitsOf } from "../src/domain/venue-status.ts";
import type { ActorCore } from "./actor-core.ts";
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
        // A read that fails or is refused never means "nothing filled": the order is failed (its whole
        // notional keeps counting, flagged for review) until a source of the venue's truth settles it.
        const read = await p.venue.getOrder({ venue_order_id: venueOrderId, credentials: c }, { signal }).then(
          (state) => ({ state }),
          () => null,
        );
        if (!read) return { status: "failed" };
        const state = read.state;
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
        p.orders.transitionMany(plain("cancelled"), fromStatuses("kill_cancelled"), "cancelled", label),
        p.orders.transitionMany(plain("failed"), fromStatuses("kill_failed"), "failed", `${label}: cancellation not confirmed before the deadline`, { flaggedForReview: true }),
        ...outcomes
          .filter((o) => o.filledUnits !== undefined)
          .map((o) =>
            p.orders.transition(
              o.orderId,
              fromStatuses(o.status === "filled" ? "kill_filled" : o.status === "failed" ? "kill_failed" : "kill_cancelled"),
              o.status,
              label === "kill switch" ? o.reason : `${label}: ${o.status}`,
              { filledUnits: o.filledUnits },
            ),
          ),
      ]);
    },
  };
}
