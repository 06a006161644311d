/**
 * Maps every error to RFC 9457 problem details: our ProblemErrors as they are,
 * Elysia's validation and parse errors as 400 invalid_request, unknown routes
 * as 404, and anything unexpected as a plain 500 that is logged with the
 * request id and tells the client nothing internal.
 */
import { Elysia } from "elysia";
import { InternalError, InvalidRequestError, NotFoundError, PayloadTooLargeError } from "../errors/errors.ts";
import { ProblemError } from "../errors/problem-error.ts";
import { AgentBusyError } from "../errors/agent-busy.ts";
import type { Logger } from "../observability/logger.ts";
import type { AccessRecorder } from "./access-log.ts";
import { problemResponse } from "./problem-response.ts";
import { requestMeta } from "./request-meta.ts";

type ValueErrorLike = { path: string; message: string; summary?: string; schema?: { anyOf?: { const?: unknown }[] } };

/**
 * The message of one validation error. TypeBox's own message never repeats the
 * submitted value (Elysia's summary does: "...but found: <value>"), so a secret
 * sent with the wrong type can never come back in an error body.
 */
function safeMessage(e: ValueErrorLike): string {
  const options = e.schema?.anyOf;
  if (options?.length && options.every((o) => o && "const" in o)) {
    return `must be one of: ${options.map((o) => JSON.stringify(o.const)).join(", ")}`;
  }
  return e.message;
}

/**
 * Elysia reports a query value that fails its bounds while being coerced to a
 * number as a "property" error with an empty path and no parameter name; find
 * the query parameter that holds the offending value.
 */
function coercedQueryPath(url: string | undefined, value: unknown): string {
  if (!url) return "/query";
  try {
    for (const [name, raw] of new URL(url).searchParams) {
      if (raw === String(value) || (raw.trim() !== "" && Number(raw) === value)) return `/query/${name}`;
    }
  } catch {
    // not a parseable URL: fall through
  }
  return "/query";
}

/** PostgreSQL: 22P05 untranslatable character (NUL in jsonb), 22021 invalid byte sequence (NUL in text). */
const UNSTORABLE_TEXT = new Set(["22P05", "22021"]);

/** The SQLSTATE of a database error: `code` from postgres-js and PGlite, `errno` from Bun's SQL client. */
function pgCode(error: unknown): string | undefined {
  const sqlState = (v: unknown) => (typeof v === "string" && /^[0-9A-Z]{5}$/.test(v) ? v : undefined);
  for (let e = error as { code?: unknown; errno?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    const found = sqlState(e.code) ?? sqlState(e.errno);
    if (found) return found;
  }
  return undefined;
}

export function toProblemError(code: string | number, error: unknown, url?: string): ProblemError | null {
  if (error instanceof ProblemError) return error;
  // Another instance holds the agent and did not hand it over in time, or this one lost it mid-request
  // (docs/decisions.md "One actor per agent across instances"): nothing more was done here, retry.
  // (By name: HTTP does not import the actors; the errors are actors/lease-port.ts's.)
  const name = (error as { name?: unknown } | null)?.name;
  if (name === "LeaseUnavailableError") return new AgentBusyError(1);
  if (name === "LeaseLostError") {
    // Midway: what ran before the loss (an order written, maybe sent) stays; nothing more is done here.
    return new AgentBusyError(
      1,
      "this instance lost the agent while the request ran: what it had done before stays, nothing more was done; retry with the same Idempotency-Key to learn the outcome",
    );
  }
  switch (code) {
    case "VALIDATION": {
      const v = error as { type?: string; all?: ValueErrorLike[]; value?: unknown };
      const where = v.type === "property" ? coercedQueryPath(url, v.value) : v.type && v.type !== "body" ? `/${v.type}` : "";
      const seen = new Set<string>();
      const errors = (v.all ?? [])
        .map((e) => ({ path: `${where}${e.path || ""}` || "/", message: safeMessage(e) }))
        .filter((e) => {
          const k = `${e.path} ${e.message}`;
          if (seen.has(k)) return false;
          seen.add(k);
          return true;
        });
      const detail = errors.length ? `${errors[0].path}: ${errors[0].message}` : "the request is not valid";
      return new InvalidRequestError(detail, errors);
    }
    case "PARSE":
      // A parse hook that refused the request (authentication runs there) is wrapped by Elysia.
      if ((error as { cause?: unknown })?.cause instanceof ProblemError) return (error as { cause: ProblemError }).cause;
      return new InvalidRequestError("the request body is not valid JSON", [{ path: "/", message: "malformed JSON" }]);
    case "NOT_FOUND":
      return new NotFoundError("route");
    case "INVALID_COOKIE_SIGNATURE":
      return new InvalidRequestError("invalid cookie");
    default:
      if (error && typeof error === "object" && (error as { status?: number }).status === 413) return new PayloadTooLargeError(0);
      // Backstop: text the database cannot store (NUL, invalid encoding) is the client's input.
      if (UNSTORABLE_TEXT.has(pgCode(error) ?? "")) return new InvalidRequestError("the request holds text that cannot be stored", []);
      return null;
  }
}

/** `access`: records the problem's status in the access log and the HTTP metrics (src/http/access-log.ts). */
export function errorHandler(logger: Logger, access?: AccessRecorder) {
  return new Elysia({ name: "error-handler" }).onError({ as: "global" }, async ({ code, error, request, set, route }) => {
    const meta = requestMeta(request);
    if (code === "NOT_FOUND" && meta) meta.unmatched = true;
    if (meta && (error as { name?: unknown } | null)?.name === "LeaseLostError") meta.leaseLost = true;
    // A body that was not JSON fails validation as a marker object: answer what really happened.
    let problem = code === "VALIDATION" && meta?.invalidBody ? meta.invalidBody : toProblemError(code, error, request.url);
    if (!problem) {
      logger.error("unhandled error", {
        request_id: meta?.id,
        method: request.method,
        path: new URL(request.url).pathname,
        error: error instanceof Error ? { name: error.name, message: error.message } : String(error),
      });
      problem = new InternalError(meta?.id);
    }
    set.status = problem.status;
    access?.record(request, route, problem.status);
    const response = problemResponse(problem, meta?.id);
    // A claimed Idempotency-Key keeps (or releases) the problem like any other answer.
    return meta?.finish ? meta.finish(response) : response;
  });
}
