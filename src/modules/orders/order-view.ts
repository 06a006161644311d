import { unitsToNumber } from "../../domain/units.ts";
import type { OrderRow } from "../../db/order-repository.ts";
import { orderTypes } from "../../eip712/order-typed-data.ts";
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

/**
 * One order as GET /v1/orders/{id} answers it: while a payload-mode order awaits its signature it also
 * carries the unsigned order to sign and its deadline, so an agent whose intent waited for a person's
 * approval (docs/api.md#orders) can fetch what to sign. Lists and events leave them out.
 */
export function toOrderDetail(r: OrderRow): OrderModel {
  const view = toOrderModel(r);
  if (r.status !== "awaiting_signature" || !r.typedData) return view;
  return {
    ...view,
    unsigned_order: {
      domain: { ...r.typedData.domain },
      types: orderTypes(),
      primaryType: "Order",
      message: { ...r.typedData.message },
    },
    signature_deadline: r.signatureDeadline ? r.signatureDeadline.toISOString() : null,
    expiration: r.expiration,
  };
}
