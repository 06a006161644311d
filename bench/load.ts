/**
 * HTTP load generator for the benchmarks: `bun run bench/load.ts <config.json>`.
 *
 * Runs `connections` concurrent keep-alive loops, each sending its request again
 * as soon as the previous answer has been read, for `warmupS + durationS`
 * seconds; only requests that start and finish inside the measured window
 * count. Prints one JSON line on stdout:
 *   {count, rps, p50_ms, p99_ms, max_ms, non2xx, errors, total_ok, statuses, connections, duration_s}
 *
 * It only talks to 127.0.0.1 (anything else is refused) and always stops by itself.
 *
 * Config (JSON file):
 *   url          http://127.0.0.1:<port>/path
 *   method       default POST
 *   headers      sent with every request
 *   bodies       one body per connection (strings), reused round robin when fewer
 *   connections  default 32
 *   warmupS      default 2
 *   durationS    default 10
 */

export interface LoadConfig {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  bodies?: string[];
  connections?: number;
  warmupS?: number;
  durationS?: number;
}

export interface LoadResult {
  count: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  non2xx: number;
  errors: number;
  /** 2xx answers over the whole run, warm-up and stragglers included. */
  total_ok: number;
  statuses: Record<string, number>;
  connections: number;
  duration_s: number;
  first_error?: string;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export async function runLoad(cfg: LoadConfig): Promise<LoadResult> {
  const url = new URL(cfg.url);
  if (url.hostname !== "127.0.0.1" || url.protocol !== "http:") throw new Error(`load generator only targets http://127.0.0.1 (got ${cfg.url})`);
  const method = cfg.method ?? "POST";
  const connections = cfg.connections ?? 32;
  const warmupMs = (cfg.warmupS ?? 2) * 1000;
  const durationMs = (cfg.durationS ?? 10) * 1000;
  const bodies = cfg.bodies?.length ? cfg.bodies : [undefined];
  const headers = { connection: "keep-alive", ...(cfg.headers ?? {}) };

  const t0 = performance.now();
  const measureFrom = t0 + warmupMs;
  const measureTo = measureFrom + durationMs;
  // A hard stop, whatever happens to the server.
  const hardStop = setTimeout(() => {
    console.error("load generator: hard stop");
    process.exit(3);
  }, warmupMs + durationMs + 30_000);

  const latencies: number[][] = [];
  const statuses: Record<string, number> = {};
  let non2xx = 0;
  let errors = 0;
  let totalOk = 0;
  let firstError: string | undefined;

  const loop = async (c: number) => {
    const mine: number[] = [];
    latencies.push(mine);
    const body = bodies[c % bodies.length];
    while (true) {
      const start = performance.now();
      if (start >= measureTo) break;
      let status = 0;
      try {
        const res = await fetch(url, { method, headers, body, keepalive: true });
        await res.arrayBuffer();
        status = res.status;
      } catch (e) {
        errors++;
        firstError ??= e instanceof Error ? e.message : String(e);
        await Bun.sleep(10);
        continue;
      }
      const end = performance.now();
      if (status >= 200 && status < 300) totalOk++;
      if (start >= measureFrom && end <= measureTo) {
        mine.push(end - start);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status < 200 || status >= 300) {
          non2xx++;
          if (!firstError) firstError = `status ${status}`;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, c) => loop(c)));
  clearTimeout(hardStop);

  const all = new Float64Array(latencies.reduce((n, l) => n + l.length, 0));
  let k = 0;
  for (const l of latencies) for (const x of l) all[k++] = x;
  all.sort();
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    count: all.length,
    rps: Math.round(all.length / (durationMs / 1000)),
    p50_ms: round(percentile(all, 50)),
    p99_ms: round(percentile(all, 99)),
    max_ms: round(all.length ? all[all.length - 1] : 0),
    non2xx,
    errors,
    total_ok: totalOk,
    statuses,
    connections,
    duration_s: durationMs / 1000,
    ...(firstError ? { first_error: firstError } : {}),
  };
}

if (import.meta.main) {
  const path = process.argv[2];
  if (!path) {
    console.error("usage: bun run bench/load.ts <config.json>");
    process.exit(2);
  }
  const cfg = (await Bun.file(path).json()) as LoadConfig;
  const result = await runLoad(cfg);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
