/**
 * The shapes of the brokerage REST API (the service's docs/api.md and docs/events.md), snake_case as on the wire.
 * test/sdk/openapi-drift.test.ts checks the routes, parameters and request fields against the
 * service's OpenAPI document, and each client method's answer type against its route's response
 * schemas (fields, nested objects, variants), so these cannot drift unnoticed.
 */

export type Hex = `0x${string}`;
export type Side = "buy" | "sell";
export type OrderType = "GTC" | "GTD" | "FOK" | "FAK";
export type Mode = "payload" | "delegated";
export type OrderStatus =
  | "pending_approval"
  | "awaiting_signature"
  | "submitting"
  | "open"
  | "filled"
  | "cancelled"
  | "expired"
  | "rejected"
  | "failed"
  | "unknown";
export type CheckName =
  | "breaker"
  | "market_filters"
  | "order_size"
  | "daily_volume"
  | "concentration"
  | "kelly_cap"
  | "price_sanity"
  | "liquidity_impact";
export type Scope = "order:place" | "order:cancel";

/** A page of a list route: `?limit=` (at most 200) and `?cursor=`. */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}
export interface PageQuery {
  limit?: number;
  cursor?: string;
}

/** One outcome token (docs/api.md#markets). Prices and sizes are exact decimal strings. */
export interface Market {
  market_id: string;
  condition_id: string;
  question: string;
  outcome: string;
  category: string;
  end_date: string;
  active: boolean;
  closed: boolean;
  accepting_orders: boolean;
  neg_risk: boolean;
  version?: "v1" | "v2";
  tick_size: string;
  /** In shares. */
  min_order_size: string;
  best_bid: string | null;
  best_ask: string | null;
  mid: string | null;
  last_trade_price: string | null;
  [extra: string]: unknown;
}
export interface ListMarketsQuery extends PageQuery {
  category?: string;
  active?: boolean;
  closed?: boolean;
  /** Only markets accepting orders (true) or not (false). */
  accepting_orders?: boolean;
  /** Words that must all appear in the question (case-insensitive). */
  q?: string;
}

export interface Limits {
  min_order_usdc: number;
  max_order_usdc: number;
  daily_volume_usdc: number;
  capital_usdc: number;
  max_market_exposure_pct: number;
  kelly_fraction: number;
  kelly_fallback_pct: number;
  price_band: number;
  max_slippage: number;
  max_depth_share: number;
  book_max_age_s: number;
  min_time_to_end_s: number;
  market_deny: string[];
  category_deny: string[];
  category_allow: string[];
  max_venue_errors: number;
  breaker_cooldown_s: number;
  max_orders_per_minute: number;
  max_open_orders: number;
  duplicate_window_s: number;
  runaway_trip_count: number;
  approval_threshold_usdc: number | null;
  [extra: string]: unknown;
}

export interface Agent {
  id: string;
  org_id: string;
  name: string | null;
  mode: Mode;
  wallet_address: Hex;
  signer_address: Hex;
  signature_type: 0 | 1 | 2 | 3;
  owner_address?: Hex | null;
  limits: Limits;
  breaker: { state: "closed" | "tripped"; reason: string | null; since: string | null };
  daily_volume: { used_usdc: number; limit_usdc: number; resets_at: string };
  open_orders: number;
  credentials: null | { scopes: Scope[]; key_hint: string; created_at: string };
  heartbeat?: null | { interval_s: number; last_at: string | null; deadline_at: string };
  created_at: string;
  /** The service instance (its INSTANCE_ID) whose actor owns the agent now: the one that answered. */
  owner_instance?: string | null;
  [extra: string]: unknown;
}
export interface CreateAgentRequest {
  name?: string;
  wallet_address: string;
  signer_address?: string;
  signature_type?: 0 | 1 | 2 | 3;
  owner_address?: string;
  limits?: Partial<Limits>;
}
export interface CredentialsRequest {
  api_key: string;
  api_secret: string;
  passphrase?: string;
  scopes: Scope[];
}

export interface IntentRequest {
  market_id: string;
  side: Side;
  /** Order size in USDC (a JSON number, at most 6 decimals). */
  size_usdc: number;
  /** Limit price of the outcome, 0 < price < 1, a multiple of the market's tick. */
  price: number;
  agent_id?: string;
  /** The agent's belief that the outcome resolves yes, 0 < q < 1 (Kelly cap). */
  probability?: number;
  order_type?: OrderType;
  /** ISO time; GTD orders only. */
  expires_at?: string;
  client_order_id?: string;
}

