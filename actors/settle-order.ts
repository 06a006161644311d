import type { OrderStatus } from "../src/domain/order-status.ts";
import type { ActorCore } from "./actor-core.ts";
import type { StatusPatch } from "../src/domain/order-status.ts";
import type { ActorLimits, StoredOrder } from "./ports.ts";

/**
 * Moves an order in the store and makes the actor hold what the store then says (whoever moved
 * the row: this change, or one that got there first). One message, so nothing interleaves.
 */
export function settleOrder<L extends ActorLimits, R extends StoredOrder>(
  actor: ActorCore<L, R>,
  id: string, from: OrderStatus[], to: OrderStatus, reason: string, patch: StatusPatch = {}): Promise<{ row: R | null; moved: boolean }> {
  const p = actor.requirePorts();
  return actor.mailbox.send(async () => {
    const moved = await p.orders.transition(id, from, to, reason, patch);
    const row = moved ?? (await p.orders.get(id));
    if (row) actor.apply(id, { status: row.status, venueOrderId: row.venueOrderId, filledUnits: row.filledUnits });
    return { row, moved: moved !== null };
  });
}
