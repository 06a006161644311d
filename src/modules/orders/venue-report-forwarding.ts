/**
 * Venue reports across instances over PostgreSQL NOTIFY, acknowledged (docs/decisions.md "Venue
 * reports across instances: acknowledged"). The instance that learns of a report about an agent whose
 * actor lives elsewhere publishes it on `venue_report` with an id; the instance holding the agent's
 * lease delivers it to its actor and answers the id on `venue_report_ack`. A publication nobody
 * acknowledges within `ackTimeoutMs` resolves false, and the sink tries again (the owner may have died
 * with its lease still running: a NOTIFY to a dead instance is lost). A report applied twice counts
 * once (fills are keyed; the lifecycle table ignores what it does not allow).
 */
import { randomUUID } from "node:crypto";
import type { VenueReport } from "../../domain/venue-report.ts";
import { type DeliveryResult, decodeReport, encodeReport, type ReportForwarding } from "./venue-report-sink.ts";

export const VENUE_REPORT_CHANNEL = "venue_report";
export const VENUE_REPORT_ACK_CHANNEL = "venue_report_ack";

export interface NotifyForwardingDeps {
  /** NOTIFY `channel` with `payload` (pg_notify). */
  notify(channel: string, payload: string): Promise<void>;
  /** Whether this instance holds the agent's lease (its actor is here). */
  holds(agentId: string): boolean;
  /** Delivers a report to this instance's actor (the sink's deliver). */
  deliver(r: VenueReport): Promise<DeliveryResult>;
  /** How long a publication waits for the owner's acknowledgement. */
  ackTimeoutMs: number;
}

export class NotifyReportForwarding implements ReportForwarding {
  private readonly waiting = new Map<string, () => void>();

  constructor(private readonly deps: NotifyForwardingDeps) {}

  async publish(agentId: string, r: VenueReport): Promise<boolean> {
    const id = randomUUID();
    const acked = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(false);
      }, this.deps.ackTimeoutMs);
      this.waiting.set(id, () => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(true);
      });
    });
    try {
      await this.deps.notify(VENUE_REPORT_CHANNEL, encodeReport(agentId, r, id));
    } catch (error) {
      this.waiting.get(id)?.();
      throw error;
    }
    return acked;
  }

  /** A payload on `venue_report`: delivered here when this instance holds the agent, then acknowledged. */
  async onReport(payload: string): Promise<void> {
    const m = decodeReport(payload);
    if (!m || !this.deps.holds(m.agentId)) return;
    const result = await this.deps.deliver(m.r);
    if (result !== "error" && m.id) await this.deps.notify(VENUE_REPORT_ACK_CHANNEL, m.id).catch(() => undefined);
  }

  /** A payload on `venue_report_ack`: the publication it names was applied. */
  onAck(payload: string): void {
    this.waiting.get(payload)?.();
  }

  /** Publications still waiting (for tests). */
  get pending(): number {
    return this.waiting.size;
  }
}
