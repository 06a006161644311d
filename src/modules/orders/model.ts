import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { DEPOSIT_WALLET_SIGNATURE_HEX_LENGTH } from "../../eip712/deposit-wallet-signature.ts";
import { ForbiddenError, InvalidRequestError, InvalidSignatureError, InvalidStateError, NotFoundError, OrderExpiredError, RiskRejectedError, VenueRejectedError, VenueTimeoutError } from "../../errors/errors.ts";
import { jsonResponse, problemResponses } from "../../errors/problem-model.ts";
import { VenueUnavailableProblem } from "../../errors/venue-unavailable.ts";
import { idPattern } from "../../domain/ids.ts";
import { PageQuery } from "../../http/pagination.ts";

export const OrderTypeSchema = t.Union([t.Literal("GTC"), t.Literal("GTD"), t.Literal("FOK"), t.Literal("FAK")]);

// Passed through in HTTP headers to the venue: visible ASCII only (a space or control character could not be sent, or would be trimmed).
const HEADER_VALUE = "^[\\x21-\\x7e]+$";

/**
 * The owner's L2 headers over one exact venue request (POST /order for submit-signed, DELETE /order
 * for a cancel, DELETE /cancel-all for a kill), passed through and never stored or logged.
 */
const venueAuthProps = {
    address: t.Optional(t.String({ pattern: "^0x[0-9a-fA-F]{40}$", description: "POLY_ADDRESS; the order's signer when absent" })),
    api_key: t.String({ minLength: 1, maxLength: 200, pattern: HEADER_VALUE, description: "POLY_API_KEY" }),
    passphrase: t.String({ minLength: 1, maxLength: 200, pattern: HEADER_VALUE, description: "POLY_PASSPHRASE" }),
    timestamp: t.String({ pattern: "^[0-9]{1,13}$", description: "POLY_TIMESTAMP, unix seconds" }),
    signature: t.String({ minLength: 1, maxLength: 200, pattern: HEADER_VALUE, description: "POLY_SIGNATURE" }),
};
export const VenueAuthSchema = t.Object(venueAuthProps, { additionalProperties: false });
export type VenueAuthBody = typeof VenueAuthSchema.static;

/** The optional body of DELETE /v1/orders/{id}: the owner's L2 headers over the venue's DELETE /order. */
export const CancelBody = t.Object(
  {
    venue_auth: t.Optional(t.Object(venueAuthProps, {
      additionalProperties: false,
      description: 'payload mode at a venue that needs the owner\'s keys: L2 headers over DELETE /order with the body {"orderID":"<venue_order_id>"} (docs/api.md#payload-mode-cancels)',
    })),
  },
  { additionalProperties: false, examples: [{ venue_auth: { api_key: "6a6f3f56-1bd6-4f2a-9c0e-0d5a1c1e7b11", passphrase: "0f3c9d1e7a5b4c2d8e6f1a3b5c7d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d", timestamp: "1795000000", signature: "q0VnB2Yk3x1bY8yq9Qf0G2m3Zr5u7w9AaBbCcDdEeFg=" } }] },
);
export type CancelBody = typeof CancelBody.static;

export const SubmitSignedBody = t.Object(
  {
    order_id: t.String({ pattern: idPattern("ord") }),
    signature: t.String({
      maxLength: DEPOSIT_WALLET_SIGNATURE_HEX_LENGTH,
      description:
        "signature types 0-2: 0x + 130 hex digits (65 bytes, low s); type 3 (deposit wallet): the ERC-7739 wrapped signature, 0x + 634 hex digits (317 bytes)",
    }),
    venue_auth: t.Optional(VenueAuthSchema),
  },
  { additionalProperties: false, examples: [{ order_id: "ord_20ew38ypczk6rwcdelno", signature: "0x26120dfa12f642350441bd9eb2066b5a6e195349c2a4a7f221561cd2ef7f366c33428da1ab77174ff9f778ae4b6bd6f6f0dcbb0987de48e8d947495ed9369c281b" }] },
);
export type SubmitSignedBody = typeof SubmitSignedBody.static;

