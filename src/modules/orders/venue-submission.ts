/**
 * Sends one order to the venue and records what happened: in the database
 * first, then in the agent's actor. The order row is already `submitting`
 * before this runs, so a crash in between leaves a row that reconciliation
 * settles; nothing here ever posts an order twice.
 */
import type { VenueOutcome } from "../../../actors/agent-actor.ts";
import { InvalidStateError, VenueRejectedError, VenueTimeoutError } from "../../errors/errors.ts";
import { filledUnitsOf, orderStatusFor } from "../../domain/venue-status.ts";
import type { Logger } from "../../observability/logger.ts";
import type { ServiceMetrics } from "../../observability/metrics.ts";
import { type CancelResult, type PostResult, VenueUnavailableError } from "../../venues/venue.ts";
import type { Actor } from "../agents/service.ts";
import type { OrderRepository, OrderRow } from "./order-repository.ts";

export class VenueSubmission {
  constructor(
    private readonly deps: { repo: OrderRepository; metrics: ServiceMetrics; logger: Logger; venueName: string },
  ) {}

  /**
   * Runs `call` and settles the order from its result. Answers the updated row,
   * or throws the problem the client should see (502 venue_rejected, 504 venue_timeout).
   */
  async send(
    actor: Actor,
    order: { id: string; notionalUnits: bigint },
    finish: (outcome: VenueOutcome) => Promise<void>,
    call: () => Promise<PostResult | null>,
    /** Cancels an order the venue accepted after someone else (the kill switch) had already settled it. */
    cancelLate?: (venueOrderId: string) => Promise<CancelResult>,
  ): Promise<OrderRow> {
    const { repo, metrics } = this.deps;
    const op = "post_order";
    if (!(await actor.mayPlace())) {
      // Halted (a kill) after the order was approved or signed: it is never sent.
      await repo.transition(order.id, ["submitting"], "rejected", "the agent was halted before the order was sent");
      await finish({ kind: "rejected" });
      throw new InvalidStateError("the agent's breaker tripped before the order was sent; nothing was placed", { order_id: order.id });
    }
    const timer = metrics.venueCallDurationSeconds.startTimer({ venue: this.deps.venueName, op });
    let result: PostResult | null;
    try {
      result = await call();
    } catch (error) {
      timer();
      metrics.venueErrorsTotal.inc({ venue: this.deps.venueName, op });
      if (!(error instanceof VenueUnavailableError)) this.deps.logger.error("venue call failed", { order_id: order.id, error });
      const row = await repo.transition(order.id, ["submitting"], "unknown", "venue did not answer in time");
      await finish({ kind: "unknown" });
      await actor.recordVenueResult(false);
      throw new VenueTimeoutError({ order_id: order.id, order_status: row?.status ?? "unknown" });
    }
    timer();
    if (result === null) {
      await repo.transition(order.id, ["submitting"], "rejected", "no credentials to place the order with");
      await finish({ kind: "rejected" });
      throw new InvalidStateError("the agent has no venue credentials; submit them again or use payload mode", { order_id: order.id });
    }
    if (!result.ok) {
      metrics.venueErrorsTotal.inc({ venue: this.deps.venueName, op });
      await repo.transition(order.id, ["submitting"], "rejected", `venue refused: ${result.error.slice(0, 200)}`);
      await finish({ kind: "rejected" });
      await actor.recordVenueResult(false);
      throw new VenueRejectedError(result.error.slice(0, 500), { order_id: order.id, order_status: "rejected" });
    }
    let filledUnits = filledUnitsOf(result.filled_usdc);
    const status = orderStatusFor(result.status);
    if (status === "filled" && filledUnits === 0n) filledUnits = order.notionalUnits;
    const reason =
      status === "filled" ? "matched at the venue" : status === "cancelled" ? "not matched (fill-or-kill / fill-and-kill)" : "resting at the venue";
    const row = await repo.transition(order.id, ["submitting"], status, reason, { venueOrderId: result.venue_order_id, filledUnits });
    if (status === "cancelled") {
      await finish({ kind: "accepted", venueOrderId: result.venue_order_id, status: "open", filledUnits });
      await actor.transition(order.id, { status: "cancelled", filledUnits });
    } else {
      await finish({ kind: "accepted", venueOrderId: result.venue_order_id, status, filledUnits });
    }
    await actor.recordVenueResult(true);
    if (!row) {
      // The kill switch gave up on this order before the venue answered: take it off the venue again.
      const late = cancelLate ? await cancelLate(result.venue_order_id).catch(() => ({ ok: false as const, error: "unreachable" })) : null;
      this.deps.logger.warn("order accepted by the venue after it was settled here", {
        order_id: order.id,
        venue_order_id: result.venue_order_id,
        cancelled_again: late?.ok ?? false,
      });
      throw new InvalidStateError("the order was settled (kill switch) while the venue was accepting it; a cancellation was sent", {
        order_id: order.id,
      });
    }
    return row;
  }
}
