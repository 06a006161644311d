import { Type as T } from "@sinclair/typebox";
import { t } from "elysia";
import { PageQuery } from "../../http/pagination.ts";
import { idPattern } from "../../domain/ids.ts";

const Address = T.String({ pattern: "^0x[0-9a-fA-F]{40}$" });
const Uint = T.String({ pattern: "^[0-9]{1,78}$" });

/** The `payload` of an `exact` EVM payment by EIP-3009 (the only transfer method accepted). */
export const Eip3009PayloadSchema = T.Object({
  authorization: T.Object({
    from: Address,
    to: Address,
    value: Uint,
    validAfter: Uint,
    validBefore: Uint,
    nonce: T.String({ pattern: "^0x[0-9a-fA-F]{64}$" }),
  }),
  // 65 bytes; longer wrapped (ERC-6492) signatures are bounded by the header size.
  signature: T.String({ pattern: "^0x([0-9a-fA-F]{2}){1,2048}$" }),
});
export type Eip3009Payload = typeof Eip3009PayloadSchema.static;

export const PaymentStatus = t.Union([t.Literal("verified"), t.Literal("settled"), t.Literal("failed")]);

export const ListPaymentsQuery = t.Object(
  {
    ...PageQuery,
    agent_id: t.Optional(t.String({ pattern: idPattern("agt") })),
    payer: t.Optional(t.String({ pattern: "^0x[0-9a-fA-F]{40}$" })),
    status: t.Optional(PaymentStatus),
  },
  { additionalProperties: false },
);

export const PaymentModel = t.Object({
  id: t.String(),
  agent_id: t.Union([t.String(), t.Null()]),
  payer: t.String(),
  amount_usdc: t.Number(),
  amount_units: t.String(),
  asset: t.String(),
  network: t.String(),
  pay_to: t.String(),
  nonce: t.String(),
  x402_version: T.Integer(),
  status: PaymentStatus,
  failure_reason: t.Union([t.String(), t.Null()]),
  transaction: t.Union([t.String(), t.Null()]),
  request: t.Object({ method: t.String(), path: t.String(), status: t.Union([T.Integer(), t.Null()]) }),
  created_at: t.String(),
  updated_at: t.String(),
});
export type PaymentModel = typeof PaymentModel.static;
