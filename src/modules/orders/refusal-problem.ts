/** The problem a client sees for each refusal of the agent actor (actors/messages.ts). */
import type { Refusal } from "../../../actors/messages.ts";
import { InvalidSignatureError, InvalidStateError, OrderExpiredError, VenueRejectedError, VenueTimeoutError } from "../../errors/errors.ts";
import type { ProblemError } from "../../errors/problem-error.ts";
import { VenueUnavailableProblem } from "../../errors/venue-unavailable.ts";

export function refusalProblem(r: Refusal): ProblemError {
  switch (r.kind) {
    case "invalid_state": {
      const extra: Record<string, unknown> = {};
      if (r.orderId) extra.order_id = r.orderId;
      if (r.status) extra.order_status = r.status;
      return new InvalidStateError(r.detail, extra);
    }
    case "expired":
      return new OrderExpiredError(r.orderId, r.detail);
    case "invalid_signature":
      return new InvalidSignatureError(r.reason);
    case "venue_unavailable":
      return r.retryAfterS === undefined ? new VenueUnavailableProblem(r.detail) : new VenueUnavailableProblem(r.detail, r.retryAfterS);
    case "venue_rejected":
      return new VenueRejectedError(r.error, { order_id: r.orderId, order_status: r.status });
    case "venue_timeout":
      return new VenueTimeoutError({ order_id: r.orderId, order_status: r.status });
  }
}
