/**
 * A report of the venue's truth (a fill, a fill taken back, a cancel or expiry at the venue, a
 * placement), delivered by the venue report sink to the order's actor. The actor applies it through
 * the order lifecycle table (src/domain/order-lifecycle.ts): an event the table does not allow from
 * the order's status is logged and ignored, never applied. It is the only writer of the order's status
 * and of the agent's counts: the fill and the order's change are stored in one transaction, then the
 * counts (daily volume, exposure, open orders, shares held) follow what was stored.
 */
import { fromStatuses, nextStatus, type OrderEvent, orderSharesUnits } from "../src/domain/order-lifecycle.ts";
import type { VenueReport } from "../src/domain/venue-report.ts";
import type { ActorCore } from "./actor-core.ts";
import type { ActorLimits, FillOutcome, FillTotals, StoredOrder } from "./ports.ts";

export type ReportResult = "applied" | "repeat" | "refused" | "not_found" | "unsupported";

export async function applyVenueReport<L extends ActorLimits, R extends StoredOrder>(actor: ActorCore<L, R>, orderId: string, r: VenueReport): Promise<ReportResult> {
  const p = actor.requirePorts();
  const refused = (status: string, event: OrderEvent): ReportResult => {
    p.observer.warn("venue report not allowed by the order lifecycle: ignored", { order_id: orderId, status, event, source: r.source, kind: r.kind });
    return "refused";
  };
  // A placement's own report (the venue's user channel) often comes before its answer: once the answer
  // is recorded, the report finds the order as the answer left it (not `submitting`, which it may not move).
  if (r.kind === "placed") {
    // The usual case, a report of a placement whose answer is recorded and left the order open: nothing
    // to do, and nothing to wait for in the mailbox (reading the actor's map changes nothing).
    if (!actor.inflight.has(orderId) && actor.active.get(orderId)?.status === "open") return "repeat";
    await actor.inflight.get(orderId);
  }
  return actor.mailbox.send(async (): Promise<ReportResult> => {
    // An order this actor holds open: a placement report leaves it so (the actor writes its orders'
    // status, and updates what it holds after each write).
    if (r.kind === "placed" && actor.active.get(orderId)?.status === "open") return "repeat";
    if (r.kind === "fill" || r.kind === "fill_reverted") {
      const fills = p.fills;
      if (!fills) return "unsupported";
      const revert = r.kind === "fill_reverted" || r.status === "failed";
      let event: OrderEvent = "fill";
      const decide = (order: R, totals: FillTotals, beforeTotals: FillTotals) => {
        const whole = order.typedData ? orderSharesUnits(order.typedData.message) : null;
        // What the counted fills now add up to decides: a report can also lower them (a fill taken
        // back, a trade found counted twice), and a fill taken back whose trade another source's report
        // still counts leaves the order as filled as it was.
        const complete = whole !== null && totals.sharesUnits >= whole;
        event = complete ? "fill_complete" : revert || totals.sharesUnits < beforeTotals.sharesUnits ? "fill_reverted" : "fill";
        const to = nextStatus(order.status, event);
        if (!to) return null;
        const reason =
          event === "fill_reverted"
            ? revert
              ? `fill taken back (${r.kind === "fill_reverted" ? r.reason : "trade_failed"}, ${r.source})`
              : `a fill counted twice is counted once (${r.source})`
            : event === "fill_complete"
              ? `filled at the venue (${r.source})`
              : `partly filled at the venue (${r.source})`;
        return { to, reason };
      };
      const ref = { fillKey: r.fillKey, tradeId: r.kind === "fill" ? r.tradeId : undefined, txHash: r.kind === "fill" ? r.txHash : undefined, logIndex: r.kind === "fill" ? r.logIndex : undefined };
      let out: FillOutcome<R>;
      if (revert) {
        out = await fills.revertFill(orderId, ref, decide);
      } else {
        const f = r as Extract<VenueReport, { kind: "fill" }>;
        out = await fills.applyFill(
          orderId,
          {
            fillKey: f.fillKey,
            tradeId: f.tradeId,
            txHash: f.txHash,
            logIndex: f.logIndex,
            blockNumber: f.blockNumber,
            source: f.source,
            price: f.price,
            sharesUnits: f.sharesUnits,
            usdcUnits: f.usdcUnits,
            feeUnits: f.feeUnits,
            status: f.status as Exclude<typeof f.status, "failed">,
            at: f.at,
            ...(f.covers ? { covers: f.covers } : {}),
          },
          decide,
        );
      }
      if (out.kind === "not_found") return "not_found";
      if (out.kind === "refused") return refused(out.status, event);
      if (!out.changed) return "repeat";
      actor.recordFill(out.before, out.row, out.beforeTotals, out.totals);
      return "applied";
    }
    const row = await p.orders.get(orderId);
    if (!row) return "not_found";
    const event: OrderEvent = r.kind === "cancelled" ? "venue_cancelled" : r.kind === "expired" ? "venue_expired" : "venue_placed";
    const to = nextStatus(row.status, event);
    if (!to) return refused(row.status, event);
    if (to === row.status) return "repeat";
    const reason = r.kind === "cancelled" ? `cancelled at the venue (${r.source})` : r.kind === "expired" ? `expired at the venue (${r.source})` : `resting at the venue (${r.source})`;
    // What the venue says was matched in all (shares), at the order's limit price, when it is more
    // than the fills reported: kept (a cancel never gives back traded volume).
    let patch: { filledUnits?: bigint } = {};
    if (r.kind !== "placed" && r.sizeMatchedUnits !== undefined && r.sizeMatchedUnits > 0n && row.typedData) {
      const m = row.typedData.message;
      const whole = orderSharesUnits(m);
      const notional = BigInt(m.side === 0 ? m.makerAmount : m.takerAmount);
      if (whole > 0n) patch = { filledUnits: (r.sizeMatchedUnits * notional) / whole };
    }
    const moved = await p.orders.transition(orderId, fromStatuses(event, to).filter((s) => s === row.status), to, reason, patch);
    const now = moved ?? (await p.orders.get(orderId));
    if (now) actor.apply(orderId, { status: now.status, venueOrderId: now.venueOrderId, filledUnits: now.filledUnits });
    return moved ? "applied" : "repeat";
  });
}
