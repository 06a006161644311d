/**
 * The ports the agent actor needs. The actor never imports from src/: the
 * service implements these (database store, venue calls, risk evaluation) and
 * hands them in.
 */

import type { BreakerReason, Mode, OrderSide, OrderStatus } from "../src/domain/order-status.ts";

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
  /** Exposure per condition id: buys net of sells, reserved, open and filled. */
  exposureUnits: Record<string, bigint>;
  /** Last EIP-712 timestamp (ms) given to this agent's orders. */
  lastOrderTimestampMs: number;
}

/** What the actor persists itself (small, rare writes). */
export interface AgentStore<L extends ActorLimits> {
  saveLimits(agentId: string, limits: L): Promise<void>;
  saveBreaker(agentId: string, breaker: BreakerState, venueErrorStreak: number): Promise<void>;
  saveCredentials(agentId: string, sealed: Uint8Array, info: CredentialsInfo): Promise<void>;
  /** Deletes the sealed credentials and returns the agent to payload mode. */
  deleteCredentials(agentId: string): Promise<boolean>;
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

export interface KillPorts {
  /** Cancels one order at the venue; resolves failed when not confirmed before the signal aborts. */
  cancelAtVenue(order: TrackedOrder, signal: AbortSignal): Promise<CancelOutcome>;
  /** Persists the final statuses of a kill. */
  saveOutcomes(outcomes: KillOutcome[]): Promise<void>;
}
