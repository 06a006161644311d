/**
 * The ports the agent actor needs. The actor never imports from src/: the
 * service implements these (database store, venue calls, risk evaluation) and
 * hands them in.
 */

import type { StatusPatch } from "../src/domain/order-status.ts";
import type { FillRecord as FillRecordInput, FillTotals } from "../src/domain/fill.ts";
import type { Market, OrderBook } from "../src/domain/market.ts";
import type { OrderMessage, OrderType } from "../src/domain/order-message.ts";
import type { BreakerReason, Mode, OrderSide, OrderStatus, VenueOrderStatus } from "../src/domain/order-status.ts";
import type { VenueCredentials } from "../src/domain/venue-credentials.ts";
import type { OrderDomain } from "../src/eip712/order-typed-data.ts";

export interface AgentProfile {
  id: string;
  orgId: string;
  name: string | null;
  mode: Mode;
  walletAddress: string;
  signerAddress: string;
  signatureType: number;
  /** The deposit wallet's owner EOA (signature type 3), else null. */
  ownerAddress?: string | null;
  createdAt: Date;
}

export interface BreakerState {
  state: "closed" | "tripped";
  reason: BreakerReason | null;
  since: Date | null;
}

export interface CredentialsInfo {
  scopes: string[];
  keyHint: string;
  createdAt: Date;
}

/** The limits the actor itself reads; the rest are opaque to it. */
export interface ActorLimits {
  daily_volume_usdc: number;
  max_venue_errors: number;
  breaker_cooldown_s: number;
  /** Runaway refusals within 60 s that trip the breaker (reason runaway); absent: never. */
  runaway_trip_count?: number;
  /** How long approvals are remembered for the duplicate guard, in seconds. */
  duplicate_window_s?: number;
  /** Above it (USDC) an approved intent waits for a person; null or absent: off. */
  approval_threshold_usdc?: number | null;
}

/** The dead-man switch: when on, the agent is killed (reason heartbeat) once `deadlineAt` passes without a beat. */
export interface HeartbeatState {
  intervalS: number;
  lastAt: Date;
  deadlineAt: Date;
}

/** An approved intent the runaway guards remember: when, and what (market, side, size, price). */
export interface RecentApproval {
  at: number;
  fingerprint: string;
}

/** An order the actor tracks while its notional is reserved or at the venue. */
export interface TrackedOrder {
  id: string;
  mode: Mode;
  marketId: string;
  conditionId: string;
  side: OrderSide;
  notionalUnits: bigint;
  status: OrderStatus;
  tradingDay: string;
  venueOrderId: string | null;
  signatureDeadline: Date | null;
  filledUnits: bigint;
  /** While pending_approval: when it expires unless a person decides first. */
  approvalDeadline?: Date | null;
  /** The outcome token (market id) and the order's shares (6-decimal units), for the position checks. */
  tokenId?: string;
  sharesUnits?: bigint;
  /** Shares filled so far, from the fills reported. */
  filledSharesUnits?: bigint;
  /** USDC its counted fills add up to (they are in the positions; exposureOf counts the rest of the order). */
  fillsUsdcUnits?: bigint;
}

/** What the agent holds of one outcome token, from its fills at average cost (6-decimal units). */
export interface HeldPosition {
  conditionId: string;
  sharesUnits: bigint;
  costUnits: bigint;
}

export interface AgentSnapshot<L extends ActorLimits> {
  profile: AgentProfile;
  limits: L;
  breaker: BreakerState;
  venueErrorStreak: number;
  credentials: CredentialsInfo | null;
  /** Orders in an active status. */
  activeOrders: TrackedOrder[];
  /** Notional counted against the daily limit, per UTC day (YYYY-MM-DD) that still matters. */
  dailyUsedUnits: Record<string, bigint>;
  /** Exposure per condition id of the orders beside the positions (order-counts.ts `exposureOf`). */
  exposureUnits: Record<string, bigint>;
  /** Shares held per outcome token, from the fills reported (buys less sells). */
  heldShares?: Record<string, bigint>;
  /** Positions per outcome token from the counted fills (average cost): their cost is exposure. */
  positions?: Record<string, HeldPosition>;
  /** Last EIP-712 timestamp (ms) given to this agent's orders. */
  lastOrderTimestampMs: number;
  /** The dead-man switch, when on. */
  heartbeat?: HeartbeatState | null;
  /** Intents approved recently (the last minute, or the duplicate window if longer), oldest first. */
  recentApprovals?: RecentApproval[];
}

