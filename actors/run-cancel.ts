/**
 * A client's cancellation of one order. One at the venue is recorded on the row first
 * (`markCancelRequested`, the status unchanged), so a crash after the venue's cancel and before the
 * row's update leaves an order reconciliation settles (reconcile-cancel.ts); the marker is cleared
 * when the venue answered that it did not cancel.
 */
import { fromStatuses } from "../src/domain/order-lifecycle.ts";
import { filledUnitsOf } from "../src/domain/venue-status.ts";
import type { ActorCore } from "./actor-core.ts";
import { LOCAL_STATUSES } from "./local-statuses.ts";
import type { Placed } from "./messages.ts";
import type { ActorLimits, StoredOrder, VenueAuthPassThrough, VenueCancelResult, VenueOrderView } from "./ports.ts";
import { settleOrder } from "./settle-order.ts";
import { venueDeadline } from "../src/domain/venue-deadline.ts";

export async function runCancel<L extends ActorLimits, R extends StoredOrder>(actor: ActorCore<L, R>, row: R, venueAuth?: VenueAuthPassThrough): Promise<Placed<R>> {
  const p = actor.requirePorts();
  if (LOCAL_STATUSES.has(row.status)) {
    const done = await actor.mailbox.send(async () => {
      const o = actor.active.get(row.id);
      if (!o || !LOCAL_STATUSES.has(o.status)) return null;
      const moved = await p.orders.transition(row.id, [o.status], "cancelled", "cancelled by the client");
      const now = moved ?? (await p.orders.get(row.id));
      if (now) actor.apply(row.id, { status: now.status, venueOrderId: now.venueOrderId, filledUnits: now.filledUnits });
      return now;
    });
    if (!done) {
      const now = await p.orders.get(row.id);
      return { kind: "invalid_state", detail: `the order is ${now?.status}`, status: now?.status };
    }
    return { kind: "ok", order: done };
  }
  // An order left `unknown` by a time-out has no venue id yet: the venue's id is its order hash.
  const venueOrderId = row.venueOrderId ?? row.orderHash;
  if ((row.status === "open" || row.status === "unknown") && venueOrderId) {
    const timeout = () => ({ signal: venueDeadline(p.config.venueTimeoutMs) });
    // The database is written before the venue is called.
    const marked = await p.orders.markCancelRequested(row.id, fromStatuses("cancel_confirmed"));
    if (!marked) {
      const now = await p.orders.get(row.id);
      return { kind: "invalid_state", detail: `an order that is ${now?.status} cannot be cancelled`, status: now?.status };
    }
    let result: VenueCancelResult;
    try {
      result = venueAuth
        ? await p.venue.cancelOrder({ venue_order_id: venueOrderId, venue_auth: { ...venueAuth, address: venueAuth.address ?? row.typedData?.message.signer ?? actor.profile.signerAddress } }, timeout())
        : await p.credentials.withAgentCredentialsOrNone(row.agentId, (credentials) => p.venue.cancelOrder({ venue_order_id: venueOrderId, credentials }, timeout()));
    } catch {
      // Not answered: the cancel may have reached the venue. The marker stays, and reconciliation reads
      // the venue's state of the order (cancelled, filled, or still live: the marker is cleared).
      return { kind: "venue_unavailable", detail: "the venue could not be reached to cancel the order; nothing was changed, try again" };
    }
    if (!result.ok) {
      // The venue answered that it did not cancel: the order stays as it is, without the marker.
      await p.orders.clearCancelRequested(row.id, marked).catch(() => {
        // Left set, reconciliation reads the order at the venue and clears it.
        p.observer.warn("cancel: the cancel marker could not be cleared", { order_id: row.id });
      });
      // A rate limit or a server error of the venue changed nothing: unavailable (503, with the
      // venue's Retry-After), safe to retry; any other refusal is the venue's answer about the order.
      if (result.status !== undefined && (result.status === 429 || result.status >= 500)) {
        return {
          kind: "venue_unavailable",
          detail: "the venue did not take the cancellation now; nothing was changed, try again",
          retryAfterS: Math.max(1, Math.ceil(result.retry_after_s ?? 2)),
        };
      }
      return { kind: "venue_rejected", error: result.error.slice(0, 500), orderId: row.id, status: row.status };
    }
    // A venue confirms an order that already filled as "done" too: read what it holds, so a
    // fill is recorded as a fill (and keeps counting against the limits), not as a cancellation.
    // A read that fails or is refused (a payload agent's cancel with the owner's venue_auth: the
    // service holds no credentials to read with) of an order the venue says was already done leaves it
    // `unknown`, never "nothing filled": its whole notional keeps counting until a source of the venue's
    // truth settles it.
    const read = await readVenueOrder(actor, row.agentId, venueOrderId);
    if (read === "unreadable" && !result.already && venueAuth) {
      // A payload order the venue cancelled while live, through the owner's own venue_auth: the service
      // holds no credentials to read it with, by design. What it had filled is what the sources of the
      // venue's truth reported (kept on the row; a fill reported later still counts, as the lifecycle
      // allows). A delegated order's failed read is a fault, and leaves it `unknown` below.
      const { row: done } = await settleOrder(actor, row.id, fromStatuses("cancel_confirmed"), "cancelled", "cancelled by the client");
      return done ? { kind: "ok", order: done } : { kind: "invalid_state", detail: "the order was settled meanwhile" };
    }
    if (read === "unreadable") {
      const { row: now } = await settleOrder(actor, row.id, fromStatuses("cancel_unreadable"), "unknown", "cancelled at the venue; what had filled could not be read");
      return now ? { kind: "ok", order: now } : { kind: "invalid_state", detail: "the order was settled meanwhile" };
    }
    const state = read.state;
    const filledUnits = state ? filledUnitsOf(state.filled_usdc) : undefined;
    if (state?.status === "matched") {
      await settleOrder(actor, row.id, fromStatuses("cancel_found_filled"), "filled", "matched at the venue before the cancellation", { filledUnits: filledUnits || row.notionalUnits });
      return { kind: "invalid_state", detail: "the order filled at the venue before it could be cancelled", status: "filled" };
    }
    const { row: done } = await settleOrder(actor, row.id, fromStatuses("cancel_confirmed"), "cancelled", "cancelled by the client", filledUnits !== undefined ? { filledUnits } : {});
    return { kind: "ok", order: done! };
  }
  return { kind: "invalid_state", detail: `an order that is ${row.status} cannot be cancelled`, status: row.status };
}

/** The venue's state of an order (null: the venue has no such order), or "unreadable" when the read failed or was refused. */
async function readVenueOrder<L extends ActorLimits, R extends StoredOrder>(
  actor: ActorCore<L, R>,
  agentId: string,
  venueOrderId: string,
): Promise<{ state: VenueOrderView | null } | "unreadable"> {
  const p = actor.requirePorts();
  try {
    const state = await p.credentials.withAgentCredentialsOrNone(agentId, (credentials) =>
      p.venue.getOrder({ venue_order_id: venueOrderId, credentials }, { signal: venueDeadline(p.config.venueTimeoutMs) }),
    );
    return { state };
  } catch {
    return "unreadable";
  }
}
