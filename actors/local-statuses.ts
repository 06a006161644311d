import type { OrderStatus } from "../src/domain/order-status.ts";

/** Statuses an order is cancelled in locally (it has not reached the venue). */
export const LOCAL_STATUSES: ReadonlySet<OrderStatus> = new Set(["awaiting_signature", "pending_approval"]);
