/** Small hand-made market, book and input fixtures for the risk engine tests. */
import { DEFAULT_LIMITS, mergeLimits, type Limits } from "../../src/risk/limits.ts";
import type { RiskInput, RiskIntent, RiskState } from "../../src/risk/types.ts";
import type { Market, OrderBook } from "../../src/venues/venue.ts";

export const NOW_MS = Date.parse("2026-06-01T00:00:00Z");
export const YES = "71321045679252212594626385532706912750332728571942532289631379312455583992563";
export const NO = "52114319501245915516055106046884209969926127482827954674443846427813813222426";
export const CONDITION = "0xAbC0000000000000000000000000000000000000000000000000000000000001";

export function market(over: Partial<Market> = {}): Market {
  return {
    condition_id: CONDITION,
    question: "Will it rain?",
    category: "weather",
    end_date: "2027-01-01T00:00:00Z",
    active: true,
    closed: false,
    accepting_orders: true,
    neg_risk: false,
    tick_size: "0.01",
    min_order_size: "5",
    tokens: [
      { token_id: YES, outcome: "Yes" },
      { token_id: NO, outcome: "No" },
    ],
    ...over,
  };
}

/** bids 0.48 × 1000, asks 0.52 × 1000, last trade 0.50, taken now. */
export function book(over: Partial<OrderBook> = {}): OrderBook {
  return {
    token_id: YES,
    bids: [{ price: "0.48", size: "1000" }],
    asks: [{ price: "0.52", size: "1000" }],
    last_trade_price: "0.50",
    timestamp_ms: NOW_MS,
    ...over,
  };
}

export type InputOverrides = {
  intent?: Partial<RiskIntent>;
  limits?: Partial<Limits>;
  state?: Partial<RiskState>;
  market?: Market | null;
  book?: OrderBook | null;
  now_ms?: number;
};

/**
 * An input that passes all eight checks: a buy of 10 USDC at 0.50 (resting
 * below the best ask 0.52) on an open market, default limits, clean state.
 */
export function input(over: InputOverrides = {}): RiskInput {
  return {
    intent: { market_id: YES, side: "buy", size_usdc: 10, price: 0.5, ...over.intent },
    limits: mergeLimits(DEFAULT_LIMITS, over.limits ?? {}),
    state: {
      breaker: { tripped: false, reason: null },
      daily_used_usdc_units: 0n,
      market_exposure_usdc_units: 0n,
      ...over.state,
    },
    market: over.market === undefined ? market() : over.market,
    book: over.book === undefined ? book() : over.book,
    now_ms: over.now_ms ?? NOW_MS,
  };
}

/** Levels from [price, size] pairs. */
export const levels = (...pairs: [string, string][]) => pairs.map(([price, size]) => ({ price, size }));
