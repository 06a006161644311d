/**
 * The access log and the HTTP metrics: one JSON line per request (method, route, status, duration,
 * request id) and the request counter and latency histogram. Labels are the matched route's pattern
 * (`/v1/agents/:id/kill`), so ids never grow the label set; paths that match no route share the label
 * "unmatched". Recorded once per request, as soon as the answer is known: in mapResponse for routes'
 * answers, by the error handler for problems (`meta.answered`), and after the response as a backstop.
 */
import { Elysia } from "elysia";
import type { Logger } from "../observability/logger.ts";
import type { ServiceMetrics } from "../observability/metrics.ts";
import { requestMeta } from "./request-meta.ts";

/**
 * The hooks name the context fields they read (never the whole context): Elysia compiles a route's
 * handler from what its hooks use, and a hook that takes the whole context makes every request
 * build a header object, parse cookies and define `server`.
 */
export function accessLog(deps: { logger: Logger; metrics: ServiceMetrics }) {
  const { logger, metrics } = deps;
  const record = (request: Request, matched: string | undefined, status: number) => {
    const meta = requestMeta(request);
    if (!meta || meta.recorded) return;
    meta.recorded = true;
    const seconds = (performance.now() - meta.startedAt) / 1000;
    const route = meta.unmatched || !matched ? "unmatched" : matched;
    metrics.httpRequestsTotal.inc({ method: request.method, route, status });
    metrics.httpRequestDurationSeconds.observe({ method: request.method, route }, seconds);
    if (logger.isEnabled("info")) {
      logger.info("request", { request_id: meta.id, method: request.method, path: route, status, ms: Math.round(seconds * 1e4) / 10 });
    }
  };
  const statusOf = (responseValue: unknown, set: { status?: number | string }) =>
    responseValue instanceof Response ? responseValue.status : typeof set.status === "number" ? set.status : 200;
  return new Elysia({ name: "access-log" })
    .onRequest(({ request }) => {
      const meta = requestMeta(request);
      if (meta) meta.answered = (status, route) => record(request, route, status);
    })
    .mapResponse({ as: "global" }, ({ request, route, set, responseValue }) => {
      record(request, route, statusOf(responseValue, set));
    })
    .onAfterResponse({ as: "global" }, ({ request, route, set, responseValue }) => {
      record(request, route, statusOf(responseValue, set));
    });
}
