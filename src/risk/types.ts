/**
 * Inputs and results of the risk engine (docs/api.md#risk-checks). The engine is pure:
 * everything it looks at is in RiskInput, gathered by the caller (the agent's
 * actor) from the intent, the agent's limits and state, and the venue.
 */
import type { Market, OrderBook } from "../domain/market.ts";
import type { Limits } from "./limits.ts";

export interface RiskIntent {
  /** The outcome token id (docs/api.md#post-v1ordersintent). */
  market_id: string;
  side: "buy" | "sell";
  /** Notional in USDC (JSON number, read exactly through its decimal text). */
  size_usdc: number;
  /** Limit price of one share, 0 < p < 1. */
  price: number;
  /** The agent's belief that the outcome resolves yes, 0 < q < 1 (Kelly cap). */
  probability?: number;
}

export interface RiskState {
  /**
   * The agent's breaker as it stands now. The caller resolves the automatic
   * close of a venue-errors breaker after breaker_cooldown_s before building
   * this state; the engine only reads `tripped`.
   */
  breaker: { tripped: boolean; reason: string | null };
  /** Notional already approved this UTC day (still reserved, open and filled orders), 6-decimal USDC units. */
  daily_used_usdc_units: bigint;
  /**
   * The agent's exposure in this market's condition (both outcome tokens:
   * positions at cost plus open buys' unfilled notional), 6-decimal USDC units.
   */
  market_exposure_usdc_units: bigint;
  /**
   * What the runaway guards of the breaker check read (docs/api.md#runaway-guards), counted by the
   * agent's actor at this instant. Absent: the guards are not evaluated.
   */
  runaway?: RunawayState;
  /**
   * The shares of the intent's outcome token the agent holds (from fills, or its wallet's balance when
   * larger) and those already offered in its open sells, 6-decimal units. Absent: not checked.
   */
  position?: { held_shares_units: bigint; offered_shares_units: bigint };
}

export interface RunawayState {
  /** Intents approved in the last 60 s (up to and including now). */
  approved_last_minute: number;
  /** Orders pending approval, awaiting a signature, submitting, open or unknown. */
  open_orders: number;
  /** Milliseconds since an intent with the same market, side, size and price was approved; null: none remembered. */
  duplicate_age_ms: number | null;
}

export interface RiskInput {
  intent: RiskIntent;
  limits: Limits;
  state: RiskState;
  /** The market holding the intent's token, or null when the venue has none. */
  market: Market | null;
  /** The book of the intent's token, or null when the venue has none. */
  book: OrderBook | null;
  /** Evaluation time, epoch milliseconds. */
  now_ms: number;
}

/** The eight checks in their fixed order. */
export const CHECK_NAMES = [
  "breaker",
  "market_filters",
  "order_size",
  "daily_volume",
  "concentration",
  "kelly_cap",
  "price_sanity",
  "liquidity_impact",
] as const;

export type CheckName = (typeof CHECK_NAMES)[number];

export interface RiskFailure {
  check: CheckName;
  /** Stable snake_case reason, e.g. "order_too_large". */
  code: string;
  message: string;
  /** The threshold that was crossed, as a JSON number, when the check has one. */
  limit: number | null;
  /** The value that crossed it, as a JSON number, when the check has one. */
  actual: number | null;
}

export interface CheckResult {
  check: CheckName;
  passed: boolean;
}

export interface RiskResult {
  approved: boolean;
  /** All eight checks, in the fixed order. */
  checks: CheckResult[];
  /** Every failure, grouped by check in the fixed order. */
  failures: RiskFailure[];
}

/** One check: a pure function of the input, returning its failures (empty: passed). */
export type RiskCheck = (input: RiskInput) => RiskFailure[];