/** The optional body of approve and reject: a note recorded in the order's history. */
export const DecisionBody = t.Object(
  { reason: t.Optional(t.String({ minLength: 1, maxLength: 500, description: "recorded in the order's history with the decision" })) },
  { additionalProperties: false, examples: [{ reason: "checked the market, size is fine" }] },
);
export type DecisionBody = typeof DecisionBody.static;

export const OrderIdParam = t.Object({ id: t.String({ pattern: idPattern("ord"), description: "order id", examples: ["ord_20ew38ypczk6rwcdelno"] }) });

export const OrderStatusSchema = t.Union(
  ["pending_approval", "awaiting_signature", "submitting", "open", "filled", "cancelled", "expired", "rejected", "failed", "unknown"].map((s) => t.Literal(s)),
);

export const ListOrdersQuery = t.Object(
  { ...PageQuery, agent_id: t.Optional(t.String({ pattern: idPattern("agt") })), status: t.Optional(OrderStatusSchema) },
  { additionalProperties: false },
);

export const RiskCheckModel = t.Object({ check: t.String(), passed: t.Boolean() });
/** One failed risk check, as a dry run, a 422 risk_rejected and a stored decision report it. */
export const RiskFailureModel = t.Object({
  check: t.String(),
  code: t.String({ description: "stable snake_case reason, e.g. order_too_large" }),
  message: t.String(),
  limit: t.Optional(t.Union([t.Number(), t.String(), t.Null()], { description: "the threshold that was crossed, when the check has one" })),
  actual: t.Optional(t.Union([t.Number(), t.String(), t.Null()], { description: "the value that crossed it, when the check has one" })),
});

/** One fill of an order, as GET /v1/orders/{id} lists it and an `order` event carries it (docs/api.md#fills-and-the-venues-truth). */
export const OrderFillModel = t.Object({
  price: t.String(),
  shares: t.String(),
  usdc: t.String(),
  fee: t.String(),
  source: t.String({ description: "the source that reported it first: chain, user_channel, rest or paper" }),
  sources: t.Array(t.String()),
  trade_id: t.Union([t.String(), t.Null()]),
  tx_hash: t.Union([t.String(), t.Null()]),
  log_index: t.Union([Type.Integer(), t.Null()]),
  status: t.String({ description: "matched, mined, confirmed, retrying, or failed (taken back: counts for nothing)" }),
  at: t.String(),
});

export const ORDER_EXAMPLE = {"id": "ord_20ew38ypczk6rwcdelno", "agent_id": "agt_20ew38ygo3k92ke1kcen", "mode": "payload", "market_id": "62116011324642788450213843133477763167049099528131416799711191854278105821744", "side": "buy", "size_usdc": 5, "price": 0.49, "order_type": "GTC", "status": "open", "order_hash": "0xcca45347f0e5479e54e10ca86012d96cf4068e6b8d411eab8ef3770225a385fa", "venue_order_id": "0xcca45347f0e5479e54e10ca86012d96cf4068e6b8d411eab8ef3770225a385fa", "filled_usdc": 0, "flagged_for_review": false, "client_order_id": null, "created_at": "2026-11-24T03:13:45.500Z", "updated_at": "2026-11-24T03:13:45.647Z", "history": [{"at": "2026-11-24T03:13:45.500Z", "reason": "approved by the risk engine", "status": "awaiting_signature"}, {"at": "2026-11-24T03:13:45.641Z", "reason": "signature verified", "status": "submitting"}, {"at": "2026-11-24T03:13:45.647Z", "reason": "resting at the venue", "status": "open"}]};

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
  history: t.Array(
    t.Object({
      status: t.String(),
      at: t.String(),
      reason: t.Union([t.String(), t.Null()]),
      by: t.Optional(t.String({ description: "who decided: the API key id of a person's approval or rejection" })),
    }),
  ),
  unsigned_order: t.Optional(
    t.Object(
      {
        domain: t.Object({}, { additionalProperties: true }),
        types: t.Object({}, { additionalProperties: true }),
        primaryType: t.Literal("Order"),
        message: t.Object({}, { additionalProperties: true }),
      },
      { description: "GET /v1/orders/{id} only, while a payload-mode order awaits its signature: the EIP-712 typed data to sign" },
    ),
  ),
  signature_deadline: t.Optional(t.Union([t.String(), t.Null()], { description: "with unsigned_order: when the order expires unsigned" })),
  expiration: t.Optional(t.String({ description: "with unsigned_order: the venue order's expiration (unix seconds, \"0\" unless GTD), for the owner's venue_auth over POST /order" })),
  filled_shares: t.Optional(t.Number({ description: "GET /v1/orders/{id} only: shares filled, from the fills reported" })),
  fills: t.Optional(t.Array(OrderFillModel, { description: "GET /v1/orders/{id} only: every fill reported, each counted once whatever reported it" })),
}, { examples: [ORDER_EXAMPLE] });
export type OrderModel = typeof OrderModel.static;

