/**
 * Orders after approval: submit-signed (payload mode), read, list, cancel one,
 * expiry of unsigned orders, and reconciliation of orders whose venue state is
 * not settled (`submitting` after a crash, `unknown` after a timeout).
 */
import { verifyOrderSignature } from "../../eip712/verify-order-signature.ts";
import {
  ForbiddenError,
  InvalidSignatureError,
  InvalidStateError,
  NotFoundError,
  OrderExpiredError,
  VenueRejectedError,
} from "../../errors/errors.ts";
import { VenueUnavailableProblem } from "../../errors/venue-unavailable.ts";
import type { Caller } from "../../http/caller.ts";
import type { Logger } from "../../observability/logger.ts";
import type { OrderStatus } from "../../db/schema.ts";
import { filledUnitsOf, orderStatusFor } from "../../orders/venue-status.ts";
import { type OrderMessage, type Venue, type VenueCredentials, VenueUnavailableError } from "../../venues/venue.ts";
import type { Actor, AgentService } from "../agents/service.ts";
import type { CredentialSource } from "./intent-service.ts";
import type { SubmitSignedBody } from "./model.ts";
import type { OrderRepository, OrderRow } from "./order-repository.ts";
import { toOrderModel } from "./order-view.ts";
import type { VenueSubmission } from "./venue-submission.ts";

const SIGNATURE_RE = /^0x[0-9a-fA-F]{130}$/;

export class OrderService {
  constructor(
    private readonly deps: {
      agents: AgentService;
      venue: Venue;
      repo: OrderRepository;
      submission: VenueSubmission;
      credentials: CredentialSource;
      logger: Logger;
      venueTimeoutMs: number;
    },
  ) {}

  /** An order the caller may see: 404 for unknown ids and other organizations, 403 for another agent's scoped key. */
  async visible(caller: Caller, id: string): Promise<OrderRow> {
    const row = await this.deps.repo.get(id);
    if (!row || row.orgId !== caller.orgId) throw new NotFoundError(`order ${id}`);
    if (caller.agentId && row.agentId !== caller.agentId) throw new ForbiddenError("this API key is scoped to another agent");
    return row;
  }

  async get(caller: Caller, id: string) {
    return toOrderModel(await this.visible(caller, id));
  }

  async list(caller: Caller, q: { agent_id?: string; status?: string; limit?: number; cursor?: string }) {
    if (caller.agentId && q.agent_id && q.agent_id !== caller.agentId) throw new ForbiddenError("this API key is scoped to another agent");
    const page = await this.deps.repo.list({
      orgId: caller.orgId,
      agentId: caller.agentId ?? q.agent_id,
      status: q.status as OrderStatus | undefined,
      limit: q.limit ?? 50,
      cursor: q.cursor,
    });
    return { data: page.data.map(toOrderModel), next_cursor: page.next_cursor };
  }

  /** Verifies the caller's signature over the exact approved order and forwards it to the venue. */
  async submitSigned(caller: Caller, body: SubmitSignedBody) {
    const { repo, agents } = this.deps;
    const row = await this.visible(caller, body.order_id);
    if (row.mode !== "payload" || !row.typedData || !row.orderHash) throw new InvalidStateError("only payload-mode orders take a signature", { order_status: row.status });
    if (row.status !== "awaiting_signature") throw new InvalidStateError(`the order is ${row.status}, not awaiting a signature`, { order_status: row.status });
    const actor = await agents.actorFor(caller, row.agentId);
    if (row.signatureDeadline && Date.now() > row.signatureDeadline.getTime()) {
      await this.expire(actor, row.id);
      throw new OrderExpiredError(row.id);
    }
    const message = row.typedData.message;
    if (!SIGNATURE_RE.test(body.signature)) throw new InvalidSignatureError("the signature must be 0x followed by 130 hex digits (65 bytes)");
    if (message.signatureType !== 3) {
      const check = verifyOrderSignature({ digest: row.orderHash, signature: body.signature, expectedSigner: message.signer });
      if (!check.ok) throw new InvalidSignatureError(check.reason);
    }
    const start = await actor.beginSubmission(row.id, async () => {
      await repo.transition(row.id, ["awaiting_signature"], "expired", "signature deadline passed");
    });
    if (!start.ok) {
      if (start.reason === "expired") throw new OrderExpiredError(row.id);
      if (start.reason === "halted") throw new InvalidStateError("the agent's breaker is tripped; no order is forwarded until it is resumed", { order_status: row.status });
      const now = await repo.get(row.id);
      throw new InvalidStateError(`the order is ${now?.status ?? start.status ?? "not awaiting a signature"}`, { order_status: now?.status ?? start.status });
    }
    // The database says `submitting` before the venue hears of the order.
    const moved = await repo.transition(row.id, ["awaiting_signature"], "submitting", "signature verified");
    if (!moved) {
      await start.finish({ kind: "not_sent" });
      const now = await repo.get(row.id);
      await actor.transition(row.id, { status: (now?.status ?? "expired") as OrderStatus });
      if (now?.status === "expired") throw new OrderExpiredError(row.id);
      throw new InvalidStateError(`the order is ${now?.status}`, { order_status: now?.status });
    }
    const settled = await this.deps.submission.send(actor, { id: row.id, notionalUnits: row.notionalUnits }, start.finish, () =>
      this.deps.venue.postSignedOrder(
        {
          order: message,
          signature: body.signature as `0x${string}`,
          order_type: row.orderType,
          expiration: row.expiration,
          owner: body.venue_auth?.api_key,
          venue_auth: body.venue_auth,
        },
        { signal: AbortSignal.timeout(this.deps.venueTimeoutMs) },
      ),
      (venueOrderId) =>
        this.deps.credentials.withAgentCredentialsOrNone(row.agentId, (credentials) =>
          this.deps.venue.cancelOrder({ venue_order_id: venueOrderId, credentials }, { signal: AbortSignal.timeout(this.deps.venueTimeoutMs) }),
        ),
    );
    return { order_id: settled.id, status: settled.status, venue_order_id: settled.venueOrderId, order: toOrderModel(settled) };
  }

