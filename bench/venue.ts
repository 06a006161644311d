/**
 * Venue-facing intent benchmark: `bun run bench/venue.ts`.
 *
 * The venue simulator (`bun run venue-sim`) and the service (`bun run src/main.ts`, VENUE=clob against
 * it, PGlite or with --db postgres a bench database at --pg) each in their own process on 127.0.0.1. Two services run side by side in the same rounds:
 *
 *   stream  the default: books kept live from the simulator's /ws/market (VENUE_WS_URL derived from VENUE_URL)
 *   rest    the baseline: VENUE_WS_URL=off, every intent reads GET /book as before issue 22
 *
 * Per round and service, three measures:
 *   1. payload intents, one at a time, with the simulator's latency_ms at --latency (50): p50 and p99 of
 *      POST /v1/orders/intent, and the venue calls per approved intent (every request the simulator
 *      counted, GET /_sim/stats `requests`, over the measured intents; after --warmup intents);
 *   2. payload intents/s at zero venue latency, --connections (16) at once, one agent each, for --duration s (5);
 *   3. delegated intents/s at zero venue latency, the same way (each places a resting order at the venue).
 * Medians of --rounds (3) rounds are printed with the machine (CPU model from /proc/cpuinfo).
 *
 * Options: --rounds N --latency MS --sequential N (200) --warmup N (20) --connections N --duration S
 *          --only stream|rest|baseline (repeatable) --cpu-prof DIR (services and the simulator under `bun --cpu-prof`)
 *          --baseline DIR: also runs the service of another checkout (e.g. `git archive` of main before
 *          issue 22, node_modules linked) as "baseline", in the same rounds
 *          --phases sequential,payload,delegated (which measures to run)
 *          --db postgres (else PGlite) --db-prefix NAME (bench_venue: the PostgreSQL databases are NAME_<service>,
 *          dropped and created at start, dropped at the end)
 *          --threads (the service's CPU per intent by thread: its main thread, Bun's HTTP client, JIT, GC)
 *          --stream-env NAME=VALUE (repeatable): an environment variable for the stream service alone (an A/B
 *          of a runtime setting against --baseline in the same rounds)
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { SQL, type Subprocess } from "bun";
import {
  BENCH_LIMITS,
  call,
  createBenchDb,
  type DatabaseKind,
  DEFAULT_PG,
  dropBenchDb,
  expectStatus,
  freePort,
  median,
  parseOptions,
  pickIntent,
  removeTempDirs,
  runMain,
  spawnLogged,
  startServiceProcess,
  stopAll,
  stopChild,
  waitHealthy,
  wanted,
} from "./support.ts";

const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const LIMITS = { ...BENCH_LIMITS, price_band: 0.5, book_max_age_s: 86_400 };

function parseArgs(argv: string[]) {
  const o = { rounds: 3, only: [] as string[], pg: DEFAULT_PG, latency: 50, sequential: 200, warmup: 20, connections: 16, duration: 5, cpuProf: "", phases: "sequential,payload,delegated", baseline: "", db: "pglite" as DatabaseKind, dbPrefix: "bench_venue", threads: false, streamEnv: {} as Record<string, string> };
  return parseOptions(argv, o, {
    "--latency": (v) => (o.latency = Number(v())),
    "--sequential": (v) => (o.sequential = Number(v())),
    "--warmup": (v) => (o.warmup = Number(v())),
    "--connections": (v) => (o.connections = Number(v())),
    "--duration": (v) => (o.duration = Number(v())),
    "--cpu-prof": (v) => (o.cpuProf = v()),
    "--phases": (v) => (o.phases = v()),
    "--baseline": (v) => (o.baseline = v()),
    "--db": (v) => (o.db = v() === "postgres" ? "postgres" : "pglite"),
    "--db-prefix": (v) => (o.dbPrefix = v()),
    "--threads": () => (o.threads = true),
    "--stream-env": (v) => {
      const [k, ...rest] = v().split("=");
      o.streamEnv[k] = rest.join("=");
    },
  });
}

interface Svc {
  name: string;
  base: string;
  child: Subprocess;
  auth: Record<string, string>;
  /** One payload and one delegated agent per connection (as bench/load.ts: an agent's intents run one at a time). */
  payload: string[];
  delegated: string[];
}

