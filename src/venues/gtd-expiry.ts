/**
 * The service's own expiry of payload orders with a GTD expiration (issue #22 item 3). A payload
 * agent's orders are not followed on the user channel (the service holds no credentials of theirs), so
 * an open payload order with nothing filled is handed to the sink as `expired` once its expiration has
 * passed, the second the venue itself expires it. The report's source is "rest" (the service's reading
 * of the order's own terms, not a stream) and its time the expiration. A fill found later (the chain)
 * still counts: the order lifecycle table decides what applies.
 */
import type { Clock } from "../domain/clock.ts";
import type { VenueReport, VenueReportSink } from "../domain/venue-report.ts";

export interface DueOrder {
  /** The service's order id (remembered so one order is not reported every pass). */
  id: string;
  orderHash: string | null;
  venueOrderId: string | null;
  /** Unix seconds. */
  expiration: number;
}

export interface GtdExpiryOptions {
  /** Open payload GTD orders with nothing filled and expiration ≤ nowSec (src/db/due-gtd-orders.ts). */
  listDue: (nowSec: number) => Promise<DueOrder[]>;
  sink: VenueReportSink;
  clock: Clock;
  /** An order still due this long after it was reported is reported again (default 60 s). */
  repeatAfterMs?: number;
}

export class GtdExpiry {
  private readonly reported = new Map<string, number>();
  private running: Promise<number> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly o: GtdExpiryOptions) {}

  /** One pass: each due order not reported lately is handed to the sink as `expired`; answers how many were. */
  runOnce(): Promise<number> {
    if (this.running) return this.running;
    this.running = this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Runs a pass every `everyMs` (default 1000); errors go to `onError`, never thrown. */
  start(everyMs = 1000, onError?: (err: unknown) => void): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce().catch((err) => onError?.(err)), everyMs);
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }

  private async pass(): Promise<number> {
    const now = this.o.clock.now();
    const due = await this.o.listDue(Math.floor(now / 1000));
    const repeat = this.o.repeatAfterMs ?? 60_000;
    const still = new Set<string>();
    let n = 0;
    for (const d of due) {
      still.add(d.id);
      const last = this.reported.get(d.id);
      if (last !== undefined && now - last < repeat) continue;
      const ref: VenueReport["ref"] = {};
      if (d.orderHash) ref.orderHash = d.orderHash.toLowerCase() as `0x${string}`;
      if (d.venueOrderId) ref.venueOrderId = d.venueOrderId;
      if (!ref.orderHash && !ref.venueOrderId) continue;
      this.reported.set(d.id, now);
      this.o.sink.report({ kind: "expired", ref, source: "rest", at: new Date(d.expiration * 1000) });
      n++;
    }
    for (const id of this.reported.keys()) if (!still.has(id)) this.reported.delete(id);
    return n;
  }
}
