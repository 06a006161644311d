/**
 * A dependency-free Prometheus registry (CONTRACT section 15, `GET /metrics`), rendering the text
 * exposition format 0.0.4.
 *
 * Hot path: a series is found by one Map lookup on a key built from the label values (or, with
 * `labels(...)`, bound once and reused with no lookup at all). Histograms keep per-bucket counts and
 * make them cumulative only when rendering.
 *
 * Rendering: metrics in registration order, series in creation order. Every metric gets `# HELP` and
 * `# TYPE`. An unlabelled counter or gauge renders `name 0` before its first update; a labelled one
 * renders only the series created so far (`init(...)` creates one at zero). Label values escape `\`,
 * `"` and newline; HELP text escapes `\` and newline. Numbers render as JS does (`0.005`, `1e-7`),
 * with `+Inf`, `-Inf` and `NaN` spelled the Prometheus way. The output ends with a newline.
 */

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export type Labels<L extends string> = { readonly [K in L]: string | number };

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const SEP = "\u0000";

export function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}

export function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

interface MetricOptions<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
}

abstract class Metric<L extends string, S> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  abstract readonly type: "counter" | "gauge" | "histogram";
  protected readonly series = new Map<string, { labels: string; data: S }>();

  constructor(opts: MetricOptions<L>) {
    if (!METRIC_NAME.test(opts.name)) throw new Error(`invalid metric name: ${opts.name}`);
    const labelNames = opts.labelNames ?? [];
    const seen = new Set<string>();
    for (const l of labelNames) {
      if (!LABEL_NAME.test(l) || l.startsWith("__")) throw new Error(`invalid label name ${l} on ${opts.name}`);
      if (seen.has(l)) throw new Error(`duplicate label name ${l} on ${opts.name}`);
      seen.add(l);
    }
    this.name = opts.name;
    this.help = opts.help;
    this.labelNames = labelNames;
  }

  protected abstract fresh(): S;

  /** The series for these label values, created on first use. */
  protected get(labels: Labels<L> | undefined): S {
    const names = this.labelNames;
    if (names.length === 0) return this.getByValues([]);
    if (labels === undefined) throw new Error(`${this.name} needs labels ${names.join(", ")}`);
    const values: string[] = new Array(names.length);
    for (let i = 0; i < names.length; i++) {
      const v = labels[names[i]];
      if (v === undefined) throw new Error(`${this.name} is missing label ${names[i]}`);
      values[i] = typeof v === "string" ? v : String(v);
    }
    return this.getByValues(values);
  }

  protected getByValues(values: readonly string[]): S {
    const key = values.length === 0 ? "" : values.length === 1 ? values[0] : values.join(SEP);
    let s = this.series.get(key);
    if (s === undefined) {
      let rendered = "";
      for (let i = 0; i < values.length; i++) {
        rendered += `${i === 0 ? "" : ","}${this.labelNames[i]}="${escapeLabelValue(values[i])}"`;
      }
      s = { labels: rendered, data: this.fresh() };
      this.series.set(key, s);
    }
    return s.data;
  }

  protected checkArity(values: readonly (string | number)[]): string[] {
    if (values.length !== this.labelNames.length) {
      throw new Error(`${this.name} takes ${this.labelNames.length} label values, got ${values.length}`);
    }
    return values.map(String);
  }

  /** Creates the series for these labels at zero, so it is exported before its first event. */
  init(labels?: Labels<L>): void {
    this.get(labels);
  }

  reset(): void {
    this.series.clear();
  }

  protected header(): string {
    return `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${this.type}\n`;
  }

  abstract render(): string;
}

function braces(labels: string): string {
  return labels === "" ? "" : `{${labels}}`;
}

// ---------------------------------------------------------------------------------------------

interface Cell {
  value: number;
}

export class Counter<L extends string = never> extends Metric<L, Cell> {
  readonly type = "counter" as const;
  protected fresh(): Cell {
    return { value: 0 };
  }

  inc(...args: [L] extends [never] ? [value?: number] : [labels: Labels<L>, value?: number]): void {
    const [labels, value] = (this.labelNames.length === 0 ? [undefined, args[0]] : args) as [
      Labels<L> | undefined,
      number | undefined,
    ];
    const by = value ?? 1;
    if (!(by >= 0)) throw new Error(`${this.name}: a counter can only increase`);
    this.get(labels).value += by;
  }

  /** A bound series: `c.labels("GET", "/x", "200").inc()` with no lookup after the first call. */
  labels(...values: (string | number)[]): { inc(value?: number): void } {
    const cell = this.getByValues(this.checkArity(values));
    const name = this.name;
    return {
      inc(value = 1) {
        if (!(value >= 0)) throw new Error(`${name}: a counter can only increase`);
        cell.value += value;
      },
    };
  }

  /** Current value of one series (0 when it does not exist); for tests and health checks. */
  value(labels?: Labels<L>): number {
    return this.peek(labels)?.value ?? 0;
  }

  private peek(labels?: Labels<L>): Cell | undefined {
    const key = this.labelNames.map((n) => String(labels?.[n])).join(SEP);
    return this.series.get(key)?.data;
  }

