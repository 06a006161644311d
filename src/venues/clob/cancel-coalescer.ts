/**
 * Gathers the single-order cancels made at the same moment with the same credentials (a kill switch
 * fanning out over an agent's orders) into one batch cancel: the first cancel of a group waits one
 * timer turn for the others, then the group goes out as one call (DELETE /orders), or as the single
 * call when it is alone. Each caller gets its own order's result, and its own signal still bounds
 * its wait; the batch itself is aborted only when every caller of the group has given up.
 */
import { type CancelResult, type VenueCredentials, VenueUnavailableError } from "../venue.ts";

type Single = (id: string, credentials: VenueCredentials | undefined, signal?: AbortSignal) => Promise<CancelResult>;
type Batch = (ids: string[], credentials: VenueCredentials | undefined, signal?: AbortSignal) => Promise<Record<string, CancelResult>>;

interface Waiting {
  id: string;
  signal?: AbortSignal;
  resolve: (r: CancelResult) => void;
  reject: (e: unknown) => void;
}

interface Group {
  credentials: VenueCredentials | undefined;
  waiting: Waiting[];
}

export class CancelCoalescer {
  private readonly groups = new Map<string, Group>();

  constructor(
    private readonly single: Single,
    private readonly batch: Batch,
  ) {}

  cancel(id: string, credentials: VenueCredentials | undefined, signal?: AbortSignal): Promise<CancelResult> {
    if (signal?.aborted) return Promise.reject(new VenueUnavailableError("cancel aborted by the caller"));
    // Grouped by the credentials object and key: one caller's fan-out shares both.
    const key = credentials ? `${credentials.api_key}\u0000${credentials.address}` : "";
    let group = this.groups.get(key);
    if (!group || group.credentials !== credentials) {
      if (group) this.flush(key);
      group = { credentials, waiting: [] };
      this.groups.set(key, group);
      setTimeout(() => this.flush(key, group), 0);
    }
    return new Promise<CancelResult>((resolve, reject) => {
      const w: Waiting = { id, signal, resolve, reject };
      group.waiting.push(w);
      signal?.addEventListener("abort", () => reject(new VenueUnavailableError("cancel aborted by the caller")), { once: true });
    });
  }

  private flush(key: string, only?: Group): void {
    const group = this.groups.get(key);
    if (!group || (only && group !== only)) return;
    this.groups.delete(key);
    const { waiting, credentials } = group;
    const signal = allAborted(waiting.map((w) => w.signal));
    const ids = [...new Set(waiting.map((w) => w.id))];
    if (ids.length === 1) {
      this.single(ids[0], credentials, signal).then(
        (r) => waiting.forEach((w) => w.resolve(r)),
        (e) => waiting.forEach((w) => w.reject(e)),
      );
      return;
    }
    this.batch(ids, credentials, signal).then(
      (results) => waiting.forEach((w) => w.resolve(results[w.id] ?? { ok: false, error: "the venue did not confirm the cancellation" })),
      (e) => waiting.forEach((w) => w.reject(e)),
    );
  }
}

/** A signal that aborts once every given signal has; undefined when any caller has none (no bound but the call's own). */
function allAborted(signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  if (signals.length === 0 || signals.some((s) => s === undefined)) return undefined;
  const distinct = [...new Set(signals as AbortSignal[])];
  if (distinct.length === 1) return distinct[0];
  const controller = new AbortController();
  let left = distinct.length;
  for (const s of distinct) {
    const done = () => {
      if (--left === 0) controller.abort(s.reason);
    };
    if (s.aborted) done();
    else s.addEventListener("abort", done, { once: true });
  }
  return controller.signal;
}