// ------------------------------------------------------------------ OpenAPI documentation only

const RiskModel = t.Object({ approved: t.Boolean(), checks: t.Array(RiskCheckModel) });
/** A dry run answers 200 whether the checks pass or not: a refusal lists every failure. */
const DryRunRiskModel = t.Object({
  approved: t.Boolean(),
  checks: t.Array(RiskCheckModel),
  failures: t.Optional(t.Array(RiskFailureModel, { description: "when approved is false: every failed check" })),
});
const TypedData = t.Object(
  { domain: t.Object({}, { additionalProperties: true }), types: t.Object({}, { additionalProperties: true }), primaryType: t.Literal("Order"), message: t.Object({}, { additionalProperties: true }) },
  { description: "EIP-712 typed data, as eth_signTypedData_v4 and viem's signTypedData take it (docs/api.md#the-unsigned-order)" },
);
const PayloadAnswer = t.Object({
  order_id: t.String(),
  agent_id: t.String(),
  mode: t.Literal("payload"),
  status: t.Literal("awaiting_signature"),
  unsigned_order: TypedData,
  order_hash: t.String({ description: "the EIP-712 digest: the venue's order id once posted" }),
  order_type: OrderTypeSchema,
  expiration: t.String({ description: "Unix seconds; 0 unless GTD" }),
  signature_deadline: t.String({ description: "after it the order expires and its reservation is released" }),
  decision_id: t.String(),
  risk: RiskModel,
});
const DelegatedAnswer = t.Object({
  order_id: t.String(),
  agent_id: t.String(),
  mode: t.Literal("delegated"),
  status: t.String(),
  venue_order_id: t.Union([t.String(), t.Null()]),
  order_hash: t.Union([t.String(), t.Null()], { description: "the EIP-712 digest of the order placed (the venue's order id)" }),
  decision_id: t.String(),
  risk: RiskModel,
});
const SubmitAnswer = t.Object({ order_id: t.String(), status: t.String(), venue_order_id: t.Union([t.String(), t.Null()]), order: OrderModel });
const ApproveAnswer = t.Object({
  order_id: t.String(),
  agent_id: t.String(),
  mode: t.Union([t.Literal("payload"), t.Literal("delegated")]),
  status: t.String(),
  order_hash: t.Union([t.String(), t.Null()]),
  unsigned_order: t.Optional(TypedData),
  order_type: t.Optional(OrderTypeSchema),
  expiration: t.Optional(t.String()),
  signature_deadline: t.Optional(t.Union([t.String(), t.Null()])),
  venue_order_id: t.Optional(t.Union([t.String(), t.Null()])),
  order: OrderModel,
});
const OrderPage = t.Object({ data: t.Array(OrderModel), next_cursor: t.Union([t.String(), t.Null()]) });

