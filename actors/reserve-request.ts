import type { ActorLimits, TrackedOrder } from "./ports.ts";
import type { RiskState } from "../src/risk/types.ts";

export interface ReserveRequest<V extends { approved: boolean }> {
  /** The order to reserve if approved (status awaiting_signature or submitting). */
  order: Omit<TrackedOrder, "tradingDay" | "filledUnits">;
  /** Pure risk evaluation over the actor's state at this instant. */
  evaluate: (state: RiskState) => V;
  /** What the duplicate guard compares (market, side, size, price); absent: no runaway guards. */
  fingerprint?: string;
  /** Whether the approved order waits for a person (above approval_threshold_usdc), decided with the limits in force. */
  hold?: (limits: ActorLimits) => boolean;
  /** Starts the durable write of the approved order; not awaited inside the mailbox. */
  persist: (order: TrackedOrder, timestampMs: number) => Promise<void>;
}

export type ReserveResult<V> =
  | { verdict: V; approved: false }
  | { verdict: V; approved: true; order: TrackedOrder; timestampMs: number; written: Promise<void> };