  render(): string {
    let out = this.header();
    if (this.series.size === 0 && this.labelNames.length === 0) this.getByValues([]);
    for (const s of this.series.values()) out += `${this.name}${braces(s.labels)} ${formatValue(s.data.value)}\n`;
    return out;
  }
}

export class Gauge<L extends string = never> extends Metric<L, Cell> {
  readonly type = "gauge" as const;
  readonly #collect?: (gauge: Gauge<L>) => void;

  constructor(opts: MetricOptions<L> & { collect?: (gauge: Gauge<L>) => void }) {
    super(opts);
    this.#collect = opts.collect;
  }
  protected fresh(): Cell {
    return { value: 0 };
  }

  set(...args: [L] extends [never] ? [value: number] : [labels: Labels<L>, value: number]): void {
    const [labels, value] = (this.labelNames.length === 0 ? [undefined, args[0]] : args) as [Labels<L> | undefined, number];
    this.get(labels).value = value;
  }
  inc(...args: [L] extends [never] ? [value?: number] : [labels: Labels<L>, value?: number]): void {
    const [labels, value] = (this.labelNames.length === 0 ? [undefined, args[0]] : args) as [
      Labels<L> | undefined,
      number | undefined,
    ];
    this.get(labels).value += value ?? 1;
  }
  dec(...args: [L] extends [never] ? [value?: number] : [labels: Labels<L>, value?: number]): void {
    const [labels, value] = (this.labelNames.length === 0 ? [undefined, args[0]] : args) as [
      Labels<L> | undefined,
      number | undefined,
    ];
    this.get(labels).value -= value ?? 1;
  }
  value(labels?: Labels<L>): number {
    const key = this.labelNames.map((n) => String(labels?.[n])).join(SEP);
    return this.series.get(key)?.data.value ?? 0;
  }

  render(): string {
    if (this.#collect) {
      try {
        this.#collect(this);
      } catch {
        // A failing sampler leaves the last value in place rather than breaking /metrics.
      }
    }
    let out = this.header();
    if (this.series.size === 0 && this.labelNames.length === 0) this.getByValues([]);
    for (const s of this.series.values()) out += `${this.name}${braces(s.labels)} ${formatValue(s.data.value)}\n`;
    return out;
  }
}

interface HistogramData {
  /** Per-bucket (not cumulative) counts; the last slot is the +Inf overflow. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export interface HistogramChild {
  observe(value: number): void;
  /** Starts a timer; the returned function observes the elapsed seconds and returns them. */
  startTimer(): () => number;
}

export class Histogram<L extends string = never> extends Metric<L, HistogramData> {
  readonly type = "histogram" as const;
  /** Upper bounds, sorted, without +Inf. */
  readonly buckets: readonly number[];
  readonly #le: string[];

  constructor(opts: MetricOptions<L> & { buckets?: readonly number[] }) {
    super(opts);
    if ((opts.labelNames ?? []).includes("le" as L)) throw new Error(`${opts.name}: "le" is reserved in histograms`);
    const b = [...(opts.buckets ?? DEFAULT_BUCKETS)].filter((x) => x !== Number.POSITIVE_INFINITY);
    for (let i = 0; i < b.length; i++) {
      if (!Number.isFinite(b[i])) throw new Error(`${opts.name}: bucket bounds must be finite numbers`);
      if (i > 0 && !(b[i] > b[i - 1])) throw new Error(`${opts.name}: bucket bounds must be strictly increasing`);
    }
    this.buckets = b;
    this.#le = [...b.map(formatValue), "+Inf"];
  }

  protected fresh(): HistogramData {
    return { counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 };
  }

  observe(...args: [L] extends [never] ? [value: number] : [labels: Labels<L>, value: number]): void {
    const [labels, value] = (this.labelNames.length === 0 ? [undefined, args[0]] : args) as [Labels<L> | undefined, number];
    this.#observeInto(this.get(labels), value);
  }

  /** Starts a timer; the returned function observes the elapsed seconds (and returns them). */
  startTimer(...args: [L] extends [never] ? [] : [labels: Labels<L>]): () => number {
    const data = this.get(args[0] as Labels<L> | undefined);
    const t0 = performance.now();
    return () => {
      const s = (performance.now() - t0) / 1000;
      this.#observeInto(data, s);
      return s;
    };
  }

  /** A bound series, as Counter.labels. */
  labels(...values: (string | number)[]): HistogramChild {
    const data = this.getByValues(this.checkArity(values));
    return {
      observe: (v: number) => this.#observeInto(data, v),
      startTimer: () => {
        const t0 = performance.now();
        return () => {
          const s = (performance.now() - t0) / 1000;
          this.#observeInto(data, s);
          return s;
        };
      },
    };
  }