const simUrl = { value: "" };
const simPid = { value: 0 };
const faults = async (f: Record<string, number>) => expectStatus(await call(simUrl.value, "POST", "/_sim/faults", {}, f), 200, "POST /_sim/faults");
/** The simulator's request counts by route, WebSocket upgrades left out. */
const venueRequests = async (): Promise<Map<string, number>> => {
  const r = await call(simUrl.value, "GET", "/_sim/stats");
  return new Map(Object.entries(r.body.requests as Record<string, number>).filter(([k]) => !k.startsWith("GET /ws/")));
};
const total = (m: Map<string, number>) => [...m.values()].reduce((a, n) => a + n, 0);
/** The routes called between two counts, "GET /book ×3, …". */
const routesBetween = (a: Map<string, number>, b: Map<string, number>) =>
  [...b]
    .map(([k, n]) => [k, n - (a.get(k) ?? 0)] as const)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ×${n}`)
    .join(", ");

async function startService(name: string, env: Record<string, string>, cpuProf: string, connections: number, root?: string): Promise<Svc> {
  const db = opts.db;
  if (db === "postgres") await createBenchDb(opts.pg, `${opts.dbPrefix}_${name}`);
  const { base, child, key } = await startServiceProcess({
    kind: db,
    databaseUrl: `${opts.pg}/${opts.dbPrefix}_${name}`,
    env: { VENUE: "clob", VENUE_URL: simUrl.value, ...env },
    name,
    maxLineChars: 400,
    orgName: `venue bench ${name}`,
    ...(root ? { root } : {}),
    ...(cpuProf ? { bunArgs: ["--cpu-prof", `--cpu-prof-dir=${cpuProf}`, `--cpu-prof-name=service-${name}.cpuprofile`] } : {}),
  });
  const auth = { "x-api-key": key };
  const agent = async (label: string) => {
    const a = await call(base, "POST", "/v1/agents", auth, { name: `${name} ${label}`, wallet_address: WALLET });
    expectStatus(a, 201, "POST /v1/agents");
    expectStatus(await call(base, "PATCH", `/v1/agents/${a.body.id}/limits`, auth, LIMITS), 200, "PATCH limits");
    return a.body.id as string;
  };
  const payload: string[] = [];
  const delegated: string[] = [];
  for (let i = 0; i < connections; i++) {
    payload.push(await agent(`payload ${i}`));
    const d = await agent(`delegated ${i}`);
    const c = { api_key: crypto.randomUUID(), api_secret: randomBytes(32).toString("base64url"), passphrase: randomBytes(16).toString("hex"), address: WALLET };
    expectStatus(await call(simUrl.value, "POST", "/_sim/credentials", {}, { ...c, scopes: ["order:place", "order:cancel"] }), 201, "POST /_sim/credentials");
    const r = await call(base, "POST", `/v1/agents/${d}/creds`, auth, { api_key: c.api_key, api_secret: c.api_secret, passphrase: c.passphrase, scopes: ["order:place", "order:cancel"] });
    expectStatus(r, 200, "POST /v1/agents/{id}/creds");
    delegated.push(d);
  }
  return { name, base, child, auth, payload, delegated };
}

const intent = (svc: Svc, agentId: string) => {
  const { market_id, side, size_usdc, price } = pickIntent();
  return call(svc.base, "POST", "/v1/orders/intent", svc.auth, { market_id, side, size_usdc, price, agent_id: agentId });
};

/** Payload intents one at a time: latencies and venue calls per approved intent. */
async function sequential(svc: Svc, n: number, warmup: number) {
  for (let i = 0; i < warmup; i++) expectStatus(await intent(svc, svc.payload[0]), 201, "a payload intent");
  await Bun.sleep(200); // the token's snapshot
  const before = await venueRequests();
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await intent(svc, svc.payload[0]);
    ms.push(performance.now() - t0);
    expectStatus(r, 201, "a payload intent");
  }
  const after = await venueRequests();
  const calls = total(after) - total(before);
  if (calls > 0) console.log(`    ${svc.name}: venue requests during the sequential intents: ${routesBetween(before, after)}`);
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(n * 0.5)], p99: ms[Math.min(n - 1, Math.floor(n * 0.99))], callsPerIntent: calls / n };
}

/** CPU seconds used so far by a process (utime + stime, /proc). */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Busy and total jiffies of the whole machine (/proc/stat's first line). */
function machineJiffies(): { busy: number; total: number } {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
}

/** The PostgreSQL backends serving the service's bench database (their pids, from pg_stat_activity). */
async function pgBackends(svc: Svc): Promise<number[]> {
  if (opts.db !== "postgres") return [];
  const sql = new SQL(`${opts.pg}/${opts.dbPrefix}_${svc.name}`, { max: 1 });
  try {
    const rows: { pid: number }[] = await sql`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
    return rows.map((r) => r.pid);
  } finally {
    await sql.close();
  }
}

/** CPU seconds so far of each thread of a process, by thread name (/proc/PID/task; threads of one name summed). */
function threadSeconds(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) / 100);
      } catch {
        // the thread ended
      }
    }
  } catch {
    // the process ended
  }
  return out;
}

