import type { ProblemError } from "../errors/problem-error.ts";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export function problemResponse(error: ProblemError, requestId?: string): Response {
  const headers = new Headers({ "content-type": PROBLEM_CONTENT_TYPE, ...error.headers });
  if (requestId) headers.set("x-request-id", requestId);
  return new Response(JSON.stringify(error.toProblem()), { status: error.status, headers });
}
