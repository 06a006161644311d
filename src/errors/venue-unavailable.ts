import { ProblemError } from "./problem-error.ts";

/**
 * 503 `venue_unavailable`: the venue could not be reached (connection failure, gateway error or
 * no answer in time) for a call the request needed, and nothing was changed. Safe to retry; the
 * answer carries `Retry-After`. Not kept for Idempotency-Key replay (5xx answers never are).
 */
export class VenueUnavailableProblem extends ProblemError {
  constructor(detail = "the venue could not be reached; nothing was changed, try again later", retryAfterS = 2) {
    super(503, "venue_unavailable", "Venue unavailable", detail, { headers: { "retry-after": String(retryAfterS) } });
  }
}
