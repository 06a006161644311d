/**
 * A kill switch's cancellation of one order, retried until the venue confirms it or the kill's
 * deadline passes (CONTRACT section 9.2): an answer that is an error (5xx, 429, 408) or no answer
 * in time (a hung or failed connection) is tried again after a backoff (exponential with full
 * jitter, never shorter than the venue's `Retry-After`); a refusal that retrying cannot change
 * (another 4xx, or the venue saying why it did not cancel) ends it at once. Only what is still
 * unconfirmed when the deadline signal fires is reported unconfirmed.
 *
 * `batchingCancel` turns single cancels issued together into one batch call (`DELETE /orders`)
 * where the venue has one; retries go one order per request (`retryWith`), so one order the venue
 * cannot answer for does not hold the others of its batch back again.
 */
import type { CancelResult } from "../../venues/venue.ts";

export type CancelOne = (venueOrderId: string, signal: AbortSignal) => Promise<CancelResult>;
export type CancelMany = (venueOrderIds: string[], signal: AbortSignal) => Promise<Record<string, CancelResult>>;

export interface RetryPolicy {
  /** First backoff ceiling (ms); doubles per attempt up to `maxBackoffMs`. */
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** An attempt is given at most half of the time left, and never less than this (ms). */
  minAttemptMs: number;
  /** [0, 1) (tests pass a seeded one). */
  random: () => number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { baseBackoffMs: 50, maxBackoffMs: 1000, minAttemptMs: 250, random: Math.random };

export type RetriedCancel =
  | { ok: true; already?: boolean; attempts: number }
  /** `final`: the venue refused in a way retrying cannot change; otherwise the deadline ran out. */
  | { ok: false; error: string; attempts: number; final: boolean };

/** An error answer worth retrying: server errors, rate limits, request timeouts. */
export function isRetryableRefusal(r: { status?: number }): boolean {
  const s = r.status;
  return s !== undefined && (s >= 500 || s === 429 || s === 408 || s === 425);
}

/**
 * Cancels `venueOrderId` with `cancel`, retrying errors and timeouts until `signal` (the kill
 * deadline) fires. `deadlineAt` (epoch ms) lets it skip a wait that would end past the deadline.
 */
export async function cancelWithRetry(
  venueOrderId: string,
  cancel: CancelOne,
  opts: {
    signal: AbortSignal;
    deadlineAt: number;
    policy?: Partial<RetryPolicy>;
    now?: () => number;
    /** Cancels the retries with this instead (one order per request: a batch that failed or hung is not sent again as it was). */
    retryWith?: CancelOne;
  },
): Promise<RetriedCancel> {
  const policy = { ...DEFAULT_RETRY_POLICY, ...opts.policy };
  const now = opts.now ?? Date.now;
  let attempts = 0;
  let lastError = "no answer before the kill deadline";
  while (!opts.signal.aborted) {
    attempts++;
    const left = opts.deadlineAt - now();
    const attemptSignal = AbortSignal.any([opts.signal, AbortSignal.timeout(Math.max(policy.minAttemptMs, Math.floor(left / 2)))]);
    let retryAfterMs: number | undefined;
    try {
      const send = attempts > 1 && opts.retryWith ? opts.retryWith : cancel;
      const r = await abortable(send(venueOrderId, attemptSignal), attemptSignal);
      if (r.ok) return r.already ? { ok: true, already: true, attempts } : { ok: true, attempts };
      lastError = r.error;
      if (!isRetryableRefusal(r)) return { ok: false, error: r.error, attempts, final: true };
      retryAfterMs = r.retryAfterMs;
    } catch (error) {
      // No answer in time, or the connection failed: the cancel may or may not have happened, and
      // cancelling again is harmless ("already canceled" counts as done).
      lastError = error instanceof Error ? error.message : String(error);
    }
    const ceiling = Math.min(policy.maxBackoffMs, policy.baseBackoffMs * 2 ** (attempts - 1));
    const wait = Math.max(Math.floor(policy.random() * ceiling), retryAfterMs ?? 0);
    if (now() + wait >= opts.deadlineAt) break;
    await sleep(wait, opts.signal);
  }
  return { ok: false, error: lastError, attempts, final: false };
}

/**
 * Single cancels issued within `windowMs` of each other go out as one `cancelMany` call (at most
 * `maxBatch` ids); each caller gets its own id's result, or stops waiting when its signal fires.
 * The batch call itself runs under `signal` (the kill deadline) and each caller's wait is bounded
 * by its own signal.
 */
export function batchingCancel(cancelMany: CancelMany, opts: { signal: AbortSignal; maxBatch?: number; windowMs?: number }): CancelOne {
  const maxBatch = opts.maxBatch ?? 64;
  const windowMs = opts.windowMs ?? 2;
  let queue: { id: string; resolve: (r: CancelResult) => void; reject: (e: unknown) => void }[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;

  const flush = () => {
    timer = null;
    const batch = queue;
    queue = [];
    for (let i = 0; i < batch.length; i += maxBatch) {
      const part = batch.slice(i, i + maxBatch);
      const ids = [...new Set(part.map((p) => p.id))];
      cancelMany(ids, opts.signal).then(
        (results) => {
          for (const p of part) p.resolve(results[p.id] ?? { ok: false, error: "the venue did not answer for this order" });
        },
        (error: unknown) => {
          for (const p of part) p.reject(error);
        },
      );
    }
  };

  return (id, signal) =>
    abortable(
      new Promise<CancelResult>((resolve, reject) => {
        queue.push({ id, resolve, reject });
        if (queue.length >= maxBatch) {
          if (timer) clearTimeout(timer);
          flush();
        } else if (!timer) timer = setTimeout(flush, windowMs);
      }),
      signal,
    );
}

/** `p`, or a rejection as soon as `signal` fires. */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error("aborted"));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error("no answer before the attempt's time ran out"));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
