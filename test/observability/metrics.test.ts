import { describe, expect, test } from "bun:test";
import {
  Registry,
  PROMETHEUS_CONTENT_TYPE,
  createMetrics,
  escapeLabelValue,
  formatValue,
} from "../../src/observability/metrics.ts";

describe("metrics registry", () => {
  test("counter renders exactly", () => {
    const r = new Registry();
    const c = r.counter({
      name: "http_requests_total",
      help: "HTTP requests.",
      labelNames: ["method", "route", "status"],
    });
    c.inc({ method: "GET", route: "/healthz", status: 200 });
    c.inc({ method: "GET", route: "/healthz", status: 200 });
    c.inc({ method: "POST", route: "/v1/orders/intent", status: "422" }, 3);
    c.labels("GET", "/healthz", 200).inc();
    expect(r.render()).toBe(
      [
        "# HELP http_requests_total HTTP requests.",
        "# TYPE http_requests_total counter",
        'http_requests_total{method="GET",route="/healthz",status="200"} 3',
        'http_requests_total{method="POST",route="/v1/orders/intent",status="422"} 3',
        "",
      ].join("\n"),
    );
    expect(c.value({ method: "GET", route: "/healthz", status: 200 })).toBe(3);
  });

  test("unlabelled counter and gauge render 0 before any update; labelled ones render no series", () => {
    const r = new Registry();
    r.counter({ name: "a_total", help: "A." });
    r.counter({ name: "b_total", help: "B.", labelNames: ["x"] });
    const g = r.gauge({ name: "g", help: "G." });
    expect(r.render()).toBe(
      "# HELP a_total A.\n# TYPE a_total counter\na_total 0\n" +
        "# HELP b_total B.\n# TYPE b_total counter\n" +
        "# HELP g G.\n# TYPE g gauge\ng 0\n",
    );
    g.set(5);
    g.inc();
    g.dec(2);
    expect(g.value()).toBe(4);
    expect(r.render()).toContain("\ng 4\n");
  });

  test("histogram buckets are cumulative, with +Inf, _sum and _count", () => {
    const r = new Registry();
    const h = r.histogram({
      name: "venue_call_duration_seconds",
      help: "Venue call latency.",
      labelNames: ["venue", "op"],
      buckets: [0.1, 0.5, 1],
    });
    for (const v of [0.05, 0.1, 0.3, 0.7, 2]) h.observe({ venue: "clob", op: "post" }, v);
    expect(r.render()).toBe(
      [
        "# HELP venue_call_duration_seconds Venue call latency.",
        "# TYPE venue_call_duration_seconds histogram",
        'venue_call_duration_seconds_bucket{venue="clob",op="post",le="0.1"} 2',
        'venue_call_duration_seconds_bucket{venue="clob",op="post",le="0.5"} 3',
        'venue_call_duration_seconds_bucket{venue="clob",op="post",le="1"} 4',
        'venue_call_duration_seconds_bucket{venue="clob",op="post",le="+Inf"} 5',
        'venue_call_duration_seconds_sum{venue="clob",op="post"} 3.15',
        'venue_call_duration_seconds_count{venue="clob",op="post"} 5',
        "",
      ].join("\n"),
    );
    expect(h.snapshot({ venue: "clob", op: "post" })).toEqual({ buckets: [2, 3, 4, 5], sum: 3.15, count: 5 });
  });

  test("unlabelled histogram, bound series and timers", async () => {
    const r = new Registry();
    const h = r.histogram({ name: "kill_duration_seconds", help: "Kill.", buckets: [0.001, 10] });
    expect(r.render()).toBe(
      "# HELP kill_duration_seconds Kill.\n# TYPE kill_duration_seconds histogram\n" +
        'kill_duration_seconds_bucket{le="0.001"} 0\n' +
        'kill_duration_seconds_bucket{le="10"} 0\n' +
        'kill_duration_seconds_bucket{le="+Inf"} 0\n' +
        "kill_duration_seconds_sum 0\nkill_duration_seconds_count 0\n",
    );
    const stop = h.startTimer();
    await Bun.sleep(5);
    const s = stop();
    expect(s).toBeGreaterThan(0.002);
    expect(h.snapshot()).toEqual({ buckets: [0, 1, 1], sum: s, count: 1 });

    const l = r.histogram({ name: "lat_seconds", help: "L.", labelNames: ["op"], buckets: [1] });
    const bound = l.labels("cancel");
    bound.observe(0.5);
    bound.observe(3);
    l.observe({ op: "cancel" }, 1); // le is inclusive
    expect(l.snapshot({ op: "cancel" })).toEqual({ buckets: [2, 3], sum: 4.5, count: 3 });
  });

  test("label values and help text are escaped", () => {
    const r = new Registry();
    const c = r.counter({ name: "weird_total", help: "Back\\slash and\nnewline.", labelNames: ["v"] });
    c.inc({ v: 'a"b\\c\nd' });
    expect(r.render()).toBe(
      "# HELP weird_total Back\\\\slash and\\nnewline.\n" +
        "# TYPE weird_total counter\n" +
        'weird_total{v="a\\"b\\\\c\\nd"} 1\n',
    );
    expect(escapeLabelValue("plain")).toBe("plain");
  });

  test("special values and validation", () => {
    expect(formatValue(Number.POSITIVE_INFINITY)).toBe("+Inf");
    expect(formatValue(Number.NEGATIVE_INFINITY)).toBe("-Inf");
    expect(formatValue(Number.NaN)).toBe("NaN");
    expect(formatValue(0.005)).toBe("0.005");

    const r = new Registry();
    expect(() => r.counter({ name: "bad-name", help: "x" })).toThrow();
    expect(() => r.counter({ name: "ok_total", help: "x", labelNames: ["__x"] })).toThrow();
    expect(() => r.histogram({ name: "h", help: "x", labelNames: ["le"] })).toThrow();
    expect(() => r.histogram({ name: "h2", help: "x", buckets: [1, 0.5] })).toThrow();
    r.counter({ name: "dup_total", help: "x" });
    expect(() => r.counter({ name: "dup_total", help: "x" })).toThrow();
    const c = r.counter({ name: "neg_total", help: "x" });
    expect(() => c.inc(-1)).toThrow();
    const l = r.counter({ name: "lab_total", help: "x", labelNames: ["a", "b"] });
    expect(() => l.inc({ a: "1" } as never)).toThrow();
    expect(() => l.labels("1")).toThrow();
    // Values that differ only in how they would be joined stay separate series.
    l.inc({ a: "x,y", b: "z" });
    l.inc({ a: "x", b: "y,z" });
    expect(r.render()).toContain('lab_total{a="x,y",b="z"} 1\nlab_total{a="x",b="y,z"} 1\n');
  });

  test("createMetrics defines the service metrics", () => {
    const m = createMetrics();
    m.httpRequestsTotal.inc({ method: "POST", route: "/v1/agents/:id/kill", status: 200 });
    m.httpRequestDurationSeconds.observe({ method: "POST", route: "/v1/agents/:id/kill" }, 0.012);
    m.riskFailuresTotal.inc({ check: "order_size", code: "order_too_large" });
    m.riskDecisionsTotal.inc({ outcome: "rejected" });
    m.killDurationSeconds.observe(0.8);
    m.killOrdersTotal.inc({ outcome: "cancelled" }, 12);
    m.venueCallDurationSeconds.observe({ venue: "paper", op: "cancel" }, 0.002);
    m.venueErrorsTotal.inc({ venue: "clob", op: "post_order" });
    m.actorsActive.set(7);
    m.dbBatchSize.observe(40);
    const text = m.registry.render();
    for (const name of [
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
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(text).toContain('kill_orders_total{outcome="cancelled"} 12\n');
    expect(text).toContain('kill_orders_total{outcome="failed"} 0\n');
    expect(text).toContain('risk_decisions_total{outcome="approved"} 0\n');
    expect(text).toContain('risk_failures_total{check="order_size",code="order_too_large"} 1\n');
    expect(text).toContain('kill_duration_seconds_bucket{le="5"} 1\n');
    expect(text).toContain("actors_active 7\n");
    expect(text).toContain('db_batch_size_bucket{le="64"} 1\n');
    expect(text.endsWith("\n")).toBe(true);
    expect(PROMETHEUS_CONTENT_TYPE).toBe("text/plain; version=0.0.4; charset=utf-8");

    // Every non-comment line is `name{labels} value`.
    for (const line of text.trimEnd().split("\n")) {
      if (line.startsWith("#")) continue;
      expect(line).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? (-?[0-9.e+-]+|\+Inf|-Inf|NaN)$/);
    }
  });

  test("a gauge can sample its value at render time", () => {
    const r = new Registry();
    let n = 0;
    r.gauge({ name: "actors_active", help: "Actors.", collect: (g) => g.set(++n) });
    expect(r.render()).toContain("actors_active 1\n");
    expect(r.render()).toContain("actors_active 2\n");
    r.gauge({
      name: "broken",
      help: "B.",
      collect: () => {
        throw new Error("x");
      },
    });
    expect(() => r.render()).not.toThrow();
  });
});
