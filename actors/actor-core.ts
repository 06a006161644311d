/**
 * What the message handlers (run-intent.ts, run-cancel.ts, approval-decision.ts, …) see of the
 * agent actor that owns them: its state and the few internal operations that change it. Only
 * AgentActor implements it; it stays the only writer of its orders' status (through `apply`).
 */
import type { Clock } from "../src/domain/clock.ts";
import type { RiskState } from "../src/risk/types.ts";
import type { Mailbox } from "./mailbox.ts";
import type { OrderPatch } from "./order-patch.ts";
import type { ActorLimits, AgentProfile, BreakerState, CredentialsInfo, FillTotals, OrderPorts, StoredOrder, TrackedOrder } from "./ports.ts";
import type { ReserveRequest, ReserveResult } from "./reserve-request.ts";
import type { VenueOutcome } from "./venue-outcome.ts";

export interface ActorCore<L extends ActorLimits, R extends StoredOrder> {
  readonly mailbox: Mailbox;
  readonly clock: Clock;
  readonly profile: AgentProfile;
  readonly limits: L;
  readonly credentials: CredentialsInfo | null;
  /** Tracked (active) orders by id. */
  readonly active: ReadonlyMap<string, TrackedOrder>;
  /** Durable writes of reserved orders that have not finished yet. */
  readonly writes: ReadonlyMap<string, Promise<void>>;
  /** Venue calls in flight, by order id. */
  readonly inflight: ReadonlyMap<string, Promise<void>>;
  requirePorts(): OrderPorts<R>;
  /** Changes a tracked order's status (and its counts); called inside a mailbox message. */
  apply(orderId: string, patch: OrderPatch): void;
  currentBreaker(now: number): BreakerState;
  openInflight(orderId: string): (outcome: VenueOutcome) => Promise<void>;
  reserve<V extends { approved: boolean }>(req: ReserveRequest<V>): Promise<ReserveResult<V>>;
  evaluateOnly<V>(conditionId: string, evaluate: (state: RiskState) => V, fingerprint?: string, tokenId?: string): Promise<V>;
  finishPlacement(orderId: string): ((outcome: VenueOutcome) => Promise<void>) | undefined;
  mayPlace(): Promise<boolean>;
  isInflight(orderId: string): boolean;
  /** Whether a client's cancel of this order is running in this process (run-cancel.ts). */
  isCancelling(orderId: string): boolean;
  recordVenueResult(ok: boolean): Promise<void>;
  transition(orderId: string, patch: OrderPatch): Promise<void>;
  expire(orderId: string, phase?: "awaiting_signature" | "pending_approval"): Promise<boolean>;
  /** Follows a stored fill (or one taken back): the order's counts and the shares held. */
  recordFill(before: R, after: R, beforeTotals: FillTotals, totals: FillTotals): void;
  addLateFill(order: Pick<TrackedOrder, "tradingDay" | "conditionId" | "side">, filledUnits: bigint): Promise<void>;
}