export interface CheckResult {
  check: CheckName;
  passed: boolean;
}
/** One failed risk check, with the limit it broke and the value it saw (numbers where the check has them). */
export interface RiskFailure {
  check: CheckName;
  code: string;
  message: string;
  limit: number | string | null;
  actual: number | string | null;
  [extra: string]: unknown;
}
/** An approval's risk result (a rejection is a 422 problem, RiskRejectedError, whose `failures` list every failed check). */
export interface RiskResult {
  approved: boolean;
  checks: CheckResult[];
  [extra: string]: unknown;
}

/** The order message of the EIP-712 typed data: uint256 as decimal strings, uint8 as numbers. */
export type OrderMessage = {
  salt: string;
  maker: Hex;
  signer: Hex;
  tokenId: string;
  makerAmount: string;
  takerAmount: string;
  side: 0 | 1;
  signatureType: number;
  timestamp: string;
  metadata: Hex;
  builder: Hex;
};
/** EIP-712 typed data exactly as `eth_signTypedData_v4` and viem's `signTypedData` accept it. */
export type UnsignedOrder = {
  domain: { name: string; version: string; chainId: number; verifyingContract: Hex };
  types: Record<string, { name: string; type: string }[]>;
  primaryType: "Order";
  message: OrderMessage;
};

export interface PayloadIntentAnswer {
  order_id: string;
  agent_id: string;
  mode: "payload";
  status: "awaiting_signature";
  unsigned_order: UnsignedOrder;
  order_hash: Hex;
  order_type: OrderType;
  /** Unix seconds for GTD, "0" otherwise; travels beside the signed struct. */
  expiration: string;
  signature_deadline: string;
  decision_id?: string;
  risk: RiskResult;
  [extra: string]: unknown;
}
export interface DelegatedIntentAnswer {
  order_id: string;
  agent_id: string;
  mode: "delegated";
  status: Exclude<OrderStatus, "pending_approval">;
  venue_order_id: string | null;
  /** The EIP-712 digest of the order placed (the venue's order id). */
  order_hash: string | null;
  decision_id?: string;
  risk: RiskResult;
  [extra: string]: unknown;
}
/**
 * 202: the intent passed the checks but is above the agent's `approval_threshold_usdc`; it is reserved
 * and waits for a person (approveOrder / rejectOrder) until `approval_deadline`. `M` is the agent's mode.
 */
export interface PendingApprovalAnswerOf<M extends Mode> {
  order_id: string;
  agent_id: string;
  mode: M;
  status: "pending_approval";
  order_hash: Hex | null;
  approval_deadline: string;
  decision_id?: string;
  risk: RiskResult;
  [extra: string]: unknown;
}
/** A payload-mode intent waiting for a person's approval: no `unsigned_order` yet (signAndSubmit reads it once approved). */
export type PayloadPendingApprovalAnswer = PendingApprovalAnswerOf<"payload">;
export type DelegatedPendingApprovalAnswer = PendingApprovalAnswerOf<"delegated">;
export type PendingApprovalAnswer = PayloadPendingApprovalAnswer | DelegatedPendingApprovalAnswer;
/**
 * What placeIntent answers, discriminated by `mode` and then `status`: `mode === "payload"` narrows to
 * PayloadIntentAnswer | PayloadPendingApprovalAnswer, both of which signAndSubmit takes as they are.
 */
export type IntentAnswer = PayloadIntentAnswer | PayloadPendingApprovalAnswer | DelegatedIntentAnswer | DelegatedPendingApprovalAnswer;

/** The optional body of approveOrder and rejectOrder: a note recorded in the order's history. */
export interface DecisionRequest {
  reason?: string;
}
/** An approved payload-mode order: now awaiting its signature, with the unsigned order to sign. */
export interface PayloadApproveAnswer {
  order_id: string;
  agent_id: string;
  mode: "payload";
  status: "awaiting_signature";
  order_hash: Hex;
  unsigned_order: UnsignedOrder;
  order_type: OrderType;
  expiration: string;
  signature_deadline: string;
  order: Order;
  [extra: string]: unknown;
}
/** An approved delegated-mode order: placed at the venue. */
export interface DelegatedApproveAnswer {
  order_id: string;
  agent_id: string;
  mode: "delegated";
  status: OrderStatus;
  order_hash: Hex | null;
  venue_order_id: string | null;
  order: Order;
  [extra: string]: unknown;
}
export type ApproveAnswer = PayloadApproveAnswer | DelegatedApproveAnswer;
/**
 * What signAndSubmit takes: a payload-mode answer, i.e. an order with its unsigned order (an intent's or
 * an approval's), or a payload-mode intent still pending approval (signAndSubmit then reads the order:
 * once a person approved it, it signs the unsigned order the order now carries).
 */
