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

type Ctx = { request: Request; set: { status?: number | string }; route?: string; responseValue?: unknown };

export function accessLog(deps: { logger: Logger; metrics: ServiceMetrics }) {
  const { logger, metrics } = deps;
  const record = (ctx: Ctx, status: number) => {
    const { request } = ctx;
    const meta = requestMeta(request);
    if (!meta || meta.recorded) return;
    meta.recorded = true;
    const seconds = (performance.now() - meta.startedAt) / 1000;
    const route = meta.unmatched || !ctx.route ? "unmatched" : ctx.route;
    metrics.httpRequestsTotal.inc({ method: request.method, route, status });
    metrics.httpRequestDurationSeconds.observe({ method: request.method, route }, seconds);
    if (logger.isEnabled("info")) {
      logger.info("request", { request_id: meta.id, method: request.method, path: route, status, ms: Math.round(seconds * 1e4) / 10 });
    }
  };
  const statusOf = (ctx: Ctx) =>
    ctx.responseValue instanceof Response ? ctx.responseValue.status : typeof ctx.set.status === "number" ? ctx.set.status : 200;
  return new Elysia({ name: "access-log" })
    .onRequest((ctx) => {
      const meta = requestMeta(ctx.request);
      if (meta) meta.answered = (status) => record(ctx as Ctx, status);
    })
    .mapResponse({ as: "global" }, (ctx) => {
      record(ctx as Ctx, statusOf(ctx as Ctx));
    })
    .onAfterResponse({ as: "global" }, (ctx) => {
      record(ctx as Ctx, statusOf(ctx as Ctx));
    });
}