const INTENT_EXAMPLE = {"order_id": "ord_20ew38ypczk6rwcdelno", "agent_id": "agt_20ew38ygo3k92ke1kcen", "mode": "payload", "status": "awaiting_signature", "unsigned_order": {"domain": {"name": "Polymarket CTF Exchange", "version": "2", "chainId": 137, "verifyingContract": "0xE111180000d2663C0091e4f400237545B87B996B"}, "types": {"EIP712Domain": [{"name": "name", "type": "string"}, {"name": "version", "type": "string"}, {"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"}], "Order": [{"name": "salt", "type": "uint256"}, {"name": "maker", "type": "address"}, {"name": "signer", "type": "address"}, {"name": "tokenId", "type": "uint256"}, {"name": "makerAmount", "type": "uint256"}, {"name": "takerAmount", "type": "uint256"}, {"name": "side", "type": "uint8"}, {"name": "signatureType", "type": "uint8"}, {"name": "timestamp", "type": "uint256"}, {"name": "metadata", "type": "bytes32"}, {"name": "builder", "type": "bytes32"}]}, "primaryType": "Order", "message": {"salt": "8672092076819671", "maker": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", "signer": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", "tokenId": "62116011324642788450213843133477763167049099528131416799711191854278105821744", "makerAmount": "4998000", "takerAmount": "10200000", "side": 0, "signatureType": 0, "timestamp": "1795490025500", "metadata": "0x0000000000000000000000000000000000000000000000000000000000000000", "builder": "0x0000000000000000000000000000000000000000000000000000000000000000"}}, "order_hash": "0xcca45347f0e5479e54e10ca86012d96cf4068e6b8d411eab8ef3770225a385fa", "order_type": "GTC", "expiration": "0", "signature_deadline": "2026-11-24T03:18:45.500Z", "decision_id": "dec_20ew38ypczlbredx0ynu", "risk": {"approved": true, "checks": [{"check": "breaker", "passed": true}, {"check": "market_filters", "passed": true}, {"check": "order_size", "passed": true}, {"check": "daily_volume", "passed": true}, {"check": "concentration", "passed": true}, {"check": "kelly_cap", "passed": true}, {"check": "price_sanity", "passed": true}, {"check": "liquidity_impact", "passed": true}]}};
const REJECTED = new RiskRejectedError({"decision_id": "dec_20ew38ylxq9gfrinpbel", "failures": [{"check": "order_size", "code": "order_too_large", "message": "size 500 USDC is above max_order_usdc 100", "limit": 100, "actual": 500}, {"check": "concentration", "code": "concentration_exceeded", "message": "exposure 0 USDC in this market plus 500 exceeds max_market_exposure_pct 0.2 × capital_usdc 1000 = 200", "limit": 200, "actual": 500}, {"check": "kelly_cap", "code": "kelly_cap_exceeded", "message": "without a probability the size is capped at kelly_fallback_pct 0.02 × capital_usdc 1000; 500 USDC exceeds it", "limit": 20, "actual": 500}], "checks": [{"check": "breaker", "passed": true}, {"check": "market_filters", "passed": true}, {"check": "order_size", "passed": false}, {"check": "daily_volume", "passed": true}, {"check": "concentration", "passed": false}, {"check": "kelly_cap", "passed": false}, {"check": "price_sanity", "passed": true}, {"check": "liquidity_impact", "passed": true}]});
const APPROVE_EXAMPLE = {
  order_id: INTENT_EXAMPLE.order_id,
  agent_id: INTENT_EXAMPLE.agent_id,
  mode: "payload",
  status: "awaiting_signature",
  order_hash: INTENT_EXAMPLE.order_hash,
  unsigned_order: INTENT_EXAMPLE.unsigned_order,
  order_type: "GTC",
  expiration: "0",
  signature_deadline: INTENT_EXAMPLE.signature_deadline,
  order: {
    ...ORDER_EXAMPLE,
    status: "awaiting_signature",
    venue_order_id: null,
    history: [
      { at: "2026-11-24T03:13:45.500Z", reason: "approved by the risk engine; above approval_threshold_usdc, waiting for a person", status: "pending_approval" },
      { at: "2026-11-24T03:13:45.500Z", reason: "approved by key_20ew38y1x4wvanve4gs2", status: "awaiting_signature", by: "key_20ew38y1x4wvanve4gs2" },
    ],
  },
};
const PendingAnswer = t.Object({
  order_id: t.String(),
  agent_id: t.String(),
  mode: t.Union([t.Literal("payload"), t.Literal("delegated")]),
  status: t.Literal("pending_approval"),
  order_hash: t.String(),
  approval_deadline: t.String({ description: "after it the order expires and its reservation is released" }),
  decision_id: t.String(),
  risk: RiskModel,
});
const PENDING_EXAMPLE = {
  order_id: INTENT_EXAMPLE.order_id,
  agent_id: INTENT_EXAMPLE.agent_id,
  mode: "payload",
  status: "pending_approval",
  order_hash: INTENT_EXAMPLE.order_hash,
  approval_deadline: "2026-11-24T04:13:45.500Z",
  decision_id: INTENT_EXAMPLE.decision_id,
  risk: INTENT_EXAMPLE.risk,
};
const noOrder = new NotFoundError("order");
const notAwaiting = new InvalidStateError("order ord_20ew38ypczk6rwcdelno is open, not awaiting a signature", { order_status: "open" });

