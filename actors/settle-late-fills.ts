import pLimit from "p-limit";
import type { VenueCredentials } from "../src/domain/venue-credentials.ts";
import { filledUnitsOf } from "../src/domain/venue-status.ts";
import type { ActorCore } from "./actor-core.ts";
import type { ActorLimits, StoredOrder } from "./ports.ts";
import { venueDeadline } from "../src/domain/venue-deadline.ts";

export async function settleLateFills<L extends ActorLimits, R extends StoredOrder>(actor: ActorCore<L, R>, orderIds: string[], credentials: VenueCredentials | undefined): Promise<void> {
  const p = actor.requirePorts();
  if (!orderIds.length) return;
  const limit = pLimit(8);
  await Promise.all(
    orderIds.map((id) =>
      limit(async () => {
        const row = await p.orders.get(id);
        const venueOrderId = row?.venueOrderId ?? row?.orderHash;
        if (!row || !venueOrderId || row.status !== "cancelled") return;
        const state = await p.venue
          .getOrder({ venue_order_id: venueOrderId, credentials }, { signal: venueDeadline(p.config.venueTimeoutMs) })
          .catch(() => null);
        const filled = state ? filledUnitsOf(state.filled_usdc) : 0n;
        if (filled <= row.filledUnits) return;
        if (await p.orders.setFilled(row.id, "cancelled", filled)) {
          await actor.addLateFill({ tradingDay: row.tradingDay, conditionId: row.conditionId, side: row.side }, filled - row.filledUnits);
        }
      }),
    ),
  );
}
