/**
 * PostgreSQL's CPU per intent of the order repository's statements, variants side by side:
 * `bun bench/pg-statements.ts --set NAME [--rounds N] [--batch N | --vary] [--overlap | --payload]`.
 *
 * Each variant (a set, below) gets a database of its own (bench_pgcpu_ab<i>: 16 agents with sealed
 * credentials and leases, 5,000 payload orders first) and an OrderRepository fenced per agent, as the
 * service's; rounds alternate between the variants, so that a busy machine weighs on each alike. The CPU
 * is the database's backends' (/proc/<pid>/schedstat), per intent. A round is, by default, a batch of
 * delegated orders (`--batch`, or 1–9 with `--vary`) through their insert, their credential reads and
 * their placements, each step measured alone; with `--overlap` the new orders, their reads and the
 * previous round's placements wait at the same moment (as at load), measured together; with `--payload`
 * a batch of payload orders is inserted. A variant's `ddl` runs after the migrations.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { SQL } from "bun";
import { openDatabase, type Database } from "../src/db/database.ts";
import { type NewOrderRow, OrderRepository } from "../src/db/order-repository.ts";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1]! : dflt;
};
const rounds = Number(arg("--rounds", "400"));
const batchSize = Number(arg("--batch", "5"));
const pg = "postgres://postgres@127.0.0.1:5432/postgres";
const admin = new SQL(pg);

export interface Variant {
  name: string;
  ddl?: string;
  /** Replaces Database.query's text (the placement statement), given the original text. */
  rewrite?: (text: string) => string;
  readOne?: boolean;
  hotConn?: Record<string, string>;
  fold?: boolean;
  unfenced?: boolean;
}

const orderEvent = (row: any) => ({
  order: {
    id: row.id, agent_id: row.agentId, mode: row.mode, market_id: row.marketId, side: row.side, size_usdc: 5, price: 0.52, order_type: row.orderType,
    status: row.status, order_hash: row.orderHash, venue_order_id: row.venueOrderId, filled_usdc: Number(row.filledUnits) / 1e6, flagged_for_review: row.flaggedForReview,
    client_order_id: row.clientOrderId, created_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString(), history: row.history,
  },
});

let n = 0;
const stats = { placeStatements: 0, placedRows: 0 };
const order = (orgId: string, agentId: string): NewOrderRow => {
  const at = new Date();
  const id = `ord_${(++n).toString(36).padStart(20, "0")}`;
  return {
    id, orgId, agentId, mode: "delegated",
    marketId: "71321045679252212594626385532706912750332728571942532289631379312455583992563",
    conditionId: "0x" + "5f".repeat(32), side: "buy", sizeUnits: 5_000_000n, price: "0.52", notionalUnits: 2_600_000n, orderType: "GTC", expiration: "0",
    status: "submitting", orderHash: "0x" + randomBytes(32).toString("hex"),
    typedData: {
      domain: { name: "Polymarket CTF Exchange", version: "2", chainId: 137, verifyingContract: "0x4bFb41d5B3570DeFd03C39a9A4D8dE6Bd8B8982E" },
      primaryType: "Order",
      message: { salt: String(Math.floor(Math.random() * 1e15)), maker: "0x" + "ab".repeat(20), signer: "0x" + "cd".repeat(20), taker: "0x0000000000000000000000000000000000000000",
        tokenId: "71321045679252212594626385532706912750332728571942532289631379312455583992563", makerAmount: "2600000", takerAmount: "5000000", expiration: "0", nonce: "0", feeRateBps: "0", side: 0, signatureType: 0 } as never,
    },
    signatureDeadline: null, venueOrderId: null, clientOrderId: null, decisionId: `dec_${id}`,
    decisionIntent: { market_id: "71321045679252212594626385532706912750332728571942532289631379312455583992563", side: "buy", size_usdc: 2.6, price: 0.52, order_type: "GTC" },
    tradingDay: at.toISOString().slice(0, 10), history: [{ status: "submitting", at: at.toISOString(), reason: "approved by the risk engine" }], createdAt: at, updatedAt: at,
  };
};

