/**
 * The service's Prometheus metrics on prom-client (docs/api.md#logs-and-metrics, `GET /metrics`).
 * `route` is always the route template (`/v1/agents/:id/kill`), never the raw path, so the series
 * count stays bounded. `kill_orders_total{outcome}` is `cancelled`, `failed` or `filled`;
 * `risk_decisions_total{outcome}` is `approved` or `rejected`; those series start at zero.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";

export const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

export interface ServiceMetrics {
  registry: Registry;
  httpRequestsTotal: Counter<"method" | "route" | "status">;
  httpRequestDurationSeconds: Histogram<"method" | "route">;
  riskFailuresTotal: Counter<"check" | "code">;
  riskDecisionsTotal: Counter<"outcome">;
  killDurationSeconds: Histogram;
  killOrdersTotal: Counter<"outcome">;
  venueCallDurationSeconds: Histogram<"venue" | "op">;
  venueErrorsTotal: Counter<"venue" | "op">;
  actorsActive: Gauge;
  dbBatchSize: Histogram;
  /** Agent leases this instance holds (src/db/agent-leases.ts). */
  leasesHeld: Gauge;
  /** Leases taken, by `kind`: `free`, `handoff` (released to us on request), `lapsed` (a take-over from an owner that stopped renewing). */
  leaseTakenTotal: Counter<"kind">;
  /** Leases this instance lost (taken over, not renewed in time, a write refused for a stale epoch). */
  leaseLostTotal: Counter;
  /**
   * One answered request: counts it in `http_requests_total` and observes its duration in
   * `http_request_duration_seconds` (the access log's path, once per request).
   */
  requestAnswered(method: string, route: string, status: number, seconds: number): void;
}

/** One label set of the HTTP metrics, with the answers counted since `http_requests_total` was last read. */
interface AnsweredSeries {
  counterLabels: { method: string; route: string; status: number };
  histogramLabels: { method: string; route: string };
  pending: number;
}

/**
 * The HTTP request counter's hot path: prom-client's `inc` builds and hashes a label string on every
 * call, so answers are counted per label set in plain numbers and added to the counter when it is read
 * (prom-client calls `collect` before every read). Series are kept in the order they first answered,
 * so they reach the counter, and its text output, in the same order as when each answer was added at once.
 */
function answeredCounts() {
  const byKey = new Map<string, Map<string, Map<number, AnsweredSeries>>>();
  const inOrder: AnsweredSeries[] = [];
  return {
    series(method: string, route: string, status: number): AnsweredSeries {
      let byRoute = byKey.get(method);
      if (!byRoute) byKey.set(method, (byRoute = new Map()));
      let byStatus = byRoute.get(route);
      if (!byStatus) byRoute.set(route, (byStatus = new Map()));
      let s = byStatus.get(status);
      if (!s) {
        s = { counterLabels: { method, route, status }, histogramLabels: { method, route }, pending: 0 };
        byStatus.set(status, s);
        inOrder.push(s);
      }
      return s;
    },
    flush(counter: Counter<"method" | "route" | "status">) {
      for (const s of inOrder) {
        if (s.pending === 0) continue;
        const n = s.pending;
        s.pending = 0;
        counter.inc(s.counterLabels, n);
      }
    },
  };
}

export function createMetrics(registry: Registry = new Registry()): ServiceMetrics {
  const registers = [registry];
  const answered = answeredCounts();
  const m: ServiceMetrics = {
    registry,
    httpRequestsTotal: new Counter({
      name: "http_requests_total",
      help: "HTTP requests answered, by method, route template and status code.",
      labelNames: ["method", "route", "status"],
      registers,
      collect() {
        answered.flush(this);
      },
    }),
    httpRequestDurationSeconds: new Histogram({
      name: "http_request_duration_seconds",
      help: "HTTP request latency in seconds, by method and route template.",
      labelNames: ["method", "route"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    riskFailuresTotal: new Counter({
      name: "risk_failures_total",
      help: "Failed risk checks, by check and failure code.",
      labelNames: ["check", "code"],
      registers,
    }),
    riskDecisionsTotal: new Counter({
      name: "risk_decisions_total",
      help: "Risk engine decisions, by outcome (approved or rejected).",
      labelNames: ["outcome"],
      registers,
    }),
    killDurationSeconds: new Histogram({
      name: "kill_duration_seconds",
      help: "Kill switch duration in seconds, from request to answer.",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 6, 10],
      registers,
    }),
    killOrdersTotal: new Counter({
      name: "kill_orders_total",
      help: "Orders handled by kill switches, by outcome (cancelled, failed or filled).",
      labelNames: ["outcome"],
      registers,
    }),
    venueCallDurationSeconds: new Histogram({
      name: "venue_call_duration_seconds",
      help: "Venue call latency in seconds, by venue and operation.",
      labelNames: ["venue", "op"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    venueErrorsTotal: new Counter({
      name: "venue_errors_total",
      help: "Venue calls that failed (error answer or timeout), by venue and operation.",
      labelNames: ["venue", "op"],
      registers,
    }),
    actorsActive: new Gauge({ name: "actors_active", help: "Agent actors currently resident in memory.", registers }),
    leasesHeld: new Gauge({ name: "agent_leases_held", help: "Agent leases this instance holds.", registers }),
    leaseTakenTotal: new Counter({
      name: "agent_lease_taken_total",
      help: "Agent leases taken by this instance: free, handoff (handed over on request) or lapsed (taken over from an owner that stopped renewing).",
      labelNames: ["kind"],
      registers,
    }),
    leaseLostTotal: new Counter({ name: "agent_lease_lost_total", help: "Agent leases this instance lost before releasing them.", registers }),
    dbBatchSize: new Histogram({
      name: "db_batch_size",
      help: "Rows written per database batch.",
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
      registers,
    }),
    requestAnswered(method, route, status, seconds) {
      const s = answered.series(method, route, status);
      s.pending++;
      m.httpRequestDurationSeconds.observe(s.histogramLabels, seconds);
    },
  };
  for (const outcome of ["cancelled", "failed", "filled"]) m.killOrdersTotal.inc({ outcome }, 0);
  for (const outcome of ["approved", "rejected"]) m.riskDecisionsTotal.inc({ outcome }, 0);
  for (const kind of ["free", "handoff", "lapsed"]) m.leaseTakenTotal.inc({ kind }, 0);
  return m;
}
