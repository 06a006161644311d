import { unitsToNumber } from "../../domain/units.ts";
import type { OrderRow } from "../../db/order-repository.ts";
import type { OrderModel } from "./model.ts";

export function toOrderModel(r: OrderRow): OrderModel {
  return {
    id: r.id,
    agent_id: r.agentId,
    mode: r.mode,
    market_id: r.marketId,
    side: r.side,
    size_usdc: unitsToNumber(r.sizeUnits),
    price: Number(r.price),
    order_type: r.orderType,
    status: r.status,
    order_hash: r.orderHash,
    venue_order_id: r.venueOrderId,
    filled_usdc: unitsToNumber(r.filledUnits),
    flagged_for_review: r.flaggedForReview,
    client_order_id: r.clientOrderId,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    history: r.history,
  };
}