interface Setup { v: Variant; database: Database; repo: OrderRepository; fenced: OrderRepository[]; agents: string[]; orgId: string; pids: number[]; datname: string; spent: Record<string, number[]> }

async function setup(v: Variant, i: number): Promise<Setup> {
  const datname = `bench_pgcpu_ab${i}`;
  await admin.unsafe(`drop database if exists ${datname} with (force)`);
  await admin.unsafe(`create database ${datname}`);
  const url = pg.replace(/\/[^/]*$/, `/${datname}`);
  const database = await openDatabase({ kind: "postgres", url });
  const sql = new SQL(url);
  if (v.ddl) await sql.unsafe(v.ddl);
  const orgId = "org_micro";
  await sql`insert into orgs (id, name) values (${orgId}, 'micro')`;
  const agents: string[] = [];
  for (let a = 0; a < 16; a++) {
    const id = `agt_micro${a.toString().padStart(12, "0")}`;
    agents.push(id);
    await sql`insert into agents (id, org_id, mode, wallet_address, signer_address, limits) values (${id}, ${orgId}, 'delegated', ${"0x" + "ab".repeat(20)}, ${"0x" + "cd".repeat(20)}, ${{}}::jsonb)`;
    await sql`insert into credentials (agent_id, ciphertext, scopes, key_hint) values (${id}, ${randomBytes(180)}, ${["order:place"]}::jsonb, 'abcd')`;
    await sql`insert into agent_leases (agent_id, owner, epoch, expires_at) values (${id}, 'micro', 1, now() + interval '1 day')`;
  }
  await sql.close();
  if (v.hotConn) {
    const hot = new SQL(url, { max: 4, prepare: true, connection: v.hotConn });
    (database as any).run = async (text: string, params: any[]) => { await hot.unsafe(text, params); };
    (database as any).query = async (text: string, params: any[]) => (await hot.unsafe(text, params).values());
  }
  const query: Database["query"] = async (text, params, opts) => {
    const rows = await database.query(v.rewrite ? v.rewrite(text) : text, params, opts);
    if (text.startsWith("with u as")) { stats.placeStatements++; stats.placedRows += rows.length; }
    return rows;
  };
  const repo = new OrderRepository(database.db, { maxInFlight: 1, run: database.run, query, orderEvent });
  const fenced = agents.map((agentId) => (v.unfenced ? repo : repo.fenced({ agentId, epoch: 1 } as never)));
  return { v, database, repo, fenced, agents, orgId, pids: [], datname, spent: { insert: [], read: [], place: [] } };
}

const cpuNs = (pids: number[]) => {
  let s = 0;
  for (const p of pids) {
    try { s += Number(readFileSync(`/proc/${p}/schedstat`, "utf8").split(" ")[0]); } catch {}
  }
  return s;
};

