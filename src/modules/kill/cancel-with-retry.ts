/**
 * A kill switch's cancellation of one order, retried until the venue confirms it or the kill's
 * deadline passes (docs/api.md#post-v1agentsidkill): an answer that is an error (5xx, 429, 408) or no answer
 * in time (a hung or failed connection) is tried again: an error after a backoff (exponential with
 * full jitter, never shorter than the venue's `Retry-After`), an attempt with no answer after half
 * of the time left by another sent beside it; a refusal that retrying cannot change
 * (another 4xx, or the venue saying why it did not cancel) ends it at once. Only what is still
 * unconfirmed when the deadline signal fires is reported unconfirmed.
 *
 * Venue-agnostic: it knows only a `CancelOne` and the `CancelResult` it answers. Cancels issued
 * together are batched by the venue adapter (src/venues/clob/cancel-coalescer.ts), not here; a
 * caller can send the retries another way (`retryWith`).
 */
import type { CancelResult } from "../../venues/venue.ts";

export type CancelOne = (venueOrderId: string, signal: AbortSignal) => Promise<CancelResult>;

export interface RetryPolicy {
  /** First backoff ceiling (ms); doubles per attempt up to `maxBackoffMs`. */
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** An attempt is given at most half of the time left, and never less than this (ms). */
  minAttemptMs: number;
  /** [0, 1) (tests pass a seeded one). */
  random: () => number;
}

/** Room left for the last attempt before the deadline (ms). */
const LAST_ATTEMPT_MS = 50;

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
 *
 * An attempt that has not answered after half of the time left (at least `minAttemptMs`) is not
 * given up: another is sent beside it (cancels are idempotent), so a slow venue that answers the
 * first still counts, and a connection that hangs does not hold the order until the deadline.
 */
export function cancelWithRetry(
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
  const { signal, deadlineAt } = opts;
  return new Promise<RetriedCancel>((resolve) => {
    let attempts = 0;
    let pending = 0;
    let errors = 0;
    let done = false;
    let lastError = "no answer before the kill deadline";
    let timer: ReturnType<typeof setTimeout> | undefined;

    let hard: ReturnType<typeof setTimeout> | undefined;
    const finish = (r: RetriedCancel) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(hard);
      signal.removeEventListener("abort", onAbort);
      resolve(r);
    };
    const unconfirmed = () => finish({ ok: false, error: lastError, attempts, final: false });
    const onAbort = () => unconfirmed();

    const launch = () => {
      if (done) return;
      if (signal.aborted) return unconfirmed();
      attempts++;
      pending++;
      const send = attempts > 1 && opts.retryWith ? opts.retryWith : cancel;
      // No answer in half the time left: another attempt goes beside this one.
      clearTimeout(timer);
      timer = setTimeout(launch, Math.max(policy.minAttemptMs, Math.floor((deadlineAt - now()) / 2)));
      abortable(send(venueOrderId, signal), signal).then(
        (r) => {
          pending--;
          if (r.ok) return finish(r.already ? { ok: true, already: true, attempts } : { ok: true, attempts });
          lastError = r.error;
          if (!isRetryableRefusal(r)) return finish({ ok: false, error: r.error, attempts, final: true });
          retryLater(r.retry_after_s === undefined ? undefined : r.retry_after_s * 1000);
        },
        (error: unknown) => {
          pending--;
          // The connection failed: the cancel may or may not have happened, and cancelling again
          // is harmless ("already canceled" counts as done).
          if (!signal.aborted) lastError = error instanceof Error ? error.message : String(error);
          retryLater(undefined);
        },
      );
    };

    const retryLater = (retryAfterMs: number | undefined) => {
      if (done) return;
      errors++;
      const ceiling = Math.min(policy.maxBackoffMs, policy.baseBackoffMs * 2 ** (errors - 1));
      const room = deadlineAt - now();
      // A backoff is shortened so one last attempt still goes out just before the deadline; the
      // venue's Retry-After is not: when it ends past the deadline, no attempt is made.
      let wait = Math.min(Math.floor(policy.random() * ceiling), room - LAST_ATTEMPT_MS);
      if (retryAfterMs !== undefined) wait = Math.max(wait, retryAfterMs);
      clearTimeout(timer);
      if (wait < 0 || now() + wait >= deadlineAt) {
        // No time for another attempt: what is still in flight may yet answer before the deadline.
        timer = undefined;
        if (pending === 0) unconfirmed();
        return;
      }
      timer = setTimeout(launch, wait);
    };

    if (signal.aborted) return unconfirmed();
    signal.addEventListener("abort", onAbort, { once: true });
    // The deadline by its own clock too, not only through the signal.
    hard = setTimeout(unconfirmed, Math.max(0, deadlineAt - now()));
    launch();
  });
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
