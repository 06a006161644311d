import { t } from "elysia";
import { idPattern } from "../../ids.ts";
import { LimitsPatchSchema, LimitsSchema } from "../../risk/limits.ts";

/** An EVM address; the zero address is never accepted (CONTRACT 4). */
export const Address = t.String({ pattern: "^0x(?!0{40}$)[0-9a-fA-F]{40}$", description: "an EVM address, not the zero address" });
export const AgentIdParam = t.Object({ id: t.String({ pattern: idPattern("agt"), description: "agent id" }) });

export const CreateAgentBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    wallet_address: Address,
    signer_address: t.Optional(Address),
    signature_type: t.Optional(t.Union([t.Literal(0), t.Literal(1), t.Literal(2), t.Literal(3)])),
    limits: t.Optional(LimitsPatchSchema),
  },
  { additionalProperties: false },
);
export type CreateAgentBody = typeof CreateAgentBody.static;

export const KillBody = t.Optional(t.Object({ reason: t.Optional(t.String({ maxLength: 500 })) }, { additionalProperties: false }));

export const AgentModel = t.Object({
  id: t.String(),
  org_id: t.String(),
  name: t.Union([t.String(), t.Null()]),
  mode: t.Union([t.Literal("payload"), t.Literal("delegated")]),
  wallet_address: t.String(),
  signer_address: t.String(),
  signature_type: t.Integer(),
  limits: LimitsSchema,
  breaker: t.Object({
    state: t.Union([t.Literal("closed"), t.Literal("tripped")]),
    reason: t.Union([t.Literal("kill"), t.Literal("venue_errors"), t.Literal("manual"), t.Null()]),
    since: t.Union([t.String(), t.Null()]),
  }),
  daily_volume: t.Object({ used_usdc: t.Number(), limit_usdc: t.Number(), resets_at: t.String() }),
  open_orders: t.Integer(),
  credentials: t.Union([t.Null(), t.Object({ scopes: t.Array(t.String()), key_hint: t.String(), created_at: t.String() })]),
  created_at: t.String(),
});
export type AgentModel = typeof AgentModel.static;
