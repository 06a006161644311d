import { t } from "elysia";
import { idPattern } from "../../domain/ids.ts";
import { OrderTypeSchema } from "../orders/model.ts";

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
  {
    additionalProperties: false,
    examples: [{ agent_id: "agt_20ew38ygo3k92ke1kcen", market_id: "62116011324642788450213843133477763167049099528131416799711191854278105821744", side: "buy", size_usdc: 5, price: 0.49, probability: 0.55 }],
  },
);
export type IntentBody = typeof IntentBody.static;

/**
 * Optional as a whole: Elysia then checks and decodes the query only when the request has one (an
 * intent without `?dry_run` skips both; the same rules apply to any query that is sent).
 */
export const IntentQuery = t.Optional(t.Object({ dry_run: t.Optional(t.Boolean()) }, { additionalProperties: false }));
