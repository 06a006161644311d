/**
 * The messages the agent actor receives from the features, and what it answers. Answers are data:
 * the HTTP modules turn a refusal into the matching problem (src/modules/orders/refusal-problem.ts).
 */
import type { OrderType } from "../src/domain/order-message.ts";
import type { Mode, OrderSide, OrderStatus } from "../src/domain/order-status.ts";
import type { UnsignedOrder } from "../src/eip712/order-typed-data.ts";
import type { RiskResult } from "../src/risk/types.ts";
import type { StoredOrder, VenueAuthPassThrough } from "./ports.ts";

export interface IntentMessage {
  orgId: string;
  marketId: string;
  side: OrderSide;
  /** As sent (a JSON number), for the risk checks; `sizeUnits` is the same amount exactly. */
  sizeUsdc: number;
  sizeUnits: bigint;
  price: number;
  /** The price's exact decimal text. */
  priceText: string;
  probability?: number;
  orderType: OrderType;
  /** Unix seconds ("0": none). */
  expiration: string;
  clientOrderId: string | null;
  /** The intent as the caller sent it, stored with the decision. */
  record: Record<string, unknown>;
  dryRun: boolean;
  /**
   * The order's id body (after `ord_`) reserved with the request's Idempotency-Key, so a retry after
   * a crash can tell whether the order was stored (src/modules/recovery/interrupted-requests.ts).
   */
  reservedId?: string;
}

/** Why the actor did not do what it was asked. */
export type Refusal =
  | { kind: "invalid_state"; detail: string; status?: OrderStatus; orderId?: string }
  | { kind: "expired"; orderId: string; detail?: string }
  | { kind: "invalid_signature"; reason: string }
  | { kind: "venue_unavailable"; detail: string; retryAfterS?: number }
  | { kind: "venue_rejected"; error: string; orderId: string; status: OrderStatus }
  | { kind: "venue_timeout"; orderId: string; status: OrderStatus };

export type Placed<R extends StoredOrder> = { kind: "ok"; order: R } | Refusal;

export type IntentAnswer<R extends StoredOrder> =
  | { kind: "dry_run"; verdict: RiskResult }
  | { kind: "rejected"; decisionId: string; verdict: RiskResult }
  | {
      kind: "payload";
      orderId: string;
      decisionId: string;
      verdict: RiskResult;
      unsignedOrder: UnsignedOrder;
      orderHash: `0x${string}`;
      orderType: OrderType;
      expiration: string;
      signatureDeadline: Date;
    }
  | { kind: "delegated"; orderId: string; decisionId: string; verdict: RiskResult; orderHash: `0x${string}`; placed: Placed<R> }
  | {
      /** Above approval_threshold_usdc: approved by the checks and reserved, waiting for a person. */
      kind: "pending_approval";
      orderId: string;
      mode: Mode;
      decisionId: string;
      verdict: RiskResult;
      orderHash: `0x${string}`;
      approvalDeadline: Date;
    }
  | Refusal;

/** A person's decision on an order pending approval. */
export interface DecisionMessage<R extends StoredOrder> {
  order: R;
  /** Who decides (the API key id), recorded in the order's history. */
  by: string;
  reason?: string | null;
}

export interface SubmitSignedMessage<R extends StoredOrder> {
  /** The stored order, as the caller may see it. */
  order: R;
  signature: string;
  venueAuth?: VenueAuthPassThrough;
}

export type ReconcileResult = "settled" | "pending" | "venue_down" | "skipped";