const prevOrders = new Map<Setup, { os: NewOrderRow[]; who: number[] }>();
async function round(s: Setup, r: number, measure: boolean) {
  if (process.argv.includes("--overlap")) return overlapRound(s, r, measure);
  if (process.argv.includes("--payload")) {
    const batch = process.argv.includes("--vary") ? 1 + ((r * 7) % 9) : batchSize;
    const who = Array.from({ length: batch }, (_, i) => (r * batch + i) % s.agents.length);
    const os = who.map((a) => ({ ...order(s.orgId, s.agents[a]!), status: "awaiting_signature" as const, mode: "payload" as const, signatureDeadline: new Date(Date.now() + 60_000) }));
    const t0 = cpuNs(s.pids);
    await Promise.all(os.map((o, i) => s.fenced[who[i]!]!.insert(o, { id: o.decisionId!, orgId: s.orgId, agentId: o.agentId, approved: true, intent: o.decisionIntent!, failures: [], checks: [], orderId: o.id, createdAt: o.createdAt! })));
    if (measure) { s.spent.insert!.push((cpuNs(s.pids) - t0) / batch / 1000); s.spent.read!.push(0); s.spent.place!.push(0); }
    return;
  }
  const batch = process.argv.includes("--vary") ? 1 + ((r * 7) % 9) : batchSize;
  const who = Array.from({ length: batch }, (_, i) => (r * batch + i) % s.agents.length);
  const os = who.map((a) => order(s.orgId, s.agents[a]!));
  const step = async (what: string, f: () => Promise<unknown>) => {
    const t0 = cpuNs(s.pids);
    await f();
    if (measure) s.spent[what]!.push((cpuNs(s.pids) - t0) / batch / 1000);
  };
  await step("insert", () => Promise.all(os.map((o, i) => s.fenced[who[i]!]!.insert(o, { id: o.decisionId!, orgId: s.orgId, agentId: o.agentId, approved: true, intent: o.decisionIntent!, failures: [], checks: [], orderId: o.id, createdAt: o.createdAt! }))));
  await step("read", () =>
    !s.v.readOne
      ? s.database.query("select agent_id, encode(ciphertext, 'hex') from credentials where agent_id = any($1::text[])", [`{${who.map((a) => s.agents[a]).join(",")}}`])
      : Promise.all(who.map((a) => s.database.query("select encode(ciphertext, 'hex') from credentials where agent_id = $1::text", [s.agents[a]!]))),
  );
  await step("place", () =>
    Promise.all(os.map((o, i) => s.fenced[who[i]!]!.transitionPlaced(o.id, "open", "placed at the venue", { venueOrderId: o.orderHash!, filledUnits: 0n }).then((row) => {
      if (!row || row.status !== "open") throw new Error("not placed");
    }))),
  );
}

async function overlapRound(s: Setup, r: number, measure: boolean) {
  const batch = process.argv.includes("--vary") ? 1 + ((r * 7) % 9) : batchSize;
  const who = Array.from({ length: batch }, (_, i) => (r * batch + i) % s.agents.length);
  const os = who.map((a) => order(s.orgId, s.agents[a]!));
  const prev = prevOrders.get(s);
  const t0 = cpuNs(s.pids);
  await Promise.all<unknown>([
    ...os.map((o, i) => s.fenced[who[i]!]!.insert(o, { id: o.decisionId!, orgId: s.orgId, agentId: o.agentId, approved: true, intent: o.decisionIntent!, failures: [], checks: [], orderId: o.id, createdAt: o.createdAt! })),
    ...(s.v.fold ? who.map((a) => s.repo.readSealed(s.agents[a]!)) : [s.database.query("select agent_id, encode(ciphertext, 'hex') from credentials where agent_id = any($1::text[])", [`{${who.map((a) => s.agents[a]).join(",")}}`])]),
    ...(prev ? prev.os.map((o, i) => s.fenced[prev.who[i]!]!.transitionPlaced(o.id, "open", "placed at the venue", { venueOrderId: o.orderHash!, filledUnits: 0n }).then((row) => {
      if (!row || row.status !== "open") throw new Error("not placed");
    })) : []),
  ]);
  if (measure) { s.spent.insert!.push((cpuNs(s.pids) - t0) / batch / 1000); s.spent.read!.push(0); s.spent.place!.push(0); }
  prevOrders.set(s, { os, who });
}