/** What the actor persists itself (small, rare writes). */
export interface AgentStore<L extends ActorLimits> {
  saveLimits(agentId: string, limits: L): Promise<void>;
  saveBreaker(agentId: string, breaker: BreakerState, venueErrorStreak: number): Promise<void>;
  saveCredentials(agentId: string, sealed: Uint8Array, info: CredentialsInfo): Promise<void>;
  /** Deletes the sealed credentials and returns the agent to payload mode. */
  deleteCredentials(agentId: string): Promise<boolean>;
  /** Persists the dead-man switch (null: off), so a restart keeps its deadline. */
  saveHeartbeat?(agentId: string, heartbeat: HeartbeatState | null): Promise<void>;
}


/**
 * Outcome of one cancellation at the venue, within the kill deadline:
 * cancelled (with what had filled, when the venue said so), filled (it had
 * matched before the cancel reached it), or failed (not confirmed in time).
 */
export type CancelOutcome = { status: "cancelled" | "filled"; filledUnits?: bigint } | { status: "failed" };

export interface KillOutcome {
  orderId: string;
  status: "cancelled" | "filled" | "failed";
  reason: string;
  filledUnits?: bigint;
}

/**
 * How a kill cancels one order: `cancelOnce` is one venue call; the service's policy retries errors
 * and unanswered calls until `signal` (the kill deadline) fires (src/modules/kill/cancel-with-retry.ts).
 */
export type CancelRetry = (
  venueOrderId: string,
  cancelOnce: (venueOrderId: string, signal: AbortSignal) => Promise<VenueCancelResult>,
  signal: AbortSignal,
) => Promise<VenueCancelResult>;

export interface KillPorts {
  /** Cancels one order at the venue; resolves failed when not confirmed before the signal aborts. */
  cancelAtVenue(order: TrackedOrder, signal: AbortSignal): Promise<CancelOutcome>;
  /** Persists the final statuses of a kill. */
  saveOutcomes(outcomes: KillOutcome[]): Promise<void>;
}

// ---------------------------------------------------------------- the order path's ports

/** What the actor reads of a stored order; the store's own row type carries more. */
export interface StoredOrder {
  id: string;
  agentId: string;
  mode: Mode;
  status: OrderStatus;
  side: OrderSide;
  conditionId: string;
  tradingDay: string;
  notionalUnits: bigint;
  filledUnits: bigint;
  venueOrderId: string | null;
  orderHash: string | null;
  orderType: OrderType;
  expiration: string;
  signatureDeadline: Date | null;
  approvalDeadline?: Date | null;
  /** When a client's cancel was sent to the venue and not yet settled (OrderStore.markCancelRequested). */
  cancelRequestedAt?: Date | null;
  typedData: { domain: OrderDomain; primaryType: "Order"; message: OrderMessage } | null;
}

/** A new order as the actor builds it. */
export interface NewOrder {
  id: string;
  orgId: string;
  agentId: string;
  mode: Mode;
  marketId: string;
  conditionId: string;
  side: OrderSide;
  sizeUnits: bigint;
  price: string;
  notionalUnits: bigint;
  orderType: OrderType;
  expiration: string;
  status: OrderStatus;
  orderHash: string;
  typedData: { domain: OrderDomain; primaryType: "Order"; message: OrderMessage };
  signatureDeadline: Date | null;
  approvalDeadline: Date | null;
  clientOrderId: string | null;
  decisionId: string;
  tradingDay: string;
  history: { status: OrderStatus; at: string; reason: string | null; by?: string }[];
  createdAt: Date;
  updatedAt: Date;
}