export type SignableAnswer =
  | Pick<PayloadIntentAnswer, "order_id" | "mode" | "unsigned_order" | "order_type" | "expiration">
  | Pick<PayloadPendingApprovalAnswer, "order_id" | "mode" | "status">;
/** The dead-man switch: without a beat every `interval_s` seconds (5 to 3600) the agent is killed. */
export interface HeartbeatRequest {
  interval_s: number;
}
/** checkIntent's answer: 200 whether the checks pass or not. */
export interface DryRunAnswer {
  risk: RiskResult & {
    /** When `approved` is false: every failed check (placeIntent throws RiskRejectedError with the same). */
    failures?: RiskFailure[];
  };
  [extra: string]: unknown;
}

/** L2 headers for the venue's POST /order, signed by the caller over the exact body the service sends. */
export interface VenueAuth {
  address?: string;
  api_key: string;
  passphrase: string;
  timestamp: string;
  signature: string;
}
/** The body of POST /v1/agents/{id}/kill (optional). */
export interface KillRequest {
  reason?: string;
  /** The owner's L2 headers over DELETE /cancel-all (buildCancelAllVenueAuth). */
  venue_auth?: VenueAuth;
}
export interface SubmitSignedRequest {
  order_id: string;
  signature: Hex;
  venue_auth?: VenueAuth;
}
export interface SubmitSignedAnswer {
  order_id: string;
  status: OrderStatus;
  venue_order_id: string | null;
  /** The order as stored after the venue's answer. */
  order: Order;
  [extra: string]: unknown;
}

export interface Order {
  id: string;
  agent_id: string;
  mode: Mode;
  market_id: string;
  side: Side;
  size_usdc: number;
  price: number;
  order_type: OrderType;
  status: OrderStatus;
  order_hash: string | null;
  venue_order_id: string | null;
  filled_usdc: number;
  flagged_for_review: boolean;
  client_order_id: string | null;
  created_at: string;
  updated_at: string;
  history: { status: string; at: string; reason: string | null; by?: string }[];
  /** `getOrder` only, while a payload-mode order awaits its signature (e.g. after a person's approval). */
  unsigned_order?: UnsignedOrder;
  /** With `unsigned_order`: when the order expires unsigned. */
  signature_deadline?: string | null;
  /** With `unsigned_order`: the venue order's expiration (unix seconds, "0" unless GTD). */
  expiration?: string;
  /** `getOrder` only: shares filled, from the fills reported. */
  filled_shares?: number;
  /** `getOrder` only: every fill reported, each counted once whatever reported it. */
  fills?: Fill[];
  [extra: string]: unknown;
}
export interface ListOrdersQuery extends PageQuery {
  agent_id?: string;
  status?: OrderStatus;
}

export interface KillAnswer {
  kill_id: string;
  agent_id: string;
  started_at: string;
  completed_at: string;
  duration_ms: number;
  cancelled: string[];
  /** Orders that had already matched at the venue when the kill reached them. */
  filled: string[];
  failed: string[];
  credentials_deleted: boolean;
  agent: Agent;
  [extra: string]: unknown;
}

export interface Org {
  id: string;
  name: string;
  created_at: string;
}
export interface ApiKey {
  id: string;
  name: string | null;
  agent_id: string | null;
  created_at: string;
  /** The key's last 4 characters. */
  hint: string;
  /** When the key last authenticated a request, or null. */
  last_used_at: string | null;
  [extra: string]: unknown;
}
/** A key just issued (createApiKey): the secret, shown once, in place of its hint. */
export interface IssuedApiKey {
  id: string;
  name: string | null;
  agent_id: string | null;
  created_at: string;
  /** The secret, shown once. */
  key: string;
  [extra: string]: unknown;
}
export interface CreateOrgAnswer {
  org: Org;
  api_key: { id: string; key: string; created_at: string };
}

