import { describe, expect, test } from "bun:test";
import { PROMETHEUS_CONTENT_TYPE, createMetrics } from "../../src/observability/metrics.ts";

const NAMES = [
  "http_requests_total",
  "http_request_duration_seconds",
  "risk_failures_total",
  "risk_decisions_total",
  "kill_duration_seconds",
  "kill_orders_total",
  "venue_call_duration_seconds",
  "venue_errors_total",
  "actors_active",
  "db_batch_size",
];

describe("service metrics (prom-client)", () => {
  test("every metric is exported with its name, type and labels", async () => {
    const m = createMetrics();
    m.httpRequestsTotal.inc({ method: "POST", route: "/v1/agents/:id/kill", status: 200 });
    m.httpRequestsTotal.inc({ method: "GET", route: "/healthz", status: "200" }, 2);
    m.httpRequestDurationSeconds.observe({ method: "POST", route: "/v1/agents/:id/kill" }, 0.012);
    m.riskFailuresTotal.inc({ check: "order_size", code: "order_too_large" });
    m.riskDecisionsTotal.inc({ outcome: "rejected" });
    m.killDurationSeconds.observe(0.8);
    m.killOrdersTotal.inc({ outcome: "cancelled" }, 12);
    m.venueCallDurationSeconds.observe({ venue: "paper", op: "cancel" }, 0.002);
    m.venueErrorsTotal.inc({ venue: "clob", op: "post_order" });
    m.actorsActive.set(7);
    m.dbBatchSize.observe(40);
    const text = await m.registry.metrics();
    const types: Record<string, string> = {
      http_requests_total: "counter",
      http_request_duration_seconds: "histogram",
      risk_failures_total: "counter",
      risk_decisions_total: "counter",
      kill_duration_seconds: "histogram",
      kill_orders_total: "counter",
      venue_call_duration_seconds: "histogram",
      venue_errors_total: "counter",
      actors_active: "gauge",
      db_batch_size: "histogram",
    };
    for (const name of NAMES) expect(text).toContain(`# TYPE ${name} ${types[name]}\n`);
    expect(text).toContain('http_requests_total{method="POST",route="/v1/agents/:id/kill",status="200"} 1\n');
    expect(text).toContain('http_requests_total{method="GET",route="/healthz",status="200"} 2\n');
    expect(text).toContain('http_request_duration_seconds_bucket{le="0.025",method="POST",route="/v1/agents/:id/kill"} 1\n');
    expect(text).toContain('kill_orders_total{outcome="cancelled"} 12\n');
    expect(text).toContain('risk_failures_total{check="order_size",code="order_too_large"} 1\n');
    expect(text).toContain('venue_errors_total{venue="clob",op="post_order"} 1\n');
    expect(text).toContain('venue_call_duration_seconds_count{venue="paper",op="cancel"} 1\n');
    expect(text).toContain('kill_duration_seconds_bucket{le="1"} 1\n');
    expect(text).toContain('kill_duration_seconds_bucket{le="0.5"} 0\n');
    expect(text).toContain("actors_active 7\n");
    expect(text).toContain('db_batch_size_bucket{le="64"} 1\n');
    expect(text).toContain('db_batch_size_bucket{le="32"} 0\n');
    expect(text).toMatch(/^db_batch_size_sum 40$/m);
    expect(PROMETHEUS_CONTENT_TYPE).toStartWith("text/plain; version=0.0.4");
    expect(m.registry.contentType).toBe(PROMETHEUS_CONTENT_TYPE);
    // Every sample line is `name{labels} value`.
    for (const line of text.trimEnd().split("\n")) {
      if (line.startsWith("#") || line === "") continue;
      expect(line).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? (-?[0-9.e+-]+|\+Inf|-Inf|NaN)$/);
    }
  });

  test("outcome series start at zero before any kill or decision", async () => {
    const text = await createMetrics().registry.metrics();
    for (const outcome of ["cancelled", "failed", "filled"]) expect(text).toContain(`kill_orders_total{outcome="${outcome}"} 0\n`);
    for (const outcome of ["approved", "rejected"]) expect(text).toContain(`risk_decisions_total{outcome="${outcome}"} 0\n`);
    expect(text).toContain("actors_active 0\n");
  });

  test("label values are escaped; two registries never share series", async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.riskFailuresTotal.inc({ check: 'a"b\\c\nd', code: "x" });
    expect(await a.registry.metrics()).toContain('risk_failures_total{check="a\\"b\\\\c\\nd",code="x"} 1\n');
    expect(await b.registry.metrics()).not.toContain('check="a');
  });

  test("a timer observes elapsed seconds into its series", async () => {
    const m = createMetrics();
    const stop = m.venueCallDurationSeconds.startTimer({ venue: "clob", op: "post" });
    await Bun.sleep(5);
    const s = stop();
    expect(s).toBeGreaterThan(0.002);
    const text = await m.registry.metrics();
    expect(text).toContain('venue_call_duration_seconds_count{venue="clob",op="post"} 1\n');
    expect(text).toContain('venue_call_duration_seconds_bucket{le="0.005",venue="clob",op="post"} 0\n');
    expect(text).toContain('venue_call_duration_seconds_bucket{le="+Inf",venue="clob",op="post"} 1\n');
  });
});