/** OpenAPI details of the order routes (docs/api.md#orders). */
export const ordersDetail = {
  intent: {
    summary: "Submit an order intent: eight risk checks, then an unsigned order (payload) or a placed order (delegated)",
    description: "`?dry_run=true` runs the checks only and answers 200 `{risk}`, approved or not (a refusal's `risk.failures` lists every failing check). Without it a rejection is 422 `risk_rejected` listing every failing check.",
    tags: ["orders"],
    responses: {
      "200": jsonResponse("Dry run: the risk decision, nothing created", t.Object({ risk: DryRunRiskModel }), {"risk": {"approved": true, "checks": [{"check": "breaker", "passed": true}, {"check": "market_filters", "passed": true}, {"check": "order_size", "passed": true}, {"check": "daily_volume", "passed": true}, {"check": "concentration", "passed": true}, {"check": "kelly_cap", "passed": true}, {"check": "price_sanity", "passed": true}, {"check": "liquidity_impact", "passed": true}]}}),
      "201": jsonResponse(
        "Approved: an unsigned order to sign (payload mode) or an order already at the venue (delegated mode)",
        t.Union([PayloadAnswer, DelegatedAnswer]),
        INTENT_EXAMPLE,
      ),
      "202": jsonResponse("Approved above the agent's approval_threshold_usdc: reserved, waiting for a person (docs/api.md#approval-above-a-threshold)", PendingAnswer, PENDING_EXAMPLE),
      ...problemResponses(
        new InvalidRequestError("/price: Expected number to be less than 1", [{ path: "/price", message: "Expected number to be less than 1" }]),
        new ForbiddenError("this key acts on another agent"),
        new NotFoundError("agent"),
        new InvalidStateError("the agent's credentials lack the order:place scope"),
        REJECTED,
        new VenueUnavailableProblem(),
      ),
    },
  },
  submitSigned: {
    summary: "Forward the signed order to the venue (payload mode)",
    description: "The signature must recover to the order's signer over the stored order hash. The venue's answer decides the status: open, filled, or 502 venue_rejected; no answer in time is 504 venue_timeout (status unknown, reconciled).",
    tags: ["orders"],
    responses: {
      "200": jsonResponse("Sent to the venue", SubmitAnswer, {"order_id": "ord_20ew38ypczk6rwcdelno", "status": "open", "venue_order_id": "0xcca45347f0e5479e54e10ca86012d96cf4068e6b8d411eab8ef3770225a385fa", "order": {"id": "ord_20ew38ypczk6rwcdelno", "agent_id": "agt_20ew38ygo3k92ke1kcen", "mode": "payload", "market_id": "62116011324642788450213843133477763167049099528131416799711191854278105821744", "side": "buy", "size_usdc": 5, "price": 0.49, "order_type": "GTC", "status": "open", "order_hash": "0xcca45347f0e5479e54e10ca86012d96cf4068e6b8d411eab8ef3770225a385fa", "venue_order_id": "0xcca45347f0e5479e54e10ca86012d96cf4068e6b8d411eab8ef3770225a385fa", "filled_usdc": 0, "flagged_for_review": false, "client_order_id": null, "created_at": "2026-11-24T03:13:45.500Z", "updated_at": "2026-11-24T03:13:45.647Z", "history": [{"at": "2026-11-24T03:13:45.500Z", "reason": "approved by the risk engine", "status": "awaiting_signature"}, {"at": "2026-11-24T03:13:45.641Z", "reason": "signature verified", "status": "submitting"}, {"at": "2026-11-24T03:13:45.647Z", "reason": "resting at the venue", "status": "open"}]}}),
      ...problemResponses(
        new InvalidSignatureError("the signature does not recover to the order's signer"),
        noOrder,
        notAwaiting,
        new OrderExpiredError("ord_20ew38ypczk6rwcdelno"),
        new VenueRejectedError("not enough balance / allowance"),
        new VenueTimeoutError({ order_id: "ord_20ew38ypczk6rwcdelno" }),
      ),
    },
  },
  approve: {
    summary: "Approve an order pending approval (above the agent's approval_threshold_usdc)",
    description:
      "Needs an organization key that is not scoped to an agent. Payload mode: the order awaits its signature and the answer carries `unsigned_order`; delegated mode: the order is placed. The body `{reason?}` is optional. docs/api.md#approval-above-a-threshold",
    tags: ["orders"],
    responses: {
      "200": jsonResponse("Approved: awaiting its signature (payload) or placed (delegated)", ApproveAnswer, APPROVE_EXAMPLE),
      ...problemResponses(
        new ForbiddenError("approving or rejecting an order needs an organization key that is not scoped to an agent"),
        noOrder,
        new InvalidStateError("the order is awaiting_signature, not pending approval", { order_status: "awaiting_signature" }),
        new OrderExpiredError("ord_20ew38ypczk6rwcdelno", "order ord_20ew38ypczk6rwcdelno passed its approval deadline"),
      ),
    },
  },
  reject: {
    summary: "Reject an order pending approval; its reservation is released",
    description: "Needs an organization key that is not scoped to an agent. The body `{reason?}` is optional and recorded in the order's history.",
    tags: ["orders"],
    responses: problemResponses(
      new ForbiddenError("approving or rejecting an order needs an organization key that is not scoped to an agent"),
      noOrder,
      new InvalidStateError("the order is open, not pending approval", { order_status: "open" }),
    ),
  },
  list: { summary: "List orders (filter by agent_id and status)", tags: ["orders"], responses: { "200": jsonResponse("A page of orders, newest first", OrderPage, { data: [ORDER_EXAMPLE], next_cursor: null }) } },
  get: { summary: "Get an order with its status history", tags: ["orders"], responses: problemResponses(noOrder) },
  cancel: {
    summary: "Cancel one order",
    description:
      "An order awaiting its signature is cancelled here; an open or unknown one at the venue. If the venue says it already filled, 409 with order_status filled. The body is optional: none, empty, or `{venue_auth}` (payload mode at a venue that accepts a cancel only with the owner's own L2 keys: the headers over `DELETE /order {\"orderID\": venue_order_id}`, passed through, never stored). A venue refusal is 502 venue_rejected and the order stays open. docs/api.md#payload-mode-cancels",
    tags: ["orders"],
    requestBody: { required: false, content: { "application/json": { schema: CancelBody } } },
    responses: problemResponses(noOrder, notAwaiting, new VenueRejectedError("Unauthorized/Invalid api key"), new VenueUnavailableProblem()),
  },
};
