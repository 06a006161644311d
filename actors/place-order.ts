import { fromStatuses, orderSharesUnits, placementEvent } from "../src/domain/order-lifecycle.ts";
import { toUnits } from "../src/domain/units.ts";
import { filledUnitsOf, orderStatusFor } from "../src/domain/venue-status.ts";
import type { ActorCore } from "./actor-core.ts";
import type { Placed } from "./messages.ts";
import type { ActorLimits, StoredOrder, VenueCancelResult, VenuePostResult } from "./ports.ts";
import type { VenueOutcome } from "./venue-outcome.ts";
import { applyVenueReport } from "./apply-venue-report.ts";

/**
 * Sends one order to the venue and records what happened: in the store first, then in the actor.
 * The order is already `submitting` in the store, so a crash in between leaves a row that
 * reconciliation settles; nothing here ever posts an order twice.
 */
export async function placeOrder<L extends ActorLimits, R extends StoredOrder>(
  actor: ActorCore<L, R>,
  order: { id: string; notionalUnits: bigint },
  finish: (outcome: VenueOutcome) => Promise<void>,
  call: () => Promise<VenuePostResult | null>,
  /** Cancels an order the venue accepted after someone else (the kill switch) had already settled it. */
  cancelLate?: (venueOrderId: string) => Promise<VenueCancelResult>,
): Promise<Placed<R>> {
  const p = actor.requirePorts();
  if (!(await actor.mayPlace())) {
    // Halted (a kill) after the order was approved or signed: it is never sent.
    await p.orders.transition(order.id, fromStatuses("not_sent"), "rejected", "the agent was halted before the order was sent");
    await finish({ kind: "rejected" });
    return { kind: "invalid_state", detail: "the agent's breaker tripped before the order was sent; nothing was placed", orderId: order.id };
  }
  const done = p.observer.venueCall("post_order");
  let result: VenuePostResult | null;
  try {
    result = await call();
  } catch (error) {
    done(false);
    if (!(error instanceof Error && error.name === "VenueUnavailableError")) p.observer.error("venue call failed", { order_id: order.id, error });
    const row = await p.orders.transition(order.id, fromStatuses("venue_timeout"), "unknown", "venue did not answer in time");
    await finish({ kind: "unknown" });
    await actor.recordVenueResult(false);
    return { kind: "venue_timeout", orderId: order.id, status: row?.status ?? "unknown" };
  }
  if (result === null) {
    done(true);
    await p.orders.transition(order.id, fromStatuses("not_sent"), "rejected", "no credentials to place the order with");
    await finish({ kind: "rejected" });
    return { kind: "invalid_state", detail: "the agent has no venue credentials; submit them again or use payload mode", orderId: order.id };
  }
  if (!result.ok) {
    done(false);
    await p.orders.transition(order.id, fromStatuses("venue_refused"), "rejected", `venue refused: ${result.error.slice(0, 200)}`);
    await finish({ kind: "rejected" });
    await actor.recordVenueResult(false);
    return { kind: "venue_rejected", error: result.error.slice(0, 500), orderId: order.id, status: "rejected" };
  }
  done(true);
  let filledUnits = filledUnitsOf(result.filled_usdc);
  const status = orderStatusFor(result.status);
  if (status === "filled" && filledUnits === 0n) filledUnits = order.notionalUnits;
  const reason = status === "filled" ? "matched at the venue" : status === "cancelled" ? "not matched (fill-or-kill / fill-and-kill)" : "resting at the venue";
  const patch = { venueOrderId: result.venue_order_id, filledUnits };
  // The placement events of the lifecycle table all leave `submitting`: the group-committed write
  // (transitionPlaced) moves only a submitting row, as the table says.
  const row = p.orders.transitionPlaced
    ? await p.orders.transitionPlaced(order.id, status, reason, patch)
    : await p.orders.transition(order.id, fromStatuses(placementEvent(status)), status, reason, patch);
  if (status === "cancelled") {
    await finish({ kind: "accepted", venueOrderId: result.venue_order_id, status: "open", filledUnits });
    await actor.transition(order.id, { status: "cancelled", filledUnits });
  } else {
    await finish({ kind: "accepted", venueOrderId: result.venue_order_id, status, filledUnits });
  }
  await actor.recordVenueResult(true);
  if (filledUnits > 0n && p.fills) await recordPlacementFill(actor, order.id, result, filledUnits, row);
  if (!row) {
    // The kill switch gave up on this order before the venue answered: take it off the venue again.
    const late = cancelLate ? await cancelLate(result.venue_order_id).catch(() => ({ ok: false as const, error: "unreachable" })) : null;
    p.observer.warn("order accepted by the venue after it was settled here", {
      order_id: order.id,
      venue_order_id: result.venue_order_id,
      cancelled_again: late?.ok ?? false,
    });
    return { kind: "invalid_state", detail: "the order was settled (kill switch) while the venue was accepting it; a cancellation was sent", orderId: order.id };
  }
  return { kind: "ok", order: row };
}

/**
 * A placement's answer that says the order matched is a fill report (source `rest`, key
 * `order:<venue order id>:placement`, covering the trades and transactions the answer names): without
 * it, a taker's fill on a venue with no source of fills (the CLOB without the chain or the user
 * channel) would be known to the order's filled amount alone, and the positions would miss it. The
 * sources' own reports of the same trades later take their shares out of it (src/domain/fill-links.ts
 * `coveredBy`), so a trade counts once. Shares: the answer's when it gives them, else the order's
 * whole size when it filled, else its USDC at the order's limit price.
 */
async function recordPlacementFill<L extends ActorLimits, R extends StoredOrder>(
  actor: ActorCore<L, R>,
  orderId: string,
  result: Extract<VenuePostResult, { ok: true }>,
  filledUnits: bigint,
  row: R | null,
): Promise<void> {
  const p = actor.requirePorts();
  try {
    const stored = row ?? (await p.orders.get(orderId));
    const m = stored?.typedData?.message;
    if (!stored || !m) return;
    const whole = orderSharesUnits(m);
    const notional = BigInt(m.side === 0 ? m.makerAmount : m.takerAmount);
    let shares = result.filled_shares !== undefined ? toUnits(result.filled_shares, 6, "floor") : stored.status === "filled" ? whole : notional > 0n ? (filledUnits * whole) / notional : 0n;
    if (shares > whole) shares = whole;
    if (shares <= 0n) return;
    const covers = [...(result.trade_ids ?? []).map((t) => `trade:${t}`), ...(result.tx_hashes ?? []).map((h) => `tx:${h.toLowerCase()}`)];
    await applyVenueReport(actor, orderId, {
      kind: "fill",
      ref: { venueOrderId: result.venue_order_id },
      source: "rest",
      fillKey: `order:${result.venue_order_id}:placement`,
      sharesUnits: shares,
      usdcUnits: filledUnits,
      feeUnits: 0n,
      price: priceText(filledUnits, shares),
      status: "matched",
      at: new Date(actor.clock.now()),
      covers,
    });
  } catch (error) {
    p.observer.error("the placement's fill could not be recorded", { order_id: orderId, error });
  }
}

/** USDC ÷ shares as decimal text to 6 places (floored). */
function priceText(usdc: bigint, shares: bigint): string {
  const units = (usdc * 1_000_000n) / shares;
  const frac = (units % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  return `${units / 1_000_000n}${frac ? `.${frac}` : ""}`;
}
