/** A person's decision on an order pending approval (above approval_threshold_usdc). */
import { fromStatuses } from "../src/domain/order-lifecycle.ts";
import type { ActorCore } from "./actor-core.ts";
import type { DecisionMessage, Placed, Refusal } from "./messages.ts";
import { placeOrder } from "./place-order.ts";
import type { ActorLimits, StoredOrder } from "./ports.ts";
import { venueDeadline } from "../src/domain/venue-deadline.ts";

export async function runApprove<L extends ActorLimits, R extends StoredOrder>(actor: ActorCore<L, R>, msg: DecisionMessage<R>): Promise<Placed<R>> {
  const p = actor.requirePorts();
  const id = msg.order.id;
  const note = msg.reason ? `: ${msg.reason}` : "";
  const start = await actor.mailbox.send(async () => {
    const o = actor.active.get(id);
    if (!o || o.status !== "pending_approval") return { ok: false as const, refusal: await notPendingRefusal(actor, id) };
    const now = actor.clock.now();
    if (o.approvalDeadline && now > o.approvalDeadline.getTime()) {
      const moved = await p.orders.transition(id, fromStatuses("approval_expired"), "expired", "approval deadline passed: nobody approved it in time");
      if (moved) actor.apply(id, { status: "expired" });
      return { ok: false as const, refusal: { kind: "expired" as const, orderId: id, detail: `order ${id} passed its approval deadline` } };
    }
    if (actor.currentBreaker(now).state === "tripped") {
      return {
        ok: false as const,
        refusal: { kind: "invalid_state" as const, detail: "the agent's breaker is tripped; nothing is approved until it is resumed", status: o.status, orderId: id },
      };
    }
    if (o.mode === "payload") {
      const deadline = new Date(now + p.config.signatureTtlS * 1000);
      const moved = await p.orders.transition(id, fromStatuses("approve_for_signature"), "awaiting_signature", `approved by ${msg.by}${note}`, { signatureDeadline: deadline, by: msg.by });
      if (!moved) return { ok: false as const, refusal: await notPendingRefusal(actor, id) };
      o.signatureDeadline = deadline;
      actor.apply(id, { status: "awaiting_signature" });
      return { ok: true as const, row: moved, finish: null };
    }
    const moved = await p.orders.transition(id, fromStatuses("approve_for_placement"), "submitting", `approved by ${msg.by}${note}`, { by: msg.by });
    if (!moved) return { ok: false as const, refusal: await notPendingRefusal(actor, id) };
    actor.apply(id, { status: "submitting" });
    return { ok: true as const, row: moved, finish: actor.openInflight(id) };
  });
  if (!start.ok) return start.refusal;
  if (!start.finish) return { kind: "ok", order: start.row };
  const row = start.row;
  const message = row.typedData?.message;
  if (!message) {
    await p.orders.transition(id, fromStatuses("not_sent"), "rejected", "the stored order has no message to place");
    await start.finish({ kind: "rejected" });
    return { kind: "invalid_state", detail: "the stored order cannot be placed", orderId: id };
  }
  const timeout = () => ({ signal: venueDeadline(p.config.venueTimeoutMs) });
  return placeOrder(actor, { id, notionalUnits: row.notionalUnits }, start.finish, () =>
    p.credentials.withAgentCredentials(row.agentId, (credentials) =>
      p.venue.placeDelegatedOrder({ credentials, client_order_id: id, order: message, order_type: row.orderType, expiration: row.expiration }, timeout()),
    ),
  );
}

export function runReject<L extends ActorLimits, R extends StoredOrder>(actor: ActorCore<L, R>, msg: DecisionMessage<R>): Promise<Placed<R>> {
  const p = actor.requirePorts();
  const id = msg.order.id;
  const note = msg.reason ? `: ${msg.reason}` : "";
  return actor.mailbox.admit(() =>
    actor.mailbox.send(async (): Promise<Placed<R>> => {
      const o = actor.active.get(id);
      if (!o || o.status !== "pending_approval") return notPendingRefusal(actor, id);
      const moved = await p.orders.transition(id, fromStatuses("reject_by_person"), "rejected", `rejected by ${msg.by}${note}`, { by: msg.by });
      if (!moved) return notPendingRefusal(actor, id);
      actor.apply(id, { status: "rejected" });
      return { kind: "ok", order: moved };
    }),
  );
}

/** The refusal for an order that is not (or no longer) pending approval; the actor takes the stored status. */
export async function notPendingRefusal<L extends ActorLimits, R extends StoredOrder>(actor: ActorCore<L, R>, id: string): Promise<Refusal> {
  const stored = await actor.requirePorts().orders.get(id);
  if (stored) actor.apply(id, { status: stored.status });
  if (stored?.status === "expired") return { kind: "expired", orderId: id, detail: `order ${id} is expired: it was not approved in time` };
  return { kind: "invalid_state", detail: `the order is ${stored?.status ?? "unknown"}, not pending approval`, status: stored?.status, orderId: id };
}