/** A stored risk decision (GET /v1/risk/decisions): an approval, or a rejection with every failure. */
export interface RiskDecision {
  id: string;
  agent_id: string;
  approved: boolean;
  /** The intent as submitted, with its agent_id. */
  intent: Record<string, unknown>;
  failures: RiskFailure[];
  checks: CheckResult[];
  order_id: string | null;
  created_at: string;
}
export interface ListDecisionsQuery extends PageQuery {
  agent_id?: string;
  /** true: approvals only; false: rejections only. */
  approved?: boolean;
}
/** GET /v1/risk/summary: intents per hour and daily volume per agent. */
export interface RiskSummary {
  from: string;
  to: string;
  intents: { at: string; approved: number; rejected: number }[];
  daily_volume: { agent_id: string; day: string; used_usdc: number }[];
}
export interface RiskSummaryQuery {
  agent_id?: string;
  /** Hourly intent counts over this many hours (1-168, default 24). */
  hours?: number;
  /** Daily volume over this many UTC days (1-31, default 7). */
  days?: number;
}
/** GET /v1/agents/{id}/exposure: the agent's exposure per market against its concentration limit. */
export interface Exposure {
  agent_id: string;
  limit_usdc: number;
  /** exposure_usdc = positions_cost_usdc (positions at cost) + open_orders_usdc (open buys' unfilled notional). */
  data: { condition_id: string; market_ids: string[]; exposure_usdc: number; positions_cost_usdc: number; open_orders_usdc: number }[];
}

/** An x402 payment (GET /v1/payments, admin). Amounts: USDC, and exact 6-decimal base units. */
export interface Payment {
  id: string;
  agent_id: string | null;
  payer: string;
  amount_usdc: number;
  amount_units: string;
  asset: string;
  network: string;
  pay_to: string;
  nonce: string;
  x402_version: number;
  status: "verified" | "settled" | "failed";
  failure_reason: string | null;
  transaction: string | null;
  request: { method: string; path: string; status: number | null };
  created_at: string;
  updated_at: string;
  [extra: string]: unknown;
}
export interface ListPaymentsQuery extends PageQuery {
  agent_id?: string;
  payer?: string;
  status?: Payment["status"];
}

/**
 * GET /v1/events: one Server-Sent Event (docs/events.md). `id` is the increasing event id, `type` the
 * SSE event name, and `data` the type's payload from the envelope the service sends.
 */
interface EventBase<T extends string, D> {
  id: string;
  type: T;
  agent_id: string;
  created_at: string;
  data: D;
}
/** An order was created or moved; for a fill a source reported (or took back), `fill` is that fill. */
export type OrderEvent = EventBase<"order", { order: Order; fill?: Fill }>;
export type RiskRejectedEvent = EventBase<
  "risk_rejected",
  { decision_id: string; intent: Record<string, unknown>; failures: RiskFailure[]; checks: CheckResult[]; [extra: string]: unknown }
>;
export type BreakerEvent = EventBase<
  "breaker",
  { state: "closed" | "tripped"; reason: string | null; since: string | null; previous?: { state: string; reason: string | null }; [extra: string]: unknown }
>;
export type KillEvent = EventBase<"kill", KillAnswer & { reason?: string | null }>;
/** An organization's event (no agent): a webhook endpoint was disabled after its retries. */
export interface WebhookDisabledEvent {
  id: string;
  type: "webhook_disabled";
  agent_id: null;
  created_at: string;
  data: { webhook_id: string; url: string; attempts: number; last_error: string; last_event_id: number; disabled_at: string };
}
export type BrokerEvent = OrderEvent | RiskRejectedEvent | BreakerEvent | KillEvent | WebhookDisabledEvent;
export type BrokerEventType = BrokerEvent["type"];

/** The event types a webhook endpoint can subscribe to (docs/events.md). */
export type WebhookEventType = "order" | "risk_rejected" | "breaker" | "kill" | "webhook_disabled";

/** POST /v1/webhooks (docs/webhooks.md). */
export interface CreateWebhookRequest {
  /** http(s); no credentials; a public address unless the service sets WEBHOOK_ALLOW_PRIVATE. */
  url: string;
  /** The types delivered; leave out for every type (also types added later). */
  event_types?: WebhookEventType[];
  /** Only this agent's events. */
  agent_id?: string;
  description?: string;
}

/** A webhook endpoint (no secret). */
export interface Webhook {
  id: string;
  url: string;
  event_types: WebhookEventType[] | null;
  agent_id: string | null;
  description: string | null;
  status: "enabled" | "disabled";
  /** The cursor: every matching event up to this id was delivered. */
  last_event_id: number;
  /** Failed attempts of the event after the cursor. */
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  last_success_at: string | null;
  disabled_at: string | null;
  created_at: string;
  [extra: string]: unknown;
}

/** The creation answer: the endpoint and its signing secret (`whsec_…`), shown only here. */
export interface CreatedWebhook extends Webhook {
  secret: string;
}

