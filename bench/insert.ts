/**
 * The group-commit insert alone: CPU per approved order written through OrderRepository (the orders
 * row, its decision kept on it, and its `order` event), in batches as the service makes them.
 * `bun run bench/insert.ts [--pglite] [--concurrency N] [--passes N] [--prefill N] [--sql "variant; …"]`
 *
 * On PostgreSQL it reads the CPU of the bench database's backends and the server's shared writers
 * from /proc (as bench:intent does); on PGlite the process's own CPU. `--sql` runs statements after
 * the migrations (to measure a schema variant, e.g. "drop index events_org_idx"); `--passes N` (5)
 * measured passes, after `--prefill N` (2,000) orders of warm-up (more to measure a larger table); `--concurrency`
 * writers at once (16: batches of about 16, as bench:intent's 32 connections make). Prints the
 * minimum and median of the passes of 8,000 orders, and each pass in order. `--ab-fence`: the orders
 * of 16 agents, each pass twice in alternation, unfenced and fenced on the agents' leases (issue 23,
 * agent_lease_fence): the fence's cost per order, A/B in one process on the same stretch of machine.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { openDatabase } from "../src/db/database.ts";
import { OrderRepository } from "../src/db/order-repository.ts";
import { toOrderModel } from "../src/modules/orders/order-view.ts";
import { postgresCpuSeconds } from "./support.ts";

const args = process.argv.slice(2);
const opt = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const pglite = args.includes("--pglite");
const concurrency = Number(opt("--concurrency") ?? 16);
const variant = opt("--sql") ?? "";
/** Measured passes of 8,000 orders, and orders written before them (warm-up, or a large table). */
const passes = Number(opt("--passes") ?? 5);
const prefill = Number(opt("--prefill") ?? 2000);
const PG = "postgres://postgres@127.0.0.1:5432";
const DB = opt("--db") ?? "bench_insert";
const abFence = args.includes("--ab-fence");