  /** Cancels one order: locally while it awaits a signature, at the venue once it is open. */
  async cancel(caller: Caller, id: string) {
    const { repo, agents, venue } = this.deps;
    const row = await this.visible(caller, id);
    const actor = await agents.actorFor(caller, row.agentId);
    if (row.status === "awaiting_signature") {
      if (!(await actor.transitionIf(row.id, ["awaiting_signature"], { status: "cancelled" }))) {
        const now = await repo.get(row.id);
        throw new InvalidStateError(`the order is ${now?.status}`, { order_status: now?.status });
      }
      const done = await repo.transition(row.id, ["awaiting_signature"], "cancelled", "cancelled by the client");
      return toOrderModel(done ?? (await repo.get(row.id))!);
    }
    // An order left `unknown` by a time-out has no venue id yet: the venue's id is its order hash.
    const venueOrderId = row.venueOrderId ?? row.orderHash;
    if ((row.status === "open" || row.status === "unknown") && venueOrderId) {
      const cancel = (credentials?: VenueCredentials) =>
        venue.cancelOrder({ venue_order_id: venueOrderId, credentials }, { signal: AbortSignal.timeout(this.deps.venueTimeoutMs) });
      let result;
      try {
        result = await this.deps.credentials.withAgentCredentialsOrNone(row.agentId, cancel);
      } catch (error) {
        throw new VenueUnavailableProblem("the venue could not be reached to cancel the order; nothing was changed, try again");
      }
      if (!result.ok) {
        // A rate limit or a server error of the venue changed nothing: 503 with its Retry-After, safe to retry.
        if (result.status !== undefined && (result.status === 429 || result.status >= 500)) {
          throw new VenueUnavailableProblem(
            "the venue did not take the cancellation now; nothing was changed, try again",
            Math.max(1, Math.ceil((result.retryAfterMs ?? 2000) / 1000)),
          );
        }
        throw new VenueRejectedError(result.error.slice(0, 500), { order_id: row.id, order_status: row.status });
      }
      // A venue confirms an order that already filled as "done" too: read what it holds, so a
      // fill is recorded as a fill (and keeps counting against the limits), not as a cancellation.
      const state = await this.readVenueOrder(row.agentId, venueOrderId);
      const filledUnits = state ? filledUnitsOf(state.filled_usdc) : undefined;
      if (state?.status === "matched") {
        const units = filledUnits || row.notionalUnits;
        const filled = await repo.transition(row.id, ["open", "unknown"], "filled", "matched at the venue before the cancellation", { filledUnits: units });
        await this.mirror(actor, filled ?? (await repo.get(row.id))!);
        throw new InvalidStateError("the order filled at the venue before it could be cancelled", { order_status: "filled" });
      }
      const patch = filledUnits !== undefined ? { filledUnits } : {};
      const done = (await repo.transition(row.id, ["open", "unknown"], "cancelled", "cancelled by the client", patch)) ?? (await repo.get(row.id))!;
      // Whoever moved the row (this cancel, or a kill that got there first), the actor follows the database.
      await this.mirror(actor, done);
      return toOrderModel(done);
    }
    throw new InvalidStateError(`an order that is ${row.status} cannot be cancelled`, { order_status: row.status });
  }

