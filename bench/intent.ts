/**
 * Intent throughput benchmark: `bun run bench:intent`.
 *
 * Measures approved payload-mode intents (POST /v1/orders/intent → 201) per
 * second, their p50/p99 latency, and the CPU time each costs (read from /proc: the
 * service process's utime+stime, and the PostgreSQL backends of the bench database
 * plus its shared writers, per answered request, against the bare route's), with the service in its own process
 * (`bun run src/main.ts`) on PGlite and on PostgreSQL, against a bare Elysia
 * route with the same body schema (bench/bare-server.ts). The load comes from a
 * second process (bench/load.ts): `--connections` keep-alive connections, each
 * one posting for its own agent (one agent per connection), `--warmup` seconds
 * of warm-up and `--duration` seconds measured. Rounds interleave the three
 * targets; the table shows the medians. Signature checks per second for
 * submit-signed (verifyOrderSignature over the stored order hash, as
 * order-service.ts does; bench/signature.ts) are measured first, before any
 * service starts.
 *
 * Every approved order is durably committed before its 201 (group commit); the
 * PostgreSQL run checks afterwards that the database holds at least as many
 * orders as the service answered 201 for.
 *
 * Options: --rounds N (3) --duration S (10) --warmup S (2) --connections N (32)
 *          --only pglite|postgres|bare (repeatable) --pg postgres://postgres@127.0.0.1:5432 --db NAME (bench_intent)
 *          --bare-wait MS (3; 0 leaves it out): also runs the bare route answering each request at the next
 *          tick of one shared MS interval (a group commit's shape without its work), as a reference row
 *          --no-signature --cpu-prof DIR (runs the services under `bun --cpu-prof`, profiles into DIR)
 *          --baseline DIR (also runs the services from another checkout, e.g. `git archive` of an older
 *          commit with node_modules linked, as targets "pglite-base" and "postgres-base" interleaved in
 *          the same rounds: an A/B on the same stretch of the machine)
 * A measurement: it exits 0 whether or not the targets are met (non-zero only
 * when the benchmark itself could not run).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import type { LoadConfig, LoadResult } from "./load.ts";
import { benchSignatureChecks } from "./signature.ts";
import {
  BENCH_LIMITS,
  call,
  children,
  createBenchDb,
  type DatabaseKind,
  DEFAULT_PG,
  dropBenchDb,
  expectStatus,
  freePort,
  median,
  parseOptions,
  pickIntent,
  postgresCpuSeconds,
  ROOT,
  removeTempDirs,
  runMain,
  spawnLogged,
  startServiceProcess,
  stopAll,
  stopChild,
  tempDir,
  tryCreateBenchDb,
  waitHealthy,
  wanted,
} from "./support.ts";

/** The bench database's name (`--db`), so two engineers' runs on one server do not drop each other's. */
let BENCH_DB = "bench_intent";

// ------------------------------------------------------------------ options

function parseArgs(argv: string[]) {
  const opts = {
    rounds: 3,
    duration: 10,
    warmup: 2,
    connections: 32,
    only: [] as string[],
    pg: DEFAULT_PG,
    signature: true,
    cpuProf: null as string | null,
    baseline: null as string | null,
    bareWait: 3,
  };
  return parseOptions(argv, opts, {
    "--duration": (v) => (opts.duration = Number(v())),
    "--warmup": (v) => (opts.warmup = Number(v())),
    "--connections": (v) => (opts.connections = Number(v())),
    "--db": (v) => (BENCH_DB = v()),
    "--no-signature": () => (opts.signature = false),
    "--cpu-prof": (v) => (opts.cpuProf = resolve(v())),
    "--baseline": (v) => (opts.baseline = resolve(v())),
    "--bare-wait": (v) => (opts.bareWait = Number(v())),
  });
}

// ------------------------------------------------------------------ processes

interface Target {
  name: string;
  kind: "bare" | DatabaseKind;
  /** The PostgreSQL database (kind postgres). */
  db?: string;
  base: string;
  child: Subprocess;
  load: Omit<LoadConfig, "connections" | "warmupS" | "durationS">;
}

async function startBare(waitMs = 0): Promise<Target> {
  const port = await freePort();
  const name = waitMs > 0 ? "bare-wait" : "bare";
  const child = spawnLogged(["bun", "run", "bench/bare-server.ts"], { PORT: String(port), BARE_WAIT_MS: String(waitMs) }, name);
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base, child, "bare server");
  return { name, kind: "bare", base, child, load: { url: `${base}/v1/orders/intent`, headers: { "content-type": "application/json" }, bodies: [] } };
}