/** POST /v1/webhooks/{id}/test. */
export interface WebhookTestResult {
  webhook_id: string;
  /** The test message's `webhook-id`. */
  message_id: string;
  delivered: boolean;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

/** A webhook message of one event: the event's `data`, its `id` as a number, and `timestamp` for `created_at`. */
type MessageOf<E> = E extends { type: infer T; agent_id: infer A; data: infer D } ? { id: number; type: T; timestamp: string; agent_id: A; data: D } : never;
/** The message of an event (narrow it by `type`). */
export type WebhookEventMessage = MessageOf<BrokerEvent>;
/** POST /v1/webhooks/{id}/test's message: no event behind it. */
export interface WebhookTestMessage {
  id: null;
  type: "webhook_test";
  timestamp: string;
  agent_id: null;
  data: { webhook_id: string; message: string };
}
/**
 * The JSON body of every webhook message: the Standard Webhooks `type`, `timestamp` and `data`, plus the
 * event's `id` (null for a test message) and `agent_id` (null for an organization's event). `type`
 * tells the variant: `if (m.type === "order") m.data.order.status`.
 */
export type WebhookMessage = WebhookEventMessage | WebhookTestMessage;

// ---------------------------------------------------------------- cancel-all, firm-wide kill, book depth

/** POST /v1/agents/{id}/cancel-all: all of the agent's orders, or one outcome token's. */
export interface CancelAllRequest {
  market_id?: string;
  /** Payload mode, without market_id: the owner's L2 headers over DELETE /cancel-all. */
  venue_auth?: VenueAuth;
  /** Payload mode: the owner's L2 headers over each order's DELETE /order, by venue order id. */
  venue_auths?: Record<string, VenueAuth>;
}

export interface CancelAllAnswer {
  agent_id: string;
  market_id: string | null;
  started_at: string;
  completed_at: string;
  duration_ms: number;
  cancelled: string[];
  filled: string[];
  /** Not confirmed before the deadline: failed and flagged for review. */
  failed: string[];
  /** The agent afterwards: its breaker as it was, its credentials in place. */
  agent: Agent;
}

/** POST /v1/kill (organization key). */
export interface FirmKillRequest {
  /** The caller's own organization id (killAll reads it when left out). */
  org_id: string;
  reason?: string;
  /** Payload-mode agents at a venue that cancels only with the owner's keys: headers over DELETE /cancel-all, by agent id. */
  venue_auths?: Record<string, VenueAuth>;
}

export interface FirmKillAgentResult {
  agent_id: string;
  kill_id: string | null;
  duration_ms: number | null;
  cancelled: string[];
  filled: string[];
  failed: string[];
  credentials_deleted: boolean;
  /** Why this agent's kill did not run, or null. */
  error: string | null;
}

export interface FirmKillAnswer {
  org_id: string;
  halted: true;
  halted_at: string;
  started_at: string;
  completed_at: string;
  duration_ms: number;
  agents: FirmKillAgentResult[];
}

export interface FirmResumeAnswer {
  org_id: string;
  halted: false;
  /** The agents resumed: those the firm kill halted and those created while the organization was halted. */
  resumed: string[];
}

/** GET /v1/kill. */
export interface FirmKillState {
  org_id: string;
  halted: boolean;
  halted_at: string | null;
  agent_ids: string[];
}

export interface BookLevel {
  /** USDC per share, decimal string. */
  price: string;
  /** Shares at this price, decimal string. */
  size: string;
}

/** GET /v1/markets/{id}/book. */
export interface OrderBook {
  market_id: string;
  /** Best (highest) first. */
  bids: BookLevel[];
  /** Best (lowest) first. */
  asks: BookLevel[];
  bid_levels: number;
  ask_levels: number;
  last_trade_price: string | null;
  timestamp: string;
}

// ---------------------------------------------------------------- fills and positions

/** One fill of an order (amounts as exact decimal strings). `failed`: taken back, counts for nothing. */
export interface Fill {
  price: string;
  shares: string;
  usdc: string;
  fee: string;
  source: "chain" | "user_channel" | "rest" | "paper" | string;
  sources: string[];
  trade_id: string | null;
  tx_hash: string | null;
  log_index: number | null;
  status: "matched" | "mined" | "confirmed" | "retrying" | "failed" | string;
  at: string;
}

/** An agent's position in one outcome token, from its fills (amounts as exact decimal strings). */
export interface Position {
  token_id: string;
  market_id: string;
  condition_id: string;
  shares: string;
  avg_price: string;
  cost_usdc: string;
  realized_pnl_usdc: string;
  /** The book's mid; null when the venue has no book. */
  mark_price: string | null;
  unrealized_pnl_usdc: string | null;
}

export interface Positions {
  agent_id: string;
  positions: Position[];
}