let dir: string | null = null;
let admin: ReturnType<typeof postgres> | null = null;
if (pglite) dir = mkdtempSync(join(tmpdir(), "bench-insert-"));
else {
  admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${DB}`);
  await admin.unsafe(`create database ${DB}`);
}
const database = await openDatabase(dir ? { kind: "pglite", dataDir: dir } : { kind: "postgres", url: `${PG}/${DB}` });
for (const q of variant.split(";").filter((x) => x.trim())) await database.db.execute(sql.raw(q));
await database.db.execute(sql.raw(`insert into orgs (id, name) values ('org_bench', 'bench')`));
await database.db.execute(sql.raw(`insert into agents (id, org_id, wallet_address, signer_address, limits) values ('agt_bench', 'org_bench', '0x1', '0x1', '{}')`));
let batches = 0;
// The order events the service writes (the API's order view), as src/app.ts builds the repository.
const plainRepo = new OrderRepository(database.db, { maxInFlight: 1, run: database.run, onBatch: () => batches++, orderEvent: (row) => ({ order: toOrderModel(row) }) });
let repo = plainRepo;
// --ab-fence: 16 agents, each with its lease (taken as the service takes one), and their fenced views.
const AGENTS = abFence ? 16 : 1;
const agentIds = Array.from({ length: AGENTS }, (_, i) => (abFence ? `agt_bench${i}` : "agt_bench"));
const fencedRepos: OrderRepository[] = [];
let leases: import("../src/db/agent-leases.ts").DbLeases | null = null;
if (abFence) {
  const { DbLeases } = await import("../src/db/agent-leases.ts");
  leases = new DbLeases(database, { instanceId: "bench", ttlMs: 60_000, renewEveryMs: 20_000, log: { info: () => {}, warn: () => {} } });
  for (const id of agentIds) fencedRepos.push(plainRepo.fenced((await leases.acquire(id, { waitMs: 0, ask: false }))!));
}
let fenced = false;

/** CPU seconds of the bench database's backends and the server's shared writers (PostgreSQL), or of this process (PGlite). */
function cpuSeconds(): number {
  if (pglite) {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  }
  return postgresCpuSeconds(DB);
}

// An order as the intent path builds it (a V2 order's typed data, its history and approving intent).
const tokenId = "71321045679252212594626385532706912750332728571942532289631379312455583992563";
const typedData = {
  domain: { name: "Polymarket CTF Exchange", version: "2", chainId: 137, verifyingContract: "0xE111180000d2663C0091e4f400237545B87B996B" },
  primaryType: "Order" as const,
  message: {
    salt: "123456789012345",
    maker: "0x000000000000000000000000000000000000dEaD",
    signer: "0x000000000000000000000000000000000000dEaD",
    tokenId,
    makerAmount: "5000000",
    takerAmount: "9610000",
    side: 0,
    signatureType: 0,
    timestamp: "1732400000000",
    metadata: `0x${"00".repeat(32)}`,
    builder: `0x${"ab".repeat(32)}`,
  },
};
let n = 0;
async function writeOne(): Promise<void> {
  const k = n % AGENTS;
  const id = `ord_${(n++).toString(36).padStart(20, "0")}`;
  const at = new Date();
  const agentId = agentIds[k];
  await (fenced ? fencedRepos[k] : repo).insert(
    {
      id,
      orgId: "org_bench",
      agentId,
      mode: "payload",
      marketId: tokenId,
      conditionId: "0xcondition",
      side: "buy",
      sizeUnits: 5_000_000n,
      price: "0.52",
      notionalUnits: 5_000_000n,
      orderType: "GTC",
      expiration: "0",
      status: "awaiting_signature",
      orderHash: `0x${"12".repeat(32)}`,
      typedData: typedData as never,
      signatureDeadline: new Date(at.getTime() + 300_000),
      approvalDeadline: null,
      clientOrderId: null,
      tradingDay: at.toISOString().slice(0, 10),
      history: [{ status: "awaiting_signature", at: at.toISOString(), reason: "approved by the risk engine" }],
      createdAt: at,
      updatedAt: at,
    },
    { id: `dec_${id}`, orgId: "org_bench", agentId, approved: true, intent: { market_id: tokenId, side: "buy", size_usdc: 5, price: 0.52, agent_id: "agt_bench" }, failures: [], checks: [], orderId: id, createdAt: at },
  );
}
async function pass(total: number): Promise<void> {
  let started = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) {
        started++;
        await writeOne();
      }
    }),
  );
}

await pass(prefill);
if (abFence) {
  const cpu = { plain: [] as number[], fenced: [] as number[] };
  const client = { plain: [] as number[], fenced: [] as number[] };
  for (let r = 0; r < passes; r++) {
    for (const which of r % 2 ? (["fenced", "plain"] as const) : (["plain", "fenced"] as const)) {
      fenced = which === "fenced";
      const c0 = cpuSeconds();
      const p0 = process.cpuUsage();
      await pass(8000);
      cpu[which].push(((cpuSeconds() - c0) * 1e6) / 8000);
      const p = process.cpuUsage(p0);
      client[which].push((p.user + p.system) / 8000);
    }
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const what = pglite ? "PGlite, process CPU" : "PostgreSQL CPU";
  for (const which of ["plain", "fenced"] as const) {
    console.log(
      `${which.padEnd(6)} ${what} per order: median ${med(cpu[which]).toFixed(1)} µs (passes ${cpu[which].map((x) => x.toFixed(1)).join(", ")})` +
        (pglite ? "" : `; this process (the service's side) median ${med(client[which]).toFixed(1)} µs`),
    );
  }
  await leases?.stop();
  await database.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (admin) {
    await admin.unsafe(`drop database if exists ${DB}`);
    await admin.end();
  }
  process.exit(0);
}
const perOrder: number[] = [];
const clientPerOrder: number[] = [];
const b0 = batches;
for (let r = 0; r < passes; r++) {
  const c0 = cpuSeconds();
  const p0 = process.cpuUsage();
  await pass(8000);
  perOrder.push(((cpuSeconds() - c0) * 1e6) / 8000);
  const p = process.cpuUsage(p0);
  clientPerOrder.push((p.user + p.system) / 8000);
}
const inOrder = perOrder.map((x) => x.toFixed(1)).join(", ");
perOrder.sort((a, b) => a - b);
clientPerOrder.sort((a, b) => a - b);
const what = pglite ? "PGlite, process CPU" : "PostgreSQL CPU";
console.log(
  `${what} per order: min ${perOrder[0].toFixed(1)} µs, median ${perOrder[perOrder.length >> 1].toFixed(1)} µs (passes in order ${inOrder}); mean batch ${((passes * 8000) / (batches - b0)).toFixed(1)}${variant ? `; variant: ${variant}` : ""}`,
);
if (!pglite) console.log(`this process (the repository and Bun's SQL client) per order: min ${clientPerOrder[0].toFixed(1)} µs, median ${clientPerOrder[clientPerOrder.length >> 1].toFixed(1)} µs`);
await database.close();
if (dir) rmSync(dir, { recursive: true, force: true });
if (admin) {
  await admin.unsafe(`drop database if exists ${DB}`);
  await admin.end();
}
process.exit(0);
