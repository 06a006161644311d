/** The runaway guards' counting (approvals in the last minute, duplicates, refusals that trip the breaker), as pure functions. */
import { RUNAWAY_CODES } from "../src/risk/checks/breaker.ts";
import type { RecentApproval } from "./ports.ts";

export const MINUTE_MS = 60_000;

/**
 * How many approvals (oldest first, from index `from` on) are older than both the last minute and the
 * duplicate window.
 */
export function staleApprovals(approvals: readonly RecentApproval[], now: number, duplicateWindowS: number | undefined, from = 0): number {
  const keepMs = Math.max(MINUTE_MS, (duplicateWindowS ?? 0) * 1000);
  let end = from;
  while (end < approvals.length && approvals[end].at <= now - keepMs) end++;
  return end - from;
}

/** Approvals of the last minute (from index `from` on): appended in time order, so they are a suffix (binary search). */
export function approvedLastMinute(approvals: readonly RecentApproval[], now: number, from = 0): number {
  let lo = from;
  let hi = approvals.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (approvals[mid].at <= now - MINUTE_MS) lo = mid + 1;
    else hi = mid;
  }
  return approvals.length - lo;
}

/** Whether a refused verdict was refused by a runaway guard. */
export function isRunawayRefusal(verdict: unknown): boolean {
  const failures = (verdict as { failures?: { code: string }[] }).failures ?? [];
  return failures.some((f) => RUNAWAY_CODES.has(f.code));
}

/**
 * Counts one runaway refusal at `now` into the refusals of the last minute; `trip` once there are
 * `tripAt` of them (absent: never).
 */
export function countRunawayRefusal(refusals: readonly number[], now: number, tripAt: number | undefined): { refusals: number[]; trip: boolean } {
  const recent = refusals.filter((at) => at > now - MINUTE_MS);
  recent.push(now);
  return { refusals: recent, trip: tripAt !== undefined && recent.length >= tripAt };
}
