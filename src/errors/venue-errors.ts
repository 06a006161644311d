import { ProblemError } from "./problem-error.ts";

/** The venue could not be reached for market data or a confirmation; nothing was created. */
export class VenueUnreachableError extends ProblemError {
  constructor(cause?: unknown) {
    super(503, "venue_unavailable", "Venue unavailable", "the venue did not answer; nothing was created, try again", {
      headers: { "retry-after": "1" },
      cause,
    });
  }
}