  /** The venue's state of an order, or null when it cannot be read (best effort). */
  private async readVenueOrder(agentId: string, venueOrderId: string) {
    const read = (credentials?: VenueCredentials) =>
      this.deps.venue.getOrder({ venue_order_id: venueOrderId, credentials }, { signal: AbortSignal.timeout(this.deps.venueTimeoutMs) });
    try {
      return await this.deps.credentials.withAgentCredentialsOrNone(agentId, read);
    } catch {
      return null;
    }
  }

  /** Makes the actor hold what the database row says. */
  private async mirror(actor: Actor, row: OrderRow): Promise<void> {
    await actor.transition(row.id, { status: row.status, venueOrderId: row.venueOrderId, filledUnits: row.filledUnits });
  }

  /** Expires one unsigned order, in the actor first (so a submission in progress wins) and then in the database. */
  private async expire(actor: Actor, id: string): Promise<void> {
    if (await actor.transitionIf(id, ["awaiting_signature"], { status: "expired" })) {
      await this.deps.repo.transition(id, ["awaiting_signature"], "expired", "signature deadline passed");
    }
  }

  /** Expires unsigned orders past their deadline, releasing their reservations. */
  async expireDue(now = new Date()): Promise<number> {
    const due = await this.deps.repo.dueForExpiry(now);
    let n = 0;
    for (const { id, agentId } of due) {
      // Through the agent's actor (activating it if need be), so a snapshot being loaded cannot
      // keep a reservation the database has released; a submission in progress wins.
      const actor = await this.deps.agents.registry.get(agentId);
      if (actor && !(await actor.transitionIf(id, ["awaiting_signature"], { status: "expired" }))) continue;
      if (await this.deps.repo.transition(id, ["awaiting_signature"], "expired", "signature deadline passed")) n++;
    }
    return n;
  }

  /**
   * Settles `submitting` and `unknown` orders against the venue: an order the
   * venue knows takes the venue's status; one it does not know never reached
   * it and is rejected (its reservation released). Nothing is ever re-posted.
   * Orders whose venue call is still in flight in this process are left alone.
   */
  async reconcile(): Promise<{ settled: number; pending: number }> {
    const { repo, venue, agents, logger } = this.deps;
    const rows = await repo.unsettled();
    let settled = 0;
    let pending = 0;
    for (const row of rows) {
      const live = await agents.registry.get(row.agentId);
      if (live && row.status === "submitting" && live.isInflight(row.id)) {
        pending++;
        continue;
      }
      const venueOrderId = row.venueOrderId ?? row.orderHash;
      if (!venueOrderId) continue;
      let state;
      try {
        const read = (credentials?: VenueCredentials) =>
          venue.getOrder({ venue_order_id: venueOrderId, credentials }, { signal: AbortSignal.timeout(this.deps.venueTimeoutMs) });
        state = await this.deps.credentials.withAgentCredentialsOrNone(row.agentId, read);
      } catch (error) {
        if (!(error instanceof VenueUnavailableError)) {
          // The venue answered and refused this one read (no credentials to read it with, say):
          // it stays unsettled, and the orders behind it are still reconciled.
          pending++;
          logger.warn("reconciliation: the venue refused to read an order", { order_id: row.id, error: (error as Error)?.message });
          continue;
        }
        // The venue is not answering: the rest of this pass would only wait for time-outs too.
        pending += rows.length - settled - pending;
        logger.warn("reconciliation: venue unreachable, pass ended", { order_id: row.id, error });
        break;
      }
      const from: OrderStatus[] = ["submitting", "unknown"];
      const to: OrderStatus = state ? orderStatusFor(state.status) : "rejected";
      const filledUnits = state ? filledUnitsOf(state.filled_usdc) : 0n;
      const reason = state ? `reconciled with the venue (${state.status})` : "reconciled: the venue has no such order";
      const done = await repo.transition(row.id, from, to, reason, state ? { venueOrderId: state.venue_order_id, filledUnits } : {});
      if (done) {
        settled++;
        if (live) await live.transition(row.id, { status: to, venueOrderId: done.venueOrderId, filledUnits: done.filledUnits });
      }
    }
    return { settled, pending };
  }
}
