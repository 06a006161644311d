/**
 * The access log and the HTTP metrics: one JSON line per request (method, route, status, duration,
 * request id) and the request counter and latency histogram. Labels are the matched route's pattern
 * (`/v1/agents/:id/kill`), so ids never grow the label set; paths that match no route share the label
 * "unmatched". Recorded once per request, as soon as the answer is known: in mapResponse for routes'
 * answers (Elysia runs it on every answer a route gives, early answers of hooks and problems included),
 * and by the error handler for problems, which it is given the recorder for (an error thrown before
 * any route matched, a 404 or an onRequest 413, reaches only the error handler).
 */
import { Elysia } from "elysia";
import type { Logger } from "../observability/logger.ts";
import type { ServiceMetrics } from "../observability/metrics.ts";
import { requestMeta } from "./request-meta.ts";

/** Records a request's answer once (later calls for the same request do nothing). */
export interface AccessRecorder {
  record(request: Request, route: string | undefined, status: number): void;
}

export function accessRecorder(deps: { logger: Logger; metrics: ServiceMetrics }): AccessRecorder {
  const { logger, metrics } = deps;
  return {
    record(request, matched, status) {
      const meta = requestMeta(request);
      if (!meta || meta.recorded) return;
      meta.recorded = true;
      const seconds = (performance.now() - meta.startedAt) / 1000;
      const route = meta.unmatched || !matched ? "unmatched" : matched;
      const method = request.method;
      metrics.requestAnswered(method, route, status, seconds);
      if (logger.isEnabled("info")) {
        logger.info("request", { request_id: meta.id, method, path: route, status, ms: Math.round(seconds * 1e4) / 10 });
      }
    },
  };
}

const statusOf = (responseValue: unknown, set: { status?: number | string }) =>
  responseValue instanceof Response ? responseValue.status : typeof set.status === "number" ? set.status : 200;

/**
 * The hook names the context fields it reads (never the whole context): Elysia compiles a route's
 * handler from what its hooks use, and a hook that takes the whole context makes every request
 * build a header object, parse cookies and define `server`.
 */
export function accessLog(recorder: AccessRecorder) {
  return new Elysia({ name: "access-log" }).mapResponse({ as: "global" }, ({ request, route, set, responseValue }) => {
    recorder.record(request, route, statusOf(responseValue, set));
  });
}