interface Sample {
  threads: Map<string, number>;
  svc: number;
  sim: number;
  pg: Map<number, number>;
  load: number;
  machine: { busy: number; total: number };
}

async function sample(svc: Svc, pids: number[]): Promise<Sample> {
  const u = process.cpuUsage();
  return {
    threads: threadSeconds(svc.child.pid),
    svc: cpuSeconds(svc.child.pid),
    sim: cpuSeconds(simPid.value),
    pg: new Map(pids.map((p) => [p, cpuSeconds(p)])),
    load: (u.user + u.system) / 1e6,
    machine: machineJiffies(),
  };
}

/** `connections` loops posting intents for `seconds`: approved intents per second, and CPU per intent of every process taking part (service, simulator, PostgreSQL's backends, this load generator) and the machine's busy share. */
async function throughput(svc: Svc, agents: string[], seconds: number): Promise<{ rps: number; svcUs: number; simUs: number; pgUs: number; loadUs: number; busy: number; p50: number; p99: number }> {
  const warmEnd = performance.now() + 1000;
  const end = warmEnd + seconds * 1000;
  let ok = 0;
  let bad = 0;
  let lastBad = "";
  const ms: number[] = [];
  let cpu0: Sample | null = null;
  // PostgreSQL's backends are listed at both samples: a pool may open a connection during the run.
  setTimeout(() => void pgBackends(svc).then((pids) => sample(svc, pids)).then((s) => (cpu0 = s)), 1000);
  await Promise.all(
    agents.map(async (agentId) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const r = await intent(svc, agentId);
        const t = performance.now();
        if (t < warmEnd || t > end) continue;
        ms.push(t - t0);
        if (r.status === 201) ok++;
        else {
          bad++;
          lastBad = r.text.slice(0, 200);
        }
      }
    }),
  );
  const cpu1 = await sample(svc, await pgBackends(svc));
  const c0 = cpu0 as Sample | null;
  if (!c0) throw new Error("the first CPU sample was not taken");
  let pg = 0;
  for (const [pid, s1] of cpu1.pg) pg += s1 - (c0.pg.get(pid) ?? 0);
  if (bad > 0) console.log(`    ${svc.name}: ${bad} intents not approved (last: ${lastBad})`);
  ms.sort((a, b) => a - b);
  const q = (f: number) => ms[Math.min(ms.length - 1, Math.floor(ms.length * f))] ?? Number.NaN;
  const per = (x: number) => (x / ok) * 1e6;
  if (opts.threads) {
    const parts = [...cpu1.threads]
      .map(([name, t]) => [name, per(t - (c0.threads.get(name) ?? 0))] as const)
      .filter(([, us]) => us >= 1)
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => `${name} ${us.toFixed(0)}`);
    console.log(`    ${svc.name}: the service's threads, CPU µs per intent: ${parts.join(", ")}`);
  }
  return {
    rps: ok / seconds,
    svcUs: per(cpu1.svc - c0.svc),
    simUs: per(cpu1.sim - c0.sim),
    pgUs: opts.db === "postgres" ? per(pg) : Number.NaN,
    loadUs: per(cpu1.load - c0.load),
    busy: (cpu1.machine.busy - c0.machine.busy) / (cpu1.machine.total - c0.machine.total),
    p50: q(0.5),
    p99: q(0.99),
  };
}

/** CPU per intent of each process, their sum, the machine's busy share and the latencies. */
function cpuText(x: { svcUs: number; simUs: number; pgUs: number; loadUs: number; busy: number; p50: number; p99: number }): string {
  const all = x.svcUs + x.simUs + (Number.isNaN(x.pgUs) ? 0 : x.pgUs) + x.loadUs;
  const pg = Number.isNaN(x.pgUs) ? "" : `, PostgreSQL ${x.pgUs.toFixed(0)}`;
  return `CPU µs each: service ${x.svcUs.toFixed(0)}, simulator ${x.simUs.toFixed(0)}${pg}, load ${x.loadUs.toFixed(0)}, all ${all.toFixed(0)}; machine ${(x.busy * 100).toFixed(0)} % busy; p50 ${x.p50.toFixed(1)} ms, p99 ${x.p99.toFixed(1)} ms`;
}

function cpuModel(): string {
  try {
    return /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? cpus()[0]?.model ?? "?";
  } catch {
    return cpus()[0]?.model ?? "?";
  }
}

const opts = parseArgs(Bun.argv.slice(2));

