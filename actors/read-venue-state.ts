import type { ActorCore } from "./actor-core.ts";
import type { ActorLimits, StoredOrder, VenueOrderView } from "./ports.ts";
import { venueDeadline } from "../src/domain/venue-deadline.ts";

/**
 * Reconciliation's read of an order at the venue (with the agent's credentials, or none): the venue's
 * view (null when it has no such order), `refused` when the venue answered but refused this read (a
 * 4xx: this order waits for the next pass, the others are still worth reading), or `venue_down` when
 * the venue is not answering.
 */
export async function readVenueState<L extends ActorLimits, R extends StoredOrder>(
  actor: ActorCore<L, R>,
  row: R,
  venueOrderId: string,
): Promise<{ state: VenueOrderView | null } | "refused" | "venue_down"> {
  const p = actor.requirePorts();
  try {
    const state = await p.credentials.withAgentCredentialsOrNone(row.agentId, (credentials) =>
      p.venue.getOrder({ venue_order_id: venueOrderId, credentials }, { signal: venueDeadline(p.config.venueTimeoutMs) }),
    );
    return { state };
  } catch (error) {
    if (error instanceof Error && error.name === "VenueRequestError") {
      p.observer.warn("reconciliation: the venue refused to read the order", { order_id: row.id, error: error.message.slice(0, 200) });
      return "refused";
    }
    return "venue_down";
  }
}