async function startService(
  kind: DatabaseKind,
  pgUrl: string,
  connections: number,
  cpuProf: string | null,
  from: { root: string; db: string; name: string } = { root: ROOT, db: BENCH_DB, name: kind },
): Promise<Target & { agents: number }> {
  const prof = cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${cpuProf}`, `--cpu-prof-name=service-${kind}.cpuprofile`] : [];
  const { base, child, key } = await startServiceProcess({
    kind,
    databaseUrl: `${pgUrl}/${from.db}`,
    name: from.name,
    root: from.root,
    bunArgs: prof,
    orgName: `bench ${kind}`,
  });
  const auth = { "x-api-key": key };
  const intent = pickIntent();
  const bodies: string[] = [];
  for (let i = 0; i < connections; i++) {
    const wallet = `0x${(i + 1).toString(16).padStart(40, "0")}`;
    const agent = await call(base, "POST", "/v1/agents", auth, { name: `bench ${i}`, wallet_address: wallet });
    expectStatus(agent, 201, "POST /v1/agents");
    expectStatus(await call(base, "PATCH", `/v1/agents/${agent.body.id}/limits`, auth, BENCH_LIMITS), 200, "PATCH limits");
    const body = JSON.stringify({ market_id: intent.market_id, side: intent.side, size_usdc: intent.size_usdc, price: intent.price, agent_id: agent.body.id });
    const first = await call(base, "POST", "/v1/orders/intent", auth, JSON.parse(body));
    if (first.status !== 201 || first.body?.risk?.approved !== true) throw new Error(`the first intent answered ${first.status}, not 201: ${first.text}`);
    bodies.push(body);
  }
  return {
    name: from.name,
    kind,
    db: from.db,
    base,
    child,
    agents: connections,
    load: { url: `${base}/v1/orders/intent`, headers: { "content-type": "application/json", "x-api-key": key }, bodies },
  };
}

/** CPU seconds a process has used so far (Linux /proc), or NaN. */
function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return Number.NaN;
  }
}

/**
 * Busy, stolen and total CPU seconds of the whole machine so far (Linux /proc/stat), or NaN. Steal is
 * time the hypervisor ran something else while a vCPU wanted to run: it is counted as busy here, and
 * rounds with much of it measure dearer for every process (docs/benchmarks.md).
 */
function machineCpuSeconds(): { busy: number; steal: number; total: number } {
  try {
    const line = (readFileSync("/proc/stat", "utf8") as string).split("\n")[0];
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.reduce((a, b) => a + b, 0);
    const idle = v[3] + (v[4] ?? 0);
    return { busy: (total - idle) / 100, steal: (v[7] ?? 0) / 100, total: total / 100 };
  } catch {
    return { busy: Number.NaN, steal: Number.NaN, total: Number.NaN };
  }
}

interface CpuShare {
  /** CPU seconds per wall second (1 = one full core) over the whole load run. */
  target: number;
  load: number;
  machine: number;
  /** Share of the machine's CPU time stolen by the hypervisor during the run (0 to 1). */
  steal: number;
  /** CPU microseconds per answered request, warm-up included (CPU is read over the whole run). */
  targetUsPerOp: number;
  /** PostgreSQL's CPU microseconds per answered request (the PostgreSQL target only). */
  postgresUsPerOp: number;
}

/** Sum and count of the service's db_batch_size histogram (group-commit batches), or null. */
async function batchStats(target: Target): Promise<{ sum: number; count: number } | null> {
  if (target.kind === "bare") return null;
  try {
    const text = await (await fetch(`${target.base}/metrics`)).text();
    const sum = Number(/^db_batch_size_sum(?:\{\})? (\S+)$/m.exec(text)?.[1]);
    const count = Number(/^db_batch_size_count(?:\{\})? (\S+)$/m.exec(text)?.[1]);
    return Number.isFinite(sum) && Number.isFinite(count) ? { sum, count } : null;
  } catch {
    return null;
  }
}

async function runLoadProcess(
  target: Target,
  o: { connections: number; warmup: number; duration: number },
  bareBody: string,
): Promise<LoadResult & { cpu: CpuShare; meanBatch: number | null }> {
  const cfg: LoadConfig = {
    ...target.load,
    bodies: target.load.bodies?.length ? target.load.bodies : [bareBody],
    connections: o.connections,
    warmupS: o.warmup,
    durationS: o.duration,
  };
  const file = join(tempDir("bench-load-"), "load.json");
  writeFileSync(file, JSON.stringify(cfg));
  const batches0 = await batchStats(target);
  const wall0 = performance.now();
  const target0 = processCpuSeconds(target.child.pid);
  const pg0 = target.kind === "postgres" ? postgresCpuSeconds(target.db!) : Number.NaN;
  const machine0 = machineCpuSeconds();
  const proc = Bun.spawn(["bun", "run", "bench/load.ts", file], { cwd: ROOT, stdout: "pipe", stderr: "inherit" });
  children.add(proc);
  const out = await new Response(proc.stdout).text();
  const code = await proc.exited;
  children.delete(proc);
  const wall = (performance.now() - wall0) / 1000;
  const machine1 = machineCpuSeconds();
  const targetCpu = processCpuSeconds(target.child.pid) - target0;
  const pgCpu = target.kind === "postgres" ? postgresCpuSeconds(target.db!) - pg0 : Number.NaN;
  const usage = proc.resourceUsage();
  const loadCpu = usage ? Number(usage.cpuTime.total) / 1e6 : Number.NaN;
  if (code !== 0) throw new Error(`load generator exited with ${code}`);
  const result = JSON.parse(out.trim().split("\n").pop()!) as LoadResult;
  const answered = result.total_ok + result.non2xx;
  const cpu: CpuShare = {
    target: targetCpu / wall,
    load: loadCpu / wall,
    machine: ((machine1.busy - machine0.busy) / (machine1.total - machine0.total)) * cpus().length,
    steal: (machine1.steal - machine0.steal) / (machine1.total - machine0.total),
    targetUsPerOp: (targetCpu * 1e6) / answered,
    postgresUsPerOp: (pgCpu * 1e6) / answered,
  };
  const batches1 = await batchStats(target);
  const meanBatch = batches0 && batches1 && batches1.count > batches0.count ? (batches1.sum - batches0.sum) / (batches1.count - batches0.count) : null;
  return { ...result, cpu, meanBatch };
}

// ------------------------------------------------------------------ PostgreSQL bench database

async function countBenchOrders(pgUrl: string): Promise<{ orders: number; decisions: number; settings: Record<string, string> }> {
  const { default: postgres } = await import("postgres");
  const sql = postgres(`${pgUrl}/${BENCH_DB}`, { max: 1, onnotice: () => {} });
  try {
    const [o] = await sql`select count(*)::int as n from orders`;
    // Approvals are kept on their order rows (orders.decision_intent); older ones are risk_decisions rows.
    const [d] = await sql`select ((select count(*) from risk_decisions where approved) + (select count(*) from orders where decision_intent is not null))::int as n`;
    const rows = await sql`select name, setting from pg_settings where name in ('synchronous_commit', 'fsync', 'wal_sync_method')`;
    const unlogged = await sql`select count(*)::int as n from pg_class where relpersistence = 'u' and relkind = 'r'`;
    const settings: Record<string, string> = Object.fromEntries(rows.map((r: any) => [r.name, r.setting]));
    settings.unlogged_tables = String(unlogged[0].n);
    return { orders: o.n, decisions: d.n, settings };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

// ------------------------------------------------------------------ report

const fmt = (x: number, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : "-");

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const want = (n: string) => wanted(o, n);
  const intent = pickIntent();
  const bareBody = JSON.stringify({ market_id: intent.market_id, side: intent.side, size_usdc: intent.size_usdc, price: intent.price, agent_id: "agt_00000000000000000000" });

  const cpu = cpus();
  console.log(`intent benchmark: ${o.connections} connections, ${o.warmup} s warm-up + ${o.duration} s measured, ${o.rounds} rounds, medians reported`);
  console.log(
    `machine: ${cpu.length} cores (${cpu[0]?.model?.trim() ?? "unknown"}), ${Math.round(totalmem() / 2 ** 30)} GiB; bun ${Bun.version}; the load generator runs on the same machine`,
  );
  console.log(`order: ${intent.side} ${intent.size_usdc} USDC at ${intent.price} on "${intent.question}" (token ${intent.market_id.slice(0, 12)}…), one agent per connection`);

  const targets: Target[] = [];
  let pgAvailable = false;
  const results: Record<string, Awaited<ReturnType<typeof runLoadProcess>>[]> = { bare: [], "bare-wait": [], pglite: [], postgres: [], "pglite-base": [], "postgres-base": [] };
  let baseDb = false;
  let totalOkPg = 0;
  let setupOkPg = 0;
  // Signature checks first, on a quiet machine: after the runs PostgreSQL is still busy for a while
  // (checkpoint, autovacuum of the rows just written), which took up to half of this figure.
  let sig: Awaited<ReturnType<typeof benchSignatureChecks>> | null = null;
  if (o.signature) sig = await benchSignatureChecks(5, 3000);
  try {
    if (want("bare")) targets.push(await startBare());
    if (want("bare") && o.bareWait > 0) targets.push(await startBare(o.bareWait));
    if (want("pglite")) targets.push(await startService("pglite", o.pg, o.connections, o.cpuProf));
    if (want("postgres")) {
      pgAvailable = await tryCreateBenchDb(o.pg, BENCH_DB);
      if (pgAvailable) {
        targets.push(await startService("postgres", o.pg, o.connections, o.cpuProf));
        setupOkPg = o.connections;
      }
    }
    if (o.baseline) {
      if (want("pglite")) targets.push(await startService("pglite", o.pg, o.connections, null, { root: o.baseline, db: "", name: "pglite-base" }));
      if (want("postgres") && pgAvailable) {
        await createBenchDb(o.pg, `${BENCH_DB}_base`);
        baseDb = true;
        targets.push(await startService("postgres", o.pg, o.connections, null, { root: o.baseline, db: `${BENCH_DB}_base`, name: "postgres-base" }));
      }
    }

    for (let r = 0; r < o.rounds; r++) {
      for (const t of targets) {
        const res = await runLoadProcess(t, o, bareBody);
        results[t.name].push(res);
        if (t.name === "postgres") totalOkPg += res.total_ok;
        console.log(
          `round ${r + 1} ${t.name.padEnd(13)} rps ${fmt(res.rps).padStart(6)}  p50 ${fmt(res.p50_ms, 2)} ms  p99 ${fmt(res.p99_ms, 2)} ms  max ${fmt(res.max_ms, 1)} ms  non-2xx ${res.non2xx}  errors ${res.errors}  cpu: server ${fmt(res.cpu.targetUsPerOp, 1)} µs/op${t.kind === "postgres" ? `, postgres ${fmt(res.cpu.postgresUsPerOp, 1)} µs/op` : ""}; cores: server ${fmt(res.cpu.target, 2)}, load ${fmt(res.cpu.load, 2)}, machine ${fmt(res.cpu.machine, 2)}, steal ${fmt(res.cpu.steal * 100, 1)} %${res.meanBatch !== null ? `  mean batch ${fmt(res.meanBatch, 1)}` : ""}${res.first_error ? `  (${res.first_error})` : ""}`,
        );
      }
    }

    let durability: string | null = null;
    if (pgAvailable) {
      const pg = targets.find((t) => t.name === "postgres")!;
      await stopChild(pg.child);
      const c = await countBenchOrders(o.pg);
      const answered = totalOkPg + setupOkPg;
      durability =
        `PostgreSQL durability: ${answered} intents answered 201, ${c.orders} orders and ${c.decisions} approving decisions in the database ` +
        `(${c.orders >= answered && c.decisions >= answered ? "every answered order is there" : "MISSING ORDERS"}); ` +
        `synchronous_commit=${c.settings.synchronous_commit}, fsync=${c.settings.fsync}, unlogged tables: ${c.settings.unlogged_tables}`;
    }
    for (const t of targets) await stopChild(t.child);

    // ---------------------------------------------------------------- table
    const med = (name: string, f: (r: LoadResult) => number) => median(results[name].map(f));
    const bare = med("bare", (r) => r.rps);
    const bareCpu = med("bare", (r) => (r as any).cpu.targetUsPerOp);
    const rows: string[][] = [["target", "rps", "p50 ms", "p99 ms", "ratio to bare", "server CPU µs/op", "× bare", "PostgreSQL CPU µs/op", "× bare", "non-2xx"]];
    for (const name of ["bare", "bare-wait", "pglite", "pglite-base", "postgres", "postgres-base"]) {
      if (!results[name].length) continue;
      const rps = med(name, (r) => r.rps);
      rows.push([
        name === "bare" ? "bare Elysia route" : name === "bare-wait" ? `bare route, answered after a ${o.bareWait} ms shared wait` : `intents on ${name.startsWith("pglite") ? "PGlite" : "PostgreSQL"}${name.endsWith("-base") ? " (baseline)" : ""}`,
        fmt(rps),
        fmt(med(name, (r) => r.p50_ms), 2),
        fmt(med(name, (r) => r.p99_ms), 2),
        name === "bare" ? "1" : fmt(rps / bare, 3),
        fmt(med(name, (r) => (r as any).cpu.targetUsPerOp), 1),
        fmt(med(name, (r) => (r as any).cpu.targetUsPerOp) / bareCpu, 2),
        name.startsWith("postgres") ? fmt(med(name, (r) => (r as any).cpu.postgresUsPerOp), 1) : "",
        name.startsWith("postgres") ? fmt(med(name, (r) => (r as any).cpu.postgresUsPerOp) / bareCpu, 2) : "",
        String(results[name].reduce((n, r) => n + r.non2xx + r.errors, 0)),
      ]);
    }
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    console.log("");
    console.log(`medians of ${o.rounds} rounds, ${o.connections} connections (2-core machine: service, load generator and database share it):`);
    for (const [i, r] of rows.entries()) {
      console.log(r.map((c, j) => (j === 0 ? c.padEnd(widths[j]) : c.padStart(widths[j]))).join("  "));
      if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
    }
    if (sig) {
      console.log("");
      // submit-signed checks the signature over the order_hash stored when the intent was approved
      // (order-service.ts): verifyOrderSignature over a precomputed digest is its whole per-order work.
      console.log(`submit-signed signature checks (verifyOrderSignature over the stored order hash, one core): ${sig.verifyPerSecond}/s`);
      console.log(`  with the hash computed again as well: ${sig.hashAndVerifyPerSecond}/s; viem recoverTypedDataAddress baseline: ${sig.viemRecoverPerSecond}/s`);
      console.log(`  deposit wallet (type 3, ERC-7739 wrapper checked and recovered): ${sig.depositWalletPerSecond}/s`);
    }
    if (durability) console.log(durability);

    // ---------------------------------------------------------------- targets
    console.log("");
    console.log("targets:");
    const line = (ok: boolean | null, text: string) => console.log(`  [${ok === null ? "n/a " : ok ? "met " : "MISS"}] ${text}`);
    const cpuOf = (name: string, f: "targetUsPerOp" | "postgresUsPerOp") => med(name, (r) => (r as any).cpu[f]) / bareCpu;
    const have = (name: string) => results[name].length > 0 && results.bare.length > 0;
    line(have("postgres") ? cpuOf("postgres", "targetUsPerOp") <= 4 : null, `service CPU per durable intent on PostgreSQL <= 4x a bare POST's (${fmt(cpuOf("postgres", "targetUsPerOp"), 2)}x)`);
    line(have("postgres") ? cpuOf("postgres", "postgresUsPerOp") <= 2 : null, `PostgreSQL's own CPU per intent <= 2x a bare POST's (${fmt(cpuOf("postgres", "postgresUsPerOp"), 2)}x)`);
    line(have("pglite") ? cpuOf("pglite", "targetUsPerOp") <= 8 : null, `service + embedded database CPU per intent on PGlite <= 8x a bare POST's (${fmt(cpuOf("pglite", "targetUsPerOp"), 2)}x)`);
    line(sig ? sig.verifyPerSecond >= 10_000 : null, `submit-signed signature checks >= 10,000/s on one core (${sig ? sig.verifyPerSecond : "-"}/s)`);
    const pgRps = med("postgres", (r) => r.rps);
    if (results["bare-wait"].length && results.postgres.length) {
      const waitCpu = med("bare-wait", (r) => (r as any).cpu.targetUsPerOp);
      console.log(
        `  (for reference: the bare route answering after a ${o.bareWait} ms shared wait costs ${fmt(waitCpu / bareCpu, 2)}x the plain one; ` +
          `against it the service on PostgreSQL is ${fmt(med("postgres", (r) => (r as any).cpu.targetUsPerOp) / waitCpu, 2)}x, PostgreSQL ${fmt(med("postgres", (r) => (r as any).cpu.postgresUsPerOp) / waitCpu, 2)}x, PGlite ${fmt(med("pglite", (r) => (r as any).cpu.targetUsPerOp) / waitCpu, 2)}x)`,
      );
    }
    console.log(`  (for reference: throughput ratio to the bare route on PostgreSQL ${fmt(pgRps / bare, 3)}; p99 ${fmt(med("postgres", (r) => r.p99_ms), 2)} ms on PostgreSQL, ${fmt(med("pglite", (r) => r.p99_ms), 2)} ms on PGlite)`);
    const failedAnswers = ["pglite", "postgres"].reduce((n, k) => n + results[k].reduce((m, r) => m + r.non2xx + r.errors, 0), 0);
    line(failedAnswers === 0, `every measured intent answered 201 (${failedAnswers} did not)`);
  } finally {
    await stopAll();
    if (pgAvailable) await dropBenchDb(o.pg, BENCH_DB);
    if (baseDb) await dropBenchDb(o.pg, `${BENCH_DB}_base`);
    removeTempDirs();
  }
}

await runMain(main);