await runMain(async () => {
  const o = opts;
  console.log(`bench/venue.ts ${new Date().toISOString()} — ${cpus().length} CPUs, ${cpuModel()}, ${o.db}`);
  const port = await freePort();
  // The simulator itself (not `bun run venue-sim`, whose pid is a wrapper): its CPU is read from /proc.
  const simProf = o.cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${o.cpuProf}`, "--cpu-prof-name=venue-sim.cpuprofile"] : [];
  const sim = spawnLogged(["bun", ...simProf, "src/venues/sim/main.ts", "--port", String(port), "--host", "127.0.0.1"], {}, "venue-sim", 400);
  simUrl.value = `http://127.0.0.1:${port}`;
  simPid.value = sim.pid;
  await waitHealthy(simUrl.value, sim, "venue simulator", { path: "/ok" });

  const services: Svc[] = [];
  if (wanted(o, "stream")) services.push(await startService("stream", o.streamEnv, o.cpuProf, o.connections));
  if (wanted(o, "rest")) services.push(await startService("rest", { VENUE_WS_URL: "off" }, o.cpuProf, o.connections));
  if (o.baseline && wanted(o, "baseline")) services.push(await startService("baseline", {}, o.cpuProf, o.connections, o.baseline));

  // Steady state: each delegated agent's user channel makes its start-up REST catch-up (GET /data/orders
  // and /data/trades) once it is subscribed; those are not payload intents' calls, so the measures start
  // after them.
  const agents = services.reduce((a, s) => a + s.delegated.length, 0);
  const caughtUp = performance.now() + 15_000;
  while (((await venueRequests()).get("GET /data/trades") ?? 0) < agents) {
    if (performance.now() > caughtUp) {
      console.log(`  the user channels' start-up catch-ups did not all come within 15 s (${agents} expected)`);
      break;
    }
    await Bun.sleep(100);
  }
  const rows = new Map<string, { p50: number[]; p99: number[]; calls: number[]; payloadRps: number[]; delegatedRps: number[] }>();
  for (const s of services) rows.set(s.name, { p50: [], p99: [], calls: [], payloadRps: [], delegatedRps: [] });
  for (let r = 1; r <= o.rounds; r++) {
    for (const s of services) {
      const row = rows.get(s.name)!;
      const phase = (x: string) => o.phases.split(",").includes(x);
      await faults({ latency_ms: o.latency });
      const seq = phase("sequential") ? await sequential(s, o.sequential, o.warmup) : { p50: Number.NaN, p99: Number.NaN, callsPerIntent: Number.NaN };
      await faults({ latency_ms: 0 });
      const none = { rps: Number.NaN, svcUs: Number.NaN, simUs: Number.NaN, pgUs: Number.NaN, loadUs: Number.NaN, busy: Number.NaN, p50: Number.NaN, p99: Number.NaN };
      const p = phase("payload") ? await throughput(s, s.payload, o.duration) : none;
      const d = phase("delegated") ? await throughput(s, s.delegated, o.duration) : none;
      row.p50.push(seq.p50);
      row.p99.push(seq.p99);
      row.calls.push(seq.callsPerIntent);
      row.payloadRps.push(p.rps);
      row.delegatedRps.push(d.rps);
      console.log(
        `  round ${r} ${s.name}: payload p50 ${seq.p50.toFixed(1)} ms p99 ${seq.p99.toFixed(1)} ms at ${o.latency} ms, ${seq.callsPerIntent.toFixed(3)} venue calls/intent; ` +
          `payload ${p.rps.toFixed(0)}/s (${cpuText(p)}), delegated ${d.rps.toFixed(0)}/s (${cpuText(d)}) (${(d.rps / p.rps).toFixed(2)}×) at 0 ms`,
      );
    }
  }
  console.log(`\nmedians of ${o.rounds} rounds (${o.sequential} sequential intents at ${o.latency} ms venue latency; ${o.connections} connections × ${o.duration} s at 0 ms):`);
  console.log("| service | payload p50 | payload p99 | venue calls / payload intent | payload intents/s | delegated intents/s | delegated / payload |");
  console.log("|---|---|---|---|---|---|---|");
  for (const [name, row] of rows) {
    const p = median(row.payloadRps);
    const d = median(row.delegatedRps);
    console.log(
      `| ${name} | ${median(row.p50).toFixed(1)} ms | ${median(row.p99).toFixed(1)} ms | ${median(row.calls).toFixed(3)} | ${p.toFixed(0)} | ${d.toFixed(0)} | ${(d / p).toFixed(2)} |`,
    );
  }
  for (const s of services) await stopChild(s.child);
  if (o.db === "postgres") for (const s of services) await dropBenchDb(o.pg, `${o.dbPrefix}_${s.name}`);
  await stopChild(sim);
  await stopAll();
  removeTempDirs();
});
