/**
 * RFC 9457 problem details as typed errors. Every problem the service answers becomes a BrokerError
 * (or the subclass for its `code`) that keeps every member of the body in `problem`.
 */
import type { CheckResult, RiskFailure } from "./types.js";

export type ProblemCode =
  | "invalid_request"
  | "forbidden_scope"
  | "invalid_scope"
  | "invalid_signature"
  | "invalid_credentials"
  | "unauthenticated"
  | "payment_required"
  | "forbidden"
  | "not_found"
  | "idempotency_conflict"
  | "invalid_state"
  | "agent_halted"
  | "order_expired"
  | "payload_too_large"
  | "unsupported_media_type"
  | "risk_rejected"
  | "rate_limited"
  | "venue_rejected"
  | "venue_timeout"
  | "unavailable"
  | "internal_error";

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail?: string;
  code: ProblemCode | (string & {});
  [member: string]: unknown;
}

export interface RequestInfo {
  method: string;
  path: string;
  idempotencyKey?: string;
  attempts: number;
}

/** A problem-details answer of the service. */
export class BrokerError extends Error {
  readonly status: number;
  readonly code: ProblemCode | (string & {});
  readonly type: string;
  readonly title: string;
  readonly detail: string | undefined;
  /** The whole problem body, with every extra member (errors, scopes, order_status, venue_error, ...). */
  readonly problem: ProblemDetails;
  readonly request: RequestInfo;

  constructor(problem: ProblemDetails, request: RequestInfo) {
    super(`${problem.status} ${problem.code}: ${problem.detail ?? problem.title}`);
    this.name = new.target.name;
    this.status = problem.status;
    this.code = problem.code;
    this.type = problem.type;
    this.title = problem.title;
    this.detail = problem.detail;
    this.problem = problem;
    this.request = request;
  }
}

/** 400 invalid_request: `errors` names each invalid path. */
export class InvalidRequestError extends BrokerError {
  get errors(): { path: string; message: string }[] {
    return (this.problem.errors as { path: string; message: string }[] | undefined) ?? [];
  }
}
/** 400 forbidden_scope or invalid_scope: `scopes` lists the refused values. */
export class ScopeError extends BrokerError {
  get scopes(): string[] {
    return (this.problem.scopes as string[] | undefined) ?? [];
  }
}
export class InvalidSignatureError extends BrokerError {}
export class InvalidCredentialsError extends BrokerError {}
export class UnauthenticatedError extends BrokerError {}
/** 402: x402 payment required (configure `x402Fetch` from the `/x402` entry to pay). */
export class PaymentRequiredError extends BrokerError {}
export class ForbiddenError extends BrokerError {}
export class NotFoundError extends BrokerError {}
export class IdempotencyConflictError extends BrokerError {}
/** 409 invalid_state (`order_status` says what the order is) or agent_halted. */
export class ConflictError extends BrokerError {}
export class OrderExpiredError extends BrokerError {}
/** 422 risk_rejected: every failing check with its limit and actual value, and all eight checks. */
export class RiskRejectedError extends BrokerError {
  get decisionId(): string {
    return this.problem.decision_id as string;
  }
  get failures(): RiskFailure[] {
    return (this.problem.failures as RiskFailure[] | undefined) ?? [];
  }
  get checks(): CheckResult[] {
    return (this.problem.checks as CheckResult[] | undefined) ?? [];
  }
}
export class RateLimitedError extends BrokerError {
  /** Seconds to wait, from Retry-After. */
  retryAfterS: number | null = null;
}
/** 502 venue_rejected: `venueError` holds the venue's message. */
export class VenueRejectedError extends BrokerError {
  get venueError(): string | undefined {
    return this.problem.venue_error as string | undefined;
  }
}
/** 504 venue_timeout: the order is kept in status unknown and reconciled by the service. */
export class VenueTimeoutError extends BrokerError {}
export class ServiceUnavailableError extends BrokerError {}
export class InternalServerError extends BrokerError {}

/** The request never got an answer (connection refused or reset, timeout) after every retry. */
export class NetworkError extends Error {
  readonly request: RequestInfo;
  constructor(message: string, request: RequestInfo, cause: unknown) {
    super(message, { cause });
    this.name = "NetworkError";
    this.request = request;
  }
}

const BY_CODE: Record<string, typeof BrokerError> = {
  invalid_request: InvalidRequestError,
  forbidden_scope: ScopeError,
  invalid_scope: ScopeError,
  invalid_signature: InvalidSignatureError,
  invalid_credentials: InvalidCredentialsError,
  unauthenticated: UnauthenticatedError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  idempotency_conflict: IdempotencyConflictError,
  invalid_state: ConflictError,
  agent_halted: ConflictError,
  order_expired: OrderExpiredError,
  risk_rejected: RiskRejectedError,
  rate_limited: RateLimitedError,
  venue_rejected: VenueRejectedError,
  venue_timeout: VenueTimeoutError,
  unavailable: ServiceUnavailableError,
  internal_error: InternalServerError,
};

/** The typed error for an error answer; a body that is not problem details is described from the status. */
export function errorFromResponse(status: number, body: unknown, headers: Headers, request: RequestInfo): BrokerError {
  const problem: ProblemDetails =
    body && typeof body === "object" && typeof (body as ProblemDetails).code === "string"
      ? { ...(body as ProblemDetails), status: (body as ProblemDetails).status ?? status }
      : {
          type: "about:blank",
          title: `HTTP ${status}`,
          status,
          code: status === 402 ? "payment_required" : status === 503 ? "unavailable" : status === 429 ? "rate_limited" : `http_${status}`,
          detail: typeof body === "string" && body ? body.slice(0, 500) : undefined,
        };
  const Cls = status === 402 ? PaymentRequiredError : (BY_CODE[problem.code] ?? BrokerError);
  const err = new Cls(problem, request);
  if (err instanceof RateLimitedError) err.retryAfterS = retryAfterSeconds(headers);
  return err;
}

/** Retry-After as seconds (delta-seconds or an HTTP date); null when absent. */
export function retryAfterSeconds(headers: Headers): number | null {
  const v = headers.get("retry-after");
  if (!v) return null;
  const n = Number(v);
  if (Number.isFinite(n)) return Math.max(0, n);
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, (at - Date.now()) / 1000) : null;
}
