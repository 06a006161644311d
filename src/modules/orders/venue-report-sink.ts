/**
 * The venue report sink (src/domain/venue-report.ts): where the sources of the venue's truth (the
 * chain's OrderFilled logs, the venue's user channel and its REST catch-up, the paper venue) hand what
 * they learn. It finds the order a report names (by its EIP-712 hash or the venue's id) and its agent,
 * and delivers the report to the agent's actor as a message; the actor applies it through the order
 * lifecycle table and is the only writer of the order's status and of the agent's counts.
 *
 * Reports about one order are delivered in the order they were handed in. `report` never throws: an
 * order it cannot find is logged (debug: the paper venue's seeded book has no order here) and dropped.
 */
import type { ReportResult } from "../../../actors/apply-venue-report.ts";
import type { FillStore } from "../../db/fill-store.ts";
import type { VenueReport, VenueReportSink } from "../../domain/venue-report.ts";
import type { Logger } from "../../observability/logger.ts";
import type { AgentService } from "../agents/service.ts";

export type DeliveryResult = ReportResult | "unknown_order" | "error" | "forwarded";

/**
 * Several instances on one database: a report about an agent whose actor lives in another instance is
 * published to it (PostgreSQL NOTIFY); the instance holding the agent's lease delivers it to its actor.
 */
export interface ReportForwarding {
  /**
   * Publishes the report to the instance owning the agent. Resolves false when that instance did not
   * acknowledge having applied it in time (it may have died holding the lease): the sink then tries
   * again, and takes the actor itself once the dead owner's lease has lapsed. Anything else: done.
   */
  publish(agentId: string, r: VenueReport): Promise<boolean | void>;
}

/** How often the sink publishes one report that no owner acknowledges before it gives up (default). */
export const MAX_FORWARD_ATTEMPTS = 30;

/**
 * A report as JSON text (bigint amounts and block numbers as `{"$bigint": "…"}`, dates as ISO text);
 * `id`: what the receiving instance acknowledges.
 */
export function encodeReport(agentId: string, r: VenueReport, id?: string): string {
  return JSON.stringify({ agentId, r, ...(id ? { id } : {}) }, (_k, v) => (typeof v === "bigint" ? { $bigint: v.toString() } : v));
}

/** The inverse of encodeReport; null for anything else. */
export function decodeReport(text: string): { agentId: string; r: VenueReport; id?: string } | null {
  try {
    const out = JSON.parse(text, (k, v) => {
      if (v && typeof v === "object" && typeof v.$bigint === "string" && /^-?[0-9]+$/.test(v.$bigint)) return BigInt(v.$bigint);
      if (k === "at" && typeof v === "string") return new Date(v);
      return v;
    }) as { agentId?: unknown; r?: { kind?: unknown; ref?: unknown }; id?: unknown };
    if (typeof out.agentId !== "string" || !out.r || typeof out.r.kind !== "string" || typeof out.r.ref !== "object") return null;
    if (out.id !== undefined && typeof out.id !== "string") return null;
    return out as { agentId: string; r: VenueReport; id?: string };
  } catch {
    return null;
  }
}

export class ActorVenueReportSink implements VenueReportSink {
  /** The last delivery per order reference, so reports about one order apply in order. */
  private readonly chains = new Map<string, Promise<DeliveryResult>>();
  private readonly pending = new Set<Promise<DeliveryResult>>();

  /** `forwarding`: set where other instances may own agents (PostgreSQL); the actor is then taken only if free. */
  constructor(
    private readonly deps: { fills: Pick<FillStore, "findOrder">; agents: Pick<AgentService, "registry">; logger: Logger; forwarding?: ReportForwarding; maxForwardAttempts?: number },
  ) {}

  /** Set once the composition root has the channel (the leases start after the sink exists). */
  setForwarding(forwarding: ReportForwarding): void {
    this.deps.forwarding = forwarding;
  }

  report(r: VenueReport): void {
    void this.deliver(r);
  }

  /** Delivers one report and resolves what the actor made of it (tests and sources that want to know). */
  deliver(r: VenueReport): Promise<DeliveryResult> {
    const key = (r.ref.orderHash ?? r.ref.venueOrderId ?? "").toLowerCase();
    const previous = this.chains.get(key) ?? Promise.resolve<DeliveryResult>("applied");
    const run = previous.then(() => this.deliverNow(r));
    this.chains.set(key, run);
    this.pending.add(run);
    void run.finally(() => {
      this.pending.delete(run);
      if (this.chains.get(key) === run) this.chains.delete(key);
    });
    return run;
  }

  /** Resolves once every report handed in so far has been delivered. */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  private async deliverNow(r: VenueReport): Promise<DeliveryResult> {
    try {
      const order = await this.deps.fills.findOrder(r.ref);
      if (!order) {
        this.deps.logger.debug("venue report for an order this service does not know: dropped", { kind: r.kind, source: r.source });
        return "unknown_order";
      }
      const forwarding = this.deps.forwarding;
      const attempts = this.deps.maxForwardAttempts ?? MAX_FORWARD_ATTEMPTS;
      for (let attempt = 1; ; attempt++) {
        // Another instance's agent is not taken over for a report: the report goes to its owner.
        const actor = forwarding ? await this.deps.agents.registry.getIfFree(order.agentId) : await this.deps.agents.registry.get(order.agentId);
        if (!actor && forwarding) {
          // Not acknowledged: the owner may have died holding the lease (a NOTIFY to it is lost). Again,
          // until an owner applies it or its lease lapses and the actor is taken here.
          if ((await forwarding.publish(order.agentId, r)) !== false) return "forwarded";
          if (attempt < attempts) continue;
          this.deps.logger.warn("venue report forwarded but never acknowledged by the agent's owner: dropped (the venue's catch-up reports it again)", {
            kind: r.kind,
            source: r.source,
            agent_id: order.agentId,
          });
          return "forwarded";
        }
        if (!actor) return "unknown_order";
        const result = await actor.venueReport(order.id, r);
        if (this.deps.logger.isEnabled("debug")) {
          this.deps.logger.debug("venue report delivered", { kind: r.kind, source: r.source, order_id: order.id, fill_key: "fillKey" in r ? r.fillKey : null, result });
        }
        return result;
      }
    } catch (error) {
      this.deps.logger.error("venue report could not be applied", { kind: r.kind, source: r.source, error });
      return "error";
    }
  }
}
