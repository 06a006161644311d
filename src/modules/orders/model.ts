import { t } from "elysia";
import { idPattern } from "../../ids.ts";
import { PageQuery } from "../../http/pagination.ts";

export const OrderTypeSchema = t.Union([t.Literal("GTC"), t.Literal("GTD"), t.Literal("FOK"), t.Literal("FAK")]);

export const IntentBody = t.Object(
  {
    market_id: t.String({ pattern: "^[0-9]{1,78}$", description: "the venue's outcome token id (decimal uint256)" }),
    side: t.Union([t.Literal("buy"), t.Literal("sell")]),
    size_usdc: t.Number({ exclusiveMinimum: 0, maximum: 1_000_000_000, description: "order size in USDC, at most 6 decimals" }),
    price: t.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1, description: "limit price of the outcome" }),
    agent_id: t.Optional(t.String({ pattern: idPattern("agt") })),
    probability: t.Optional(t.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1, description: "the agent's belief that the outcome resolves yes" })),
    order_type: t.Optional(OrderTypeSchema),
    expires_at: t.Optional(t.String({ format: "date-time", description: "required for GTD orders" })),
    client_order_id: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type IntentBody = typeof IntentBody.static;

export const IntentQuery = t.Object({ dry_run: t.Optional(t.Boolean()) }, { additionalProperties: false });

export const VenueAuthSchema = t.Object(
  {
    address: t.Optional(t.String({ pattern: "^0x[0-9a-fA-F]{40}$" })),
    // Passed through in HTTP headers to the venue: visible ASCII only (else the venue call cannot be made).
    api_key: t.String({ minLength: 1, maxLength: 200, pattern: "^[\\x21-\\x7e]+$" }),
    passphrase: t.String({ minLength: 1, maxLength: 200, pattern: "^[\\x21-\\x7e]+$" }),
    timestamp: t.String({ pattern: "^[0-9]{1,13}$" }),
    signature: t.String({ minLength: 1, maxLength: 200, pattern: "^[\\x21-\\x7e]+$" }),
  },
  { additionalProperties: false },
);

export const SubmitSignedBody = t.Object(
  {
    order_id: t.String({ pattern: idPattern("ord") }),
    signature: t.String({ maxLength: 200, description: "0x + 130 hex digits (65 bytes), low s" }),
    venue_auth: t.Optional(VenueAuthSchema),
  },
  { additionalProperties: false },
);
export type SubmitSignedBody = typeof SubmitSignedBody.static;

export const OrderIdParam = t.Object({ id: t.String({ pattern: idPattern("ord") }) });

export const OrderStatusSchema = t.Union(
  ["awaiting_signature", "submitting", "open", "filled", "cancelled", "expired", "rejected", "failed", "unknown"].map((s) => t.Literal(s)),
);

export const ListOrdersQuery = t.Object(
  { ...PageQuery, agent_id: t.Optional(t.String({ pattern: idPattern("agt") })), status: t.Optional(OrderStatusSchema) },
  { additionalProperties: false },
);

export const RiskCheckModel = t.Object({ check: t.String(), passed: t.Boolean() });

export const OrderModel = t.Object({
  id: t.String(),
  agent_id: t.String(),
  mode: t.Union([t.Literal("payload"), t.Literal("delegated")]),
  market_id: t.String(),
  side: t.Union([t.Literal("buy"), t.Literal("sell")]),
  size_usdc: t.Number(),
  price: t.Number(),
  order_type: OrderTypeSchema,
  status: t.String(),
  order_hash: t.Union([t.String(), t.Null()]),
  venue_order_id: t.Union([t.String(), t.Null()]),
  filled_usdc: t.Number(),
  flagged_for_review: t.Boolean(),
  client_order_id: t.Union([t.String(), t.Null()]),
  created_at: t.String(),
  updated_at: t.String(),
  history: t.Array(t.Object({ status: t.String(), at: t.String(), reason: t.Union([t.String(), t.Null()]) })),
});
export type OrderModel = typeof OrderModel.static;
