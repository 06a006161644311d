import { ProblemError } from "./problem-error.ts";

import type { FieldError } from "../domain/field-error.ts";

export type { FieldError };

export class InvalidRequestError extends ProblemError {
  constructor(detail: string, errors: FieldError[] = [], cause?: unknown) {
    super(400, "invalid_request", "Invalid request", detail, { extra: { errors }, cause });
  }
}
export class ForbiddenScopeError extends ProblemError {
  constructor(scopes: string[]) {
    super(400, "forbidden_scope", "Forbidden credential scope", `scopes not allowed: ${scopes.join(", ")}`, {
      extra: { scopes },
    });
  }
}
export class InvalidScopeError extends ProblemError {
  constructor(detail: string, scopes: string[] = []) {
    super(400, "invalid_scope", "Invalid credential scope", detail, { extra: { scopes } });
  }
}
export class InvalidSignatureError extends ProblemError {
  constructor(detail: string) {
    super(400, "invalid_signature", "Invalid signature", detail);
  }
}
export class InvalidCredentialsError extends ProblemError {
  constructor(detail = "the venue did not accept the credentials") {
    super(400, "invalid_credentials", "Invalid credentials", detail);
  }
}
export class UnauthenticatedError extends ProblemError {
  constructor(detail = "a valid X-API-Key header is required") {
    super(401, "unauthenticated", "Unauthenticated", detail);
  }
}
export class ForbiddenError extends ProblemError {
  constructor(detail: string) {
    super(403, "forbidden", "Forbidden", detail);
  }
}
export class NotFoundError extends ProblemError {
  constructor(what: string) {
    super(404, "not_found", "Not found", `${what} not found`);
  }
}
export class IdempotencyConflictError extends ProblemError {
  constructor() {
    super(409, "idempotency_conflict", "Idempotency conflict", "this Idempotency-Key was used with a different request");
  }
}
export class InvalidStateError extends ProblemError {
  constructor(detail: string, extra: Record<string, unknown> = {}) {
    super(409, "invalid_state", "Invalid state", detail, { extra });
  }
}
export class AgentHaltedError extends ProblemError {
  constructor(agentId: string, detail = `agent ${agentId} is halted by its kill switch; resume it first`) {
    super(409, "agent_halted", "Agent halted", detail);
  }
}
export class OrderExpiredError extends ProblemError {
  constructor(orderId: string, detail = `order ${orderId} passed its signature deadline`) {
    super(410, "order_expired", "Order expired", detail);
  }
}
export class PayloadTooLargeError extends ProblemError {
  constructor(limit: number) {
    super(413, "payload_too_large", "Payload too large", `request body exceeds ${limit} bytes`);
  }
}
export class UnsupportedMediaTypeError extends ProblemError {
  constructor() {
    super(415, "unsupported_media_type", "Unsupported media type", "request bodies must be application/json");
  }
}
export class RiskRejectedError extends ProblemError {
  constructor(extra: { decision_id: string; failures: unknown[]; checks: unknown[] }) {
    super(422, "risk_rejected", "Risk check failed", `the risk engine rejected the intent (${extra.failures.length} failing check(s))`, {
      extra,
    });
  }
}
export class RateLimitedError extends ProblemError {
  constructor(retryAfterS: number) {
    super(429, "rate_limited", "Too many requests", `retry after ${retryAfterS} s`, {
      headers: { "retry-after": String(retryAfterS) },
    });
  }
}
export class VenueRejectedError extends ProblemError {
  constructor(venueError: string, extra: Record<string, unknown> = {}) {
    super(502, "venue_rejected", "Venue rejected the order", "the venue refused the request", {
      extra: { venue_error: venueError, ...extra },
    });
  }
}
export class VenueTimeoutError extends ProblemError {
  constructor(extra: Record<string, unknown> = {}) {
    super(504, "venue_timeout", "Venue timeout", "the venue did not answer in time; the order is kept as unknown and reconciled", {
      extra,
    });
  }
}
export class ServiceUnavailableError extends ProblemError {
  constructor(detail: string) {
    super(503, "unavailable", "Service unavailable", detail);
  }
}
export class InternalError extends ProblemError {
  constructor(requestId?: string) {
    super(500, "internal_error", "Internal server error", "an unexpected error occurred", {
      extra: requestId ? { request_id: requestId } : {},
    });
  }
}