/** A risk decision as stored (approved with its order, or rejected with its failures). */
export interface NewDecision {
  id: string;
  orgId: string;
  agentId: string;
  approved: boolean;
  intent: Record<string, unknown>;
  failures: unknown[];
  checks: unknown[];
  orderId: string | null;
  createdAt: Date;
}


/**
 * Where orders are stored. Every status change is a conditional update (from one of `from`), and the
 * store records the matching event in the same transaction.
 */

export interface OrderStore<R extends StoredOrder = StoredOrder> {
  /** Durably writes an approved order and its decision; resolves after commit. */
  insert(order: NewOrder, decision: NewDecision): Promise<void>;
  /** Durably writes a rejected decision. */
  insertDecision(decision: NewDecision): Promise<void>;
  get(id: string): Promise<R | null>;
  transition(id: string, from: OrderStatus[], to: OrderStatus, reason: string | null, patch?: StatusPatch): Promise<R | null>;
  transitionMany(ids: string[], from: OrderStatus[], to: OrderStatus, reason: string, patch?: StatusPatch): Promise<string[]>;
  /**
   * transition(id, ["submitting"], to, reason, patch) for a placement the venue answered, which a store
   * may group-commit with others (the SQL store does); optional: transition is used without it.
   */
  transitionPlaced?(id: string, to: OrderStatus, reason: string, patch: { venueOrderId: string; filledUnits: bigint }): Promise<R | null>;
  /** Records a larger filled amount learned from the venue, without changing the status. */
  setFilled(id: string, status: OrderStatus, filledUnits: bigint): Promise<boolean>;
  /**
   * Durably records, before the venue is called, that a client's cancel of the order is being sent
   * (the status does not change). Resolves the marker's time after commit, or null when the order
   * is no longer in one of `from`.
   */
  markCancelRequested(id: string, from: OrderStatus[]): Promise<Date | null>;
  /** Clears the marker written at `at` (not a later one), once the venue is known not to have cancelled the order. */
  clearCancelRequested(id: string, at: Date): Promise<boolean>;
}

/** What a venue answered to a placement. */
export type VenuePostResult =
  | { ok: true; venue_order_id: string; status: VenueOrderStatus; filled_usdc?: string; filled_shares?: string; trade_ids?: string[]; tx_hashes?: string[] }
  | { ok: false; error: string };
/** `status`: the venue's HTTP status when it answered with an error; `retry_after_s`: its Retry-After. */
export type VenueCancelResult = { ok: true; already?: boolean } | { ok: false; error: string; status?: number; retry_after_s?: number };
export interface VenueOrderView {
  venue_order_id: string;
  status: VenueOrderStatus;
  filled_usdc: string;
}
type Call = { signal?: AbortSignal };

/** The venue as the actor uses it (the service's venue port fits it). Throws VenueUnavailable-like errors when it does not answer. */
export interface VenuePort {
  getMarketByToken(tokenId: string, opts?: Call): Promise<Market | null>;
  getBook(tokenId: string, opts?: Call): Promise<OrderBook | null>;
  postSignedOrder(
    req: { order: OrderMessage; signature: `0x${string}`; order_type: OrderType; expiration: string; owner?: string; venue_auth?: VenueAuthPassThrough },
    opts?: Call,
  ): Promise<VenuePostResult>;
  placeDelegatedOrder(
    req: { credentials: VenueCredentials; client_order_id: string; order: OrderMessage; order_type: OrderType; expiration: string },
    opts?: Call,
  ): Promise<VenuePostResult>;
  cancelOrder(req: { venue_order_id: string; credentials?: VenueCredentials; venue_auth?: VenueAuthPassThrough }, opts?: Call): Promise<VenueCancelResult>;
  getOrder(req: { venue_order_id: string; credentials?: VenueCredentials }, opts?: Call): Promise<VenueOrderView | null>;
}

/** The order owner's own venue L2 headers for one request (POST /order, DELETE /order), passed through and never stored. */
export interface VenueAuthPassThrough {
  address?: string;
  api_key: string;
  passphrase: string;
  timestamp: string;
  signature: string;
}