export async function ab(variants: Variant[]) {
  const setups: Setup[] = [];
  for (const [i, v] of variants.entries()) setups.push(await setup(v, i));
  const prefill = Number(arg("--prefill", "5000"));
  for (const s of setups) {
    for (let k = 0; k < prefill; k += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => {
        const o = { ...order(s.orgId, s.agents[j % 16]!), status: "awaiting_signature" as const, mode: "payload" as const, signatureDeadline: new Date(Date.now() + 60_000) };
        return s.repo.insert(o, { id: o.decisionId!, orgId: s.orgId, agentId: o.agentId, approved: true, intent: o.decisionIntent!, failures: [], checks: [], orderId: o.id, createdAt: o.createdAt! });
      }));
    }
  }
  for (let r = 0; r < 20; r++) for (const s of setups) await round(s, r, false);
  for (const s of setups) s.pids = (await admin`select pid from pg_stat_activity where datname = ${s.datname} and backend_type = 'client backend'`).map((x: { pid: number }) => x.pid);
  if (process.env.PIDS_FILE) { require("node:fs").writeFileSync(process.env.PIDS_FILE, setups.flatMap((s) => s.pids).join(",")); await Bun.sleep(1500); }
  for (let r = 20; r < rounds + 20; r++) for (const s of (r % 2 ? setups : [...setups].reverse())) await round(s, r, true);
  const med = (xs: number[]) => { const a = [...xs].sort((x, y) => x - y); return a[a.length >> 1]!; };
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  for (const s of setups) {
    const f = (k: string) => `${mean(s.spent[k]!).toFixed(0)}/${med(s.spent[k]!).toFixed(0)}`;
    const all = s.spent.insert!.map((x, i) => x + s.spent.read![i]! + s.spent.place![i]!);
    console.log(`${s.v.name.padEnd(14)} µs/intent mean/median: insert ${f("insert")}, read ${f("read")}, place ${f("place")}, all ${mean(all).toFixed(0)}/${med(all).toFixed(0)}`);
  }
  console.log(stats);
  if (0) for (const s of setups) for (let k = 0; k < 4; k++) console.log((await s.database.query("select generic_plans::text, custom_plans::text, left(statement, 50) from pg_prepared_statements", [])).map((r) => r.join(" ")).join("\n"));
  for (const s of setups) {
    const sql = new SQL(pg.replace(/\/[^/]*$/, `/${s.datname}`));
    await Bun.sleep(1100);
    console.log(s.v.name, await sql`select relname, n_tup_upd, n_tup_hot_upd, pg_relation_size(relid) as heap, pg_indexes_size(relid) as idx from pg_stat_user_tables where relname = 'orders'`);
    await sql.close();
  }
  for (const s of setups) {
    await s.database.close();
    await admin.unsafe(`drop database if exists ${s.datname} with (force)`);
  }
  await admin.close();
}

if (import.meta.main) {
  const which = arg("--set", "hot");
  // The indexes and fillfactor of orders before migration 0024.
  const BEFORE_0024 =
    "alter table orders set (fillfactor = 100); create index orders_status_deadline_idx on orders (status, signature_deadline); " +
    "create index orders_cancel_requested_idx on orders (cancel_requested_at) where cancel_requested_at is not null and status = 'open'; " +
    "create index orders_venue_order_id_idx on orders (venue_order_id) where venue_order_id is not null; drop index orders_watch_idx; drop index orders_venue_ref_idx";
  const sets: Record<string, Variant[]> = {
    // Migration 0024 or not (the credential reads in the write statements in both).
    hot: [{ name: "before 0024", fold: true, ddl: BEFORE_0024 }, { name: "0024", fold: true }],
    // Migration 0024's fillfactor.
    ff: [{ name: "ff100", fold: true, ddl: "alter table orders set (fillfactor = 100)" }, { name: "ff75", fold: true }, { name: "ff50", fold: true, ddl: "alter table orders set (fillfactor = 50)" }],
    // The credential reads as a statement per batch, or in the write statements (OrderRepository.readSealed).
    fold: [{ name: "reads apart" }, { name: "reads folded", fold: true }],
    // The hot pool's session settings (database.ts HOT_SESSION) or PostgreSQL's defaults.
    generic: [{ name: "defaults", hotConn: {} }, { name: "HOT_SESSION" }],
    // agent_lease_fence's share.
    fence: [{ name: "fenced" }, { name: "unfenced", unfenced: true }],
    // The placement's event data left out (what its jsonb costs).
    nojson: [{ name: "base" }, { name: "no event data", rewrite: (t) => t.replace("event::jsonb", "null::jsonb") }],
    one: [{ name: "current", fold: true }],
  };
  await ab(sets[which]!);
}
