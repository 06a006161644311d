/** The submit-signed message (payload mode): the signature over the stored order, then the venue. */
import { fromStatuses } from "../src/domain/order-lifecycle.ts";
import { verifySignedOrder } from "../src/eip712/verify-signed-order.ts";
import type { ActorCore } from "./actor-core.ts";
import type { Placed, SubmitSignedMessage } from "./messages.ts";
import { placeOrder } from "./place-order.ts";
import type { ActorLimits, StoredOrder } from "./ports.ts";
import { venueDeadline } from "../src/domain/venue-deadline.ts";

export async function runSubmitSigned<L extends ActorLimits, R extends StoredOrder>(actor: ActorCore<L, R>, msg: SubmitSignedMessage<R>): Promise<Placed<R>> {
  const p = actor.requirePorts();
  const row = msg.order;
  if (row.mode !== "payload" || !row.typedData || !row.orderHash) {
    return { kind: "invalid_state", detail: "only payload-mode orders take a signature", status: row.status };
  }
  if (row.status !== "awaiting_signature") {
    return { kind: "invalid_state", detail: `the order is ${row.status}, not awaiting a signature`, status: row.status };
  }
  if (row.signatureDeadline && actor.clock.now() > row.signatureDeadline.getTime()) {
    await actor.expire(row.id);
    return { kind: "expired", orderId: row.id };
  }
  const message = row.typedData.message;
  // Types 0-2: a 65-byte signature recovering to the signer; type 3: the ERC-7739 wrapper, its inner
  // signature recovering to the agent's owner (src/eip712/verify-signed-order.ts).
  const check = verifySignedOrder({
    domain: row.typedData.domain,
    message,
    orderHash: row.orderHash,
    signature: msg.signature,
    owner: actor.profile.ownerAddress,
  });
  if (!check.ok) return { kind: "invalid_signature", reason: check.reason };
  // Awaiting a signature → submitting, in the actor and in the store in one message, so an expiry
  // or a cancel cannot slip in between; the store says `submitting` before the venue hears of it.
  const start = await actor.mailbox.send(async () => {
    const order = actor.active.get(row.id);
    const now = actor.clock.now();
    if (!order) return { ok: false as const, reason: "not_found" as const };
    if (order.status !== "awaiting_signature") return { ok: false as const, reason: "invalid_state" as const, status: order.status };
    if (actor.currentBreaker(now).state === "tripped") return { ok: false as const, reason: "halted" as const };
    if (order.signatureDeadline && now > order.signatureDeadline.getTime()) {
      await p.orders.transition(row.id, fromStatuses("signature_expired"), "expired", "signature deadline passed");
      actor.apply(order.id, { status: "expired" });
      return { ok: false as const, reason: "expired" as const };
    }
    const moved = await p.orders.transition(row.id, fromStatuses("signature_verified"), "submitting", "signature verified");
    if (!moved) {
      const stored = await p.orders.get(row.id);
      actor.apply(row.id, { status: stored?.status ?? "expired" });
      return stored?.status === "expired" || !stored ? { ok: false as const, reason: "expired" as const } : { ok: false as const, reason: "invalid_state" as const, status: stored.status };
    }
    actor.apply(order.id, { status: "submitting" });
    return { ok: true as const, finish: actor.openInflight(order.id) };
  });
  if (!start.ok) {
    if (start.reason === "expired") return { kind: "expired", orderId: row.id };
    if (start.reason === "halted") {
      return { kind: "invalid_state", detail: "the agent's breaker is tripped; no order is forwarded until it is resumed", status: row.status };
    }
    const stored = await p.orders.get(row.id);
    const status = stored?.status ?? ("status" in start ? start.status : undefined);
    return { kind: "invalid_state", detail: `the order is ${status ?? "not awaiting a signature"}`, status };
  }
  return placeOrder(actor, 
    { id: row.id, notionalUnits: row.notionalUnits },
    start.finish,
    () =>
      p.venue.postSignedOrder(
        {
          order: message,
          signature: msg.signature as `0x${string}`,
          order_type: row.orderType,
          expiration: row.expiration,
          owner: msg.venueAuth?.api_key,
          venue_auth: msg.venueAuth,
        },
        { signal: venueDeadline(p.config.venueTimeoutMs) },
      ),
    (venueOrderId) =>
      p.credentials.withAgentCredentialsOrNone(row.agentId, (credentials) =>
        p.venue.cancelOrder({ venue_order_id: venueOrderId, credentials }, { signal: venueDeadline(p.config.venueTimeoutMs) }),
      ),
  );
}
