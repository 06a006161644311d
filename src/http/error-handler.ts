/**
 * Maps every error to RFC 9457 problem details: our ProblemErrors as they are,
 * Elysia's validation and parse errors as 400 invalid_request, unknown routes
 * as 404, and anything unexpected as a plain 500 that is logged with the
 * request id and tells the client nothing internal.
 */
import { Elysia } from "elysia";
import { InternalError, InvalidRequestError, NotFoundError, PayloadTooLargeError } from "../errors/errors.ts";
import { ProblemError } from "../errors/problem-error.ts";
import type { Logger } from "../observability/logger.ts";
import { problemResponse } from "./problem-response.ts";
import { requestMeta } from "./request-meta.ts";

type ValueErrorLike = { path: string; message: string; summary?: string };

export function toProblemError(code: string | number, error: unknown): ProblemError | null {
  if (error instanceof ProblemError) return error;
  switch (code) {
    case "VALIDATION": {
      const v = error as { type?: string; all?: ValueErrorLike[] };
      const where = v.type && v.type !== "body" ? `/${v.type}` : "";
      const seen = new Set<string>();
      const errors = (v.all ?? [])
        .map((e) => ({ path: `${where}${e.path || ""}` || "/", message: e.summary || e.message }))
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
      return new InvalidRequestError("the request body is not valid JSON", [{ path: "/", message: "malformed JSON" }]);
    case "NOT_FOUND":
      return new NotFoundError("route");
    case "INVALID_COOKIE_SIGNATURE":
      return new InvalidRequestError("invalid cookie");
    default:
      if (error && typeof error === "object" && (error as { status?: number }).status === 413) return new PayloadTooLargeError(0);
      return null;
  }
}

export function errorHandler(logger: Logger) {
  return new Elysia({ name: "error-handler" }).onError({ as: "global" }, ({ code, error, request }) => {
    const meta = requestMeta(request);
    const problem = toProblemError(code, error);
    if (problem) return problemResponse(problem, meta?.id);
    logger.error("unhandled error", {
      request_id: meta?.id,
      method: request.method,
      path: new URL(request.url).pathname,
      error: error instanceof Error ? { name: error.name, message: error.message } : String(error),
    });
    return problemResponse(new InternalError(meta?.id), meta?.id);
  });
}