  #observeInto(data: HistogramData, value: number): void {
    if (Number.isNaN(value)) return; // a NaN would poison _sum for good
    const b = this.buckets;
    let i = 0;
    while (i < b.length && value > b[i]) i++;
    data.counts[i]++;
    data.sum += value;
    data.count++;
  }

  /** Snapshot of one series (cumulative bucket counts); for tests. */
  snapshot(labels?: Labels<L>): { buckets: number[]; sum: number; count: number } | undefined {
    const key = this.labelNames.map((n) => String(labels?.[n])).join(SEP);
    const d = this.series.get(key)?.data;
    if (!d) return undefined;
    let acc = 0;
    return { buckets: Array.from(d.counts, (c) => (acc += c)), sum: d.sum, count: d.count };
  }

  render(): string {
    let out = this.header();
    if (this.series.size === 0 && this.labelNames.length === 0) this.getByValues([]);
    for (const s of this.series.values()) {
      const prefix = s.labels === "" ? "" : `${s.labels},`;
      let acc = 0;
      for (let i = 0; i < this.#le.length; i++) {
        acc += s.data.counts[i];
        out += `${this.name}_bucket{${prefix}le="${this.#le[i]}"} ${formatValue(acc)}\n`;
      }
      out += `${this.name}_sum${braces(s.labels)} ${formatValue(s.data.sum)}\n`;
      out += `${this.name}_count${braces(s.labels)} ${formatValue(s.data.count)}\n`;
    }
    return out;
  }
}

/** Latency buckets in seconds (the Prometheus client defaults). */
export const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

// ---------------------------------------------------------------------------------------------

type AnyMetric = Counter<string> | Gauge<string> | Histogram<string>;

export class Registry {
  readonly #metrics = new Map<string, AnyMetric>();

  counter<L extends string = never>(opts: MetricOptions<L>): Counter<L> {
    return this.#add(new Counter<L>(opts));
  }
  gauge<L extends string = never>(opts: MetricOptions<L> & { collect?: (gauge: Gauge<L>) => void }): Gauge<L> {
    return this.#add(new Gauge<L>(opts));
  }
  histogram<L extends string = never>(opts: MetricOptions<L> & { buckets?: readonly number[] }): Histogram<L> {
    return this.#add(new Histogram<L>(opts));
  }

  get(name: string): AnyMetric | undefined {
    return this.#metrics.get(name);
  }

  /** The whole registry in the Prometheus text format 0.0.4 (serve with PROMETHEUS_CONTENT_TYPE). */
  render(): string {
    let out = "";
    for (const m of this.#metrics.values()) out += m.render();
    return out;
  }

  #add<M extends { name: string }>(m: M): M {
    if (this.#metrics.has(m.name)) throw new Error(`metric ${m.name} is already registered`);
    this.#metrics.set(m.name, m as unknown as AnyMetric);
    return m;
  }
}

// ---------------------------------------------------------------------------------------------

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
}

/**
 * The service's metrics. `route` must be the route template (`/v1/agents/:id/kill`), never the raw
 * path, so the series count stays bounded. `kill_orders_total{outcome}` is `cancelled` or `failed`;
 * `risk_decisions_total{outcome}` is `approved` or `rejected`; both start at zero.
 */
export function createMetrics(registry: Registry = new Registry()): ServiceMetrics {
  const m: ServiceMetrics = {
    registry,
    httpRequestsTotal: registry.counter({
      name: "http_requests_total",
      help: "HTTP requests answered, by method, route template and status code.",
      labelNames: ["method", "route", "status"],
    }),
    httpRequestDurationSeconds: registry.histogram({
      name: "http_request_duration_seconds",
      help: "HTTP request latency in seconds, by method and route template.",
      labelNames: ["method", "route"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
    riskFailuresTotal: registry.counter({
      name: "risk_failures_total",
      help: "Failed risk checks, by check and failure code.",
      labelNames: ["check", "code"],
    }),
    riskDecisionsTotal: registry.counter({
      name: "risk_decisions_total",
      help: "Risk engine decisions, by outcome (approved or rejected).",
      labelNames: ["outcome"],
    }),
    killDurationSeconds: registry.histogram({
      name: "kill_duration_seconds",
      help: "Kill switch duration in seconds, from request to answer.",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 6, 10],
    }),
    killOrdersTotal: registry.counter({
      name: "kill_orders_total",
      help: "Orders handled by kill switches, by outcome (cancelled or failed).",
      labelNames: ["outcome"],
    }),
    venueCallDurationSeconds: registry.histogram({
      name: "venue_call_duration_seconds",
      help: "Venue call latency in seconds, by venue and operation.",
      labelNames: ["venue", "op"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    }),
    venueErrorsTotal: registry.counter({
      name: "venue_errors_total",
      help: "Venue calls that failed (error answer or timeout), by venue and operation.",
      labelNames: ["venue", "op"],
    }),
    actorsActive: registry.gauge({
      name: "actors_active",
      help: "Agent actors currently resident in memory.",
    }),
    dbBatchSize: registry.histogram({
      name: "db_batch_size",
      help: "Rows written per database batch.",
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
    }),
  };
  for (const outcome of ["cancelled", "failed"]) m.killOrdersTotal.init({ outcome });
  for (const outcome of ["approved", "rejected"]) m.riskDecisionsTotal.init({ outcome });
  return m;
}
