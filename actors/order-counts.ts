/** The actor's bookkeeping of daily volume and market exposure, as functions over its two tallies. */
import { ACTIVE_STATUSES } from "../src/domain/order-status.ts";
import type { TrackedOrder } from "./ports.ts";

/** Per trading day (UTC date) and per market (condition id): exact 6-decimal USDC units. */
export interface OrderCounts {
  daily: Map<string, bigint>;
  exposure: Map<string, bigint>;
}

/** The UTC trading day of an instant (YYYY-MM-DD). */
export function utcDay(ms: number): string {
  // Every intent asks, and the answer changes once a day: keep the last day's text and bounds.
  if (ms >= dayStart && ms < dayStart + DAY_MS) return dayText;
  const text = new Date(ms).toISOString().slice(0, 10);
  const start = Math.floor(ms / DAY_MS) * DAY_MS;
  if (Number.isFinite(start)) {
    dayStart = start;
    dayText = text;
  }
  return text;
}

const DAY_MS = 86_400_000;
let dayStart = Number.NaN;
let dayText = "";

/** Notional an order counts against the daily volume: all of it while reserved, open, filled or unresolved; else what filled. */
export function countedNotional(o: Pick<TrackedOrder, "status" | "notionalUnits" | "filledUnits">): bigint {
  return ACTIVE_STATUSES.has(o.status) || o.status === "filled" || o.status === "failed" ? o.notionalUnits : o.filledUnits;
}

/**
 * An order's share of its market's exposure besides the positions (docs/decisions.md, "Exposure from
 * positions plus open orders"). The positions count what the fills bought, at cost; an order counts
 * only what they do not: a buy reserved, open, unresolved (`unknown`) or failed counts its notional
 * less what its fills paid (its unfilled part); a buy that ended counts what it is known to have filled
 * beyond its fills (learned from a venue read, with no fill row), a `filled` one at least its whole
 * notional. A sell counts nothing: its fills take shares out of the position at their average cost.
 */
export function exposureOf(o: Pick<TrackedOrder, "side" | "status" | "notionalUnits" | "filledUnits" | "fillsUsdcUnits">): bigint {
  if (o.side !== "buy") return 0n;
  const base =
    ACTIVE_STATUSES.has(o.status) || o.status === "failed"
      ? o.notionalUnits
      : o.status === "filled" && o.notionalUnits > o.filledUnits
        ? o.notionalUnits
        : o.filledUnits;
  const paid = o.fillsUsdcUnits ?? 0n;
  return base > paid ? base - paid : 0n;
}

/** Adds (sign 1) or removes (sign -1) an order's share of the daily volume and exposure. */
export function addCounts(counts: OrderCounts, o: TrackedOrder, sign: bigint): void {
  const daily = countedNotional(o);
  counts.daily.set(o.tradingDay, (counts.daily.get(o.tradingDay) ?? 0n) + sign * daily);
  const exp = exposureOf(o);
  counts.exposure.set(o.conditionId, (counts.exposure.get(o.conditionId) ?? 0n) + sign * exp);
}

/**
 * Counts a fill learned after its order ended (from a venue read, with no fill row) against the daily
 * volume and, for a buy, the exposure. A sell's never lowers the exposure: no fill says which shares left.
 */
export function addLateFillCounts(counts: OrderCounts, order: Pick<TrackedOrder, "tradingDay" | "conditionId" | "side">, filledUnits: bigint): void {
  if (filledUnits <= 0n) return;
  counts.daily.set(order.tradingDay, (counts.daily.get(order.tradingDay) ?? 0n) + filledUnits);
  if (order.side === "buy") counts.exposure.set(order.conditionId, (counts.exposure.get(order.conditionId) ?? 0n) + filledUnits);
}