/** Opens the agent's sealed venue credentials for the duration of one call. */
export interface CredentialPort {
  /**
   * Runs `fn` with the agent's opened credentials; null (without running it) when it has none.
   * `sealed`: their sealed bytes as readSealed read them for this call (else they are read now).
   */
  withAgentCredentials<T>(agentId: string, fn: (creds: VenueCredentials) => Promise<T>, sealed?: Promise<Uint8Array | null>): Promise<T | null>;
  /** Reads the agent's sealed credentials (null: none) for one withAgentCredentials call about to be made. */
  readSealed?(agentId: string): Promise<Uint8Array | null>;
  /** Runs `fn` exactly once, with the agent's credentials or, when it has none, without. */
  withAgentCredentialsOrNone<T>(agentId: string, fn: (creds: VenueCredentials | undefined) => Promise<T>): Promise<T>;
}

/** Counters and logs the actor reports to (metrics and logging live outside). */
export interface ActorObserver {
  verdict(v: { approved: boolean; failures: { check: string; code: string }[] }): void;
  /** Starts timing a venue call; the returned function ends it. */
  venueCall(op: string): (ok: boolean) => void;
  warn(message: string, fields: Record<string, unknown>): void;
  error(message: string, fields: Record<string, unknown>): void;
}

// ---------------------------------------------------------------- fills (the venue's truth)

export type { FillRecord as FillRecordInput, FillTotals } from "../src/domain/fill.ts";

export type FillOutcome<R> =
  | { kind: "applied"; before: R; row: R; changed: boolean; totals: FillTotals; beforeTotals: FillTotals }
  | { kind: "refused"; status: OrderStatus }
  | { kind: "not_found" };

/**
 * Where fills are stored, each with its order's change in one transaction. `decide` is the actor's
 * lifecycle decision from the order as stored and its totals after the change; null writes nothing.
 */
export interface FillPort<R extends StoredOrder = StoredOrder> {
  applyFill(orderId: string, fill: FillRecordInput, decide: (order: R, totals: FillTotals, beforeTotals: FillTotals) => { to: OrderStatus; reason: string } | null): Promise<FillOutcome<R>>;
  revertFill(
    orderId: string,
    ref: { fillKey: string; tradeId?: string; txHash?: string; logIndex?: number },
    decide: (order: R, totals: FillTotals, beforeTotals: FillTotals) => { to: OrderStatus; reason: string } | null,
  ): Promise<FillOutcome<R>>;
}

/**
 * Reads a wallet's balance of an outcome token on the chain (the Conditional Tokens contract's
 * `balanceOf`), in 6-decimal share units; null when the source is off or does not answer. A sell may
 * hand over that many shares when it is more than the fills say (shares bought elsewhere).
 */
export interface PositionBalanceReader {
  heldShares(wallet: string, tokenId: string, opts?: { signal?: AbortSignal }): Promise<bigint | null>;
}

/** Everything the order path needs besides the agent's own state. */
export interface OrderPorts<R extends StoredOrder = StoredOrder> {
  orders: OrderStore<R>;
  /** Fills reported by the sources of the venue's truth; absent, venue reports are ignored. */
  fills?: FillPort<R>;
  /** The wallet's on-chain balance of an outcome token (the chain source wires it); absent: positions come from fills alone. */
  balances?: PositionBalanceReader;
  venue: VenuePort;
  credentials: CredentialPort;
  observer: ActorObserver;
  config: {
    chainId: number;
    builderCode: `0x${string}`;
    signatureTtlS: number;
    venueTimeoutMs: number;
    /** How long an order above approval_threshold_usdc waits for a person (default 3600 s). */
    approvalTtlS?: number;
    /**
     * Whether every fill of this venue reaches the actor (the paper venue in-process, or a source of the
     * venue's truth: the chain, the user channel), so the shares held are known and a sell of more fails
     * `insufficient_position`. Off (default): sells are not checked against positions.
     */
    checkPositions?: boolean;
  };
}
