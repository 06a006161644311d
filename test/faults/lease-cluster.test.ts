/**
 * One actor per agent across instances (issue 23): three real service processes (`bun src/main.ts`,
 * VENUE=clob against the venue simulator) on one PostgreSQL database of their own, with and without
 * HAProxy (deploy/haproxy.cfg) in front.
 *
 * - 60 concurrent 5-USDC intents split across the three against a 100-USDC day approve exactly 20
 *   (fresh agents, several rounds), directly and through the proxy;
 * - a kill through a non-owner cancels every open order (delegated at the venue, payload awaiting its
 *   signature) and no instance approves for the agent afterwards;
 * - a limit change, a resume, a heartbeat through any instance take effect at once everywhere;
 * - SIGKILL of the owner under load: another instance serves within 2 s of the lapse, a kill sent
 *   meanwhile answers within its deadline, no order is lost or posted twice, every Idempotency-Key
 *   resolves to one outcome;
 * - a paused owner (SIGSTOP past its lease, SIGCONT) writes nothing after losing the lease;
 * - a rolling restart of the three under load: no overshoot, no order lost or doubled.
 * PostgreSQL only (TEST_DATABASE_URL): the embedded PGlite is one process by design.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import markets from "../../fixtures/markets.json" with { type: "json" };
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { ownPostgresDatabase } from "../support/own-postgres-database.ts";
import { ADMIN_TOKEN, type ServiceProcess, startService } from "../support/service-process.ts";

const SIGNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const MARKET = (markets as any[]).find((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
const TOKEN: string = MARKET.tokens[0].token_id;
// Below the best bid: a delegated buy rests at the venue (open) until cancelled.
const PRICE = Math.round((Number(MARKET.tokens[0].book.bids[0].price) - 0.05) * 100) / 100;
const SEAL = Buffer.alloc(32, 23).toString("base64");
const OPEN = { duplicate_window_s: 0, max_orders_per_minute: 100_000, max_open_orders: 100_000, capital_usdc: 1_000_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600, max_order_usdc: 1000 };
const TTL_MS = 1500;
const HAPROXY = Bun.which("haproxy") ?? (existsSync("/usr/sbin/haproxy") ? "/usr/sbin/haproxy" : null);

let url: string | null = null;
let db: import("postgres").Sql | null = null;
let sim: VenueSim;
const procs: ServiceProcess[] = [];
let key = "";
const dirs: string[] = [];

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { "content-type": "application/json", "x-api-key": key, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

const env = (id: string) => ({
  DATABASE_URL: url!,
  INSTANCE_ID: id,
  VENUE: "clob",
  VENUE_URL: sim.url,
  SEAL_SECRET_KEY: SEAL,
  VENUE_TIMEOUT_MS: "2000",
  LEASE_TTL_MS: String(TTL_MS),
  LEASE_RENEW_MS: "500",
  LOG_LEVEL: "info",
});
const start = (id: string, extra: Record<string, string> = {}) => startService({ ...env(id), ...extra }, 60_000);

async function newAgent(base: string, limits: Record<string, unknown>, delegated = false) {
  const r = await call(base, "POST", "/v1/agents", { wallet_address: SIGNER, limits: { ...OPEN, ...limits } });
  expect(r.status).toBe(201);
  const id = r.body.id as string;
  if (delegated) {
    const c = { api_key: crypto.randomUUID(), api_secret: randomBytes(32).toString("base64url"), passphrase: randomBytes(16).toString("hex") };
    await fetch(`${sim.url}/_sim/credentials`, { method: "POST", body: JSON.stringify({ ...c, address: SIGNER, scopes: ["order:place", "order:cancel"] }) });
    const set = await call(base, "POST", `/v1/agents/${id}/creds`, { ...c, scopes: ["order:place", "order:cancel"] });
    expect(set.status).toBe(200);
  }
  return id;
}
const intent = (agent: string, size = 5) => ({ market_id: TOKEN, side: "buy", size_usdc: size, price: PRICE, agent_id: agent });

async function ordersOf(base: string, agent: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const page: any = (await call(base, "GET", `/v1/orders?agent_id=${agent}&limit=200${cursor ? `&cursor=${cursor}` : ""}`)).body;
    out.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

/** 60 intents at once, 20 to each base; how many were approved (201), and the other statuses. */
async function burst(bases: string[], agent: string, headers: Record<string, string> = {}) {
  const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => call(bases[i % bases.length], "POST", "/v1/orders/intent", intent(agent), headers)));
  const statuses = answers.map((a) => a.status);
  const odd = answers.filter((a) => a.status !== 201 && a.status !== 422);
  if (odd.length) console.log("unexpected answers", odd.slice(0, 3).map((a) => JSON.stringify(a.body)));
  return { approved: statuses.filter((s) => s === 201).length, statuses };
}

const run = process.env.TEST_DATABASE_URL ? describe : describe.skip;

run("agent leases across three instances on one PostgreSQL", () => {
  beforeAll(async () => {
    url = await ownPostgresDatabase("lease_cluster");
    const { default: postgres } = await import("postgres");
    db = postgres(url!, { max: 1, onnotice: () => {} });
    sim = startVenueSim({ port: 0, hostname: "127.0.0.1" });
    // The first instance migrates; the others start against the migrated database.
    procs.push(await start("a"));
    procs.push(...(await Promise.all([start("b"), start("c")])));
    const org = await call(procs[0].url, "POST", "/v1/orgs", { name: "lease" }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    key = org.body.api_key.key;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop().catch(() => 0)));
    await sim?.stop();
    await db?.end();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const bases = () => procs.slice(0, 3).map((p) => p.url);

  test("60 concurrent 5-USDC intents across 3 instances against a 100-USDC day approve exactly 20 (fresh agents, 10 rounds)", async () => {
    for (let round = 0; round < 10; round++) {
      const agent = await newAgent(bases()[round % 3], { daily_volume_usdc: 100 });
      const { approved, statuses } = await burst(bases(), agent);
      expect({ round, approved, errors: statuses.filter((s) => s >= 500) }).toEqual({ round, approved: 20, errors: [] });
      // The database holds exactly those, and every instance reports the same day.
      expect((await ordersOf(bases()[0], agent)).length).toBe(20);
      for (const b of bases()) {
        const view = (await call(b, "GET", `/v1/agents/${agent}`)).body;
        expect(view.daily_volume.used_usdc).toBeLessThanOrEqual(100);
        expect(view.daily_volume.used_usdc).toBeGreaterThan(95);
        expect(view.owner_instance).toBeOneOf(["a", "b", "c"]);
      }
    }
  }, 120_000);

  test("the runaway guards hold the same way: 20 orders a minute across 3 instances approve exactly 20 of 60", async () => {
    for (let round = 0; round < 2; round++) {
      const agent = await newAgent(bases()[round % 3], { daily_volume_usdc: 100_000, max_orders_per_minute: 20 });
      const { approved } = await burst(bases(), agent);
      expect({ round, approved }).toEqual({ round, approved: 20 });
    }
  }, 60_000);

  test("an instance with another seal key refuses to start and says how to share the key", async () => {
    const other = startService({ ...env("d"), SEAL_SECRET_KEY: Buffer.alloc(32, 99).toString("base64") }, 30_000);
    const error = await other.then(
      () => null,
      (e: Error) => e.message,
    );
    expect(error).toContain("seal key");
    expect(error).toContain("SEAL_KEY_FILE");
    expect(error).toContain("SEAL_SECRET_KEY");
  }, 60_000);

  test("a second process under an INSTANCE_ID already running on the database refuses to start and says so", async () => {
    const second = startService(env("b"), 30_000);
    const error = await second.then(
      async (p) => {
        await p.stop();
        return null;
      },
      (e: Error) => e.message,
    );
    expect(error).toContain("another process on this database is running as INSTANCE_ID=b");
    // The instance already running under the name is untouched and still serves.
    expect((await fetch(`${procs[1].url}/healthz`)).status).toBe(200);
    expect((await call(procs[1].url, "POST", "/v1/agents", { wallet_address: SIGNER })).status).toBe(201);
  }, 60_000);

  test.skipIf(!HAPROXY)("the same through HAProxy (deploy/haproxy.cfg): exactly 20 (10 rounds), the agent stays on one instance", async () => {
    const dir = mkdtempSync(join(tmpdir(), "haproxy-"));
    dirs.push(dir);
    const port = 20000 + Math.floor(Math.random() * 20000);
    let cfg = readFileSync(resolve(import.meta.dir, "../../deploy/haproxy.cfg"), "utf8");
    cfg = cfg.replace("bind :8080", `bind 127.0.0.1:${port}`).replace("log stdout format raw local0 warning", "");
    bases().forEach((b, i) => (cfg = cfg.replace(`127.0.0.1:808${i + 1}`, new URL(b).host)));
    writeFileSync(join(dir, "haproxy.cfg"), cfg);
    const proxy = Bun.spawn([HAPROXY!, "-f", join(dir, "haproxy.cfg"), "-db"], { stdout: "ignore", stderr: "pipe" });
    try {
      const front = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 50; i++) {
        if ((await fetch(`${front}/healthz`).catch(() => null))?.ok) break;
        await Bun.sleep(100);
      }
      const proxied: string[] = [];
      for (let round = 0; round < 10; round++) {
        const agent = await newAgent(front, { daily_volume_usdc: 100 });
        proxied.push(agent);
        const { approved } = await burst([front], agent, { "x-agent-id": agent });
        expect(approved).toBe(20);
        expect((await ordersOf(front, agent)).length).toBe(20);
        // The agent view names its owner: the same instance whichever way the proxy is asked.
        const owners = new Set<string>();
        for (let i = 0; i < 6; i++) owners.add((await call(front, "GET", `/v1/agents/${agent}`)).body.owner_instance);
        expect(owners.size).toBe(1);
      }
      // Behind the proxy nothing is handed over: every request about an agent reached its one instance.
      const handedOver = procs.flatMap((p) => p.lines.filter((l) => l.includes('"lease taken"') && proxied.some((a) => l.includes(a))));
      expect(handedOver).toEqual([]);
      expect(await takeovers()).toBeGreaterThan(0); // the series exist (the direct rounds above hand agents over)
    } finally {
      proxy.kill();
      await proxy.exited;
    }
  }, 60_000);

  async function takeovers(): Promise<number> {
    let n = 0;
    for (const b of bases()) {
      const text = await (await fetch(`${b}/metrics`)).text();
      for (const kind of ["handoff", "lapsed"]) {
        const m = text.match(new RegExp(`agent_lease_taken_total\\{kind="${kind}"\\} (\\d+)`));
        n += Number(m?.[1] ?? 0);
      }
    }
    return n;
  }

  test("a kill through a non-owner cancels every open order (delegated and payload); no instance approves afterwards", async () => {
    const [a, b, c] = bases();
    // Delegated: five orders resting at the venue, placed through a (the owner).
    const delegated = await newAgent(a, { daily_volume_usdc: 1000 }, true);
    const placed = await Promise.all(Array.from({ length: 5 }, () => call(a, "POST", "/v1/orders/intent", intent(delegated))));
    for (const p of placed) expect(p.body.order?.status ?? p.body.status).toBe("open");
    const killed = await call(b, "POST", `/v1/agents/${delegated}/kill`, {});
    expect(killed.status).toBe(200);
    expect(killed.body.cancelled.sort()).toEqual(placed.map((p) => p.body.order_id).sort());
    expect(killed.body.failed).toEqual([]);
    expect(killed.body.duration_ms).toBeLessThan(5000);
    // Payload: three orders awaiting their signature, made through c.
    const payload = await newAgent(c, { daily_volume_usdc: 1000 });
    const unsigned = await Promise.all(Array.from({ length: 3 }, () => call(c, "POST", "/v1/orders/intent", intent(payload))));
    for (const u of unsigned) expect(u.status).toBe(201);
    const killed2 = await call(a, "POST", `/v1/agents/${payload}/kill`, {});
    expect(killed2.status).toBe(200);
    const orders2 = await ordersOf(b, payload);
    expect(orders2.map((o) => o.status)).toEqual(["cancelled", "cancelled", "cancelled"]);
    // At the venue every delegated order is cancelled; no instance approves for either agent now.
    const orders = await ordersOf(c, delegated);
    expect(orders.map((o) => o.status).sort()).toEqual(Array(5).fill("cancelled"));
    for (const base of [a, b, c]) {
      for (const agent of [delegated, payload]) {
        const r = await call(base, "POST", "/v1/orders/intent", intent(agent));
        expect(r.status).not.toBe(201);
      }
    }
    expect((await ordersOf(a, delegated)).length).toBe(5);
    expect((await ordersOf(a, payload)).length).toBe(3);
  }, 60_000);

  test("a kill during hand-overs (intents moving the agent between a and b) through c: every order ends cancelled, nothing approved after it", async () => {
    const [a, b, c] = bases();
    const agent = await newAgent(a, { daily_volume_usdc: 1000 }, true);
    const burst = Array.from({ length: 30 }, (_, i) => call(i % 2 ? a : b, "POST", "/v1/orders/intent", intent(agent)));
    await Bun.sleep(30);
    const killed = await call(c, "POST", `/v1/agents/${agent}/kill`, {});
    expect(killed.status).toBe(200);
    expect(killed.body.duration_ms).toBeLessThan(5000);
    const answers = await Promise.all(burst);
    expect(answers.filter((r) => r.status >= 500 && r.body?.code !== "agent_busy")).toEqual([]);
    // What the kill did not see (placed while it ran, or after) was refused or is cancelled too: no
    // order of the agent is live anywhere.
    for (const base of [a, b, c]) expect((await call(base, "POST", "/v1/orders/intent", intent(agent))).status).not.toBe(201);
    const rows = await ordersOf(b, agent);
    expect(rows.filter((r) => !["cancelled", "rejected", "failed", "expired"].includes(r.status)).map((r) => `${r.id} ${r.status}`)).toEqual([]);
    const live = rows.filter((r) => (sim.state.venue.order(r.venue_order_id ?? r.order_hash) ?? sim.state.venue.order(r.order_hash))?.status === "live");
    expect(live.map((r) => r.id)).toEqual([]);
  }, 60_000);

  test("a limit change, a resume, a heartbeat, an approval through any instance take effect at once everywhere", async () => {
    const [a, b, c] = bases();
    const agent = await newAgent(a, { daily_volume_usdc: 1000 });
    expect((await call(a, "POST", "/v1/orders/intent", intent(agent))).status).toBe(201);
    // Limit lowered through b: a refuses the next intent at once (10 USDC over a 5-USDC-used day of 8).
    expect((await call(b, "PATCH", `/v1/agents/${agent}/limits`, { daily_volume_usdc: 8 })).status).toBe(200);
    const refused = await call(a, "POST", "/v1/orders/intent", intent(agent));
    expect(refused.status).toBe(422);
    expect((await call(c, "GET", `/v1/agents/${agent}`)).body.limits.daily_volume_usdc).toBe(8);
    // Trip through c, resume through a: b approves at once.
    expect((await call(c, "PATCH", `/v1/agents/${agent}/limits`, { daily_volume_usdc: 1000 })).status).toBe(200);
    expect((await call(c, "POST", `/v1/agents/${agent}/kill`, {})).status).toBe(200);
    expect((await call(b, "POST", "/v1/orders/intent", intent(agent))).status).not.toBe(201);
    expect((await call(a, "POST", `/v1/agents/${agent}/resume`, {})).status).toBe(200);
    expect((await call(b, "POST", "/v1/orders/intent", intent(agent))).status).toBe(201);
    // The heartbeat: on through a, a beat through b, seen through c.
    expect((await call(a, "PUT", `/v1/agents/${agent}/heartbeat`, { interval_s: 60 })).status).toBeOneOf([200, 201]);
    const beat = await call(b, "POST", `/v1/agents/${agent}/heartbeat`, {});
    expect(beat.status).toBe(200);
    const seen = (await call(c, "GET", `/v1/agents/${agent}`)).body;
    expect(seen.heartbeat.last_at).toBe(beat.body.heartbeat.last_at);
    // An approval: held through c, approved through a, then the approval is spent everywhere (b).
    expect((await call(b, "PATCH", `/v1/agents/${agent}/limits`, { approval_threshold_usdc: 4 })).status).toBe(200);
    const held = await call(c, "POST", "/v1/orders/intent", intent(agent));
    expect(held.status).toBe(202);
    const approved = await call(a, "POST", `/v1/orders/${held.body.order_id}/approve`, {});
    expect(approved.status).toBe(200);
    expect(approved.body.order?.status ?? approved.body.status).toBe("awaiting_signature");
    expect((await call(b, "POST", `/v1/orders/${held.body.order_id}/approve`, {})).status).toBe(409);
    expect((await call(b, "GET", `/v1/orders/${held.body.order_id}`)).body.status).toBe("awaiting_signature");
  }, 60_000);

  test("a listing through another instance reads the agents as they stand, without taking them over", async () => {
    const [a, b] = bases();
    const agent = await newAgent(a, { daily_volume_usdc: 1000 });
    expect((await call(a, "POST", "/v1/orders/intent", intent(agent))).status).toBe(201);
    const listed = (await call(b, "GET", "/v1/agents?limit=200")).body.data.find((x: any) => x.id === agent);
    expect(listed.daily_volume.used_usdc).toBeGreaterThan(4.9);
    expect(listed.open_orders).toBe(1);
    // a still owns it: the next intent through a needs no hand-over, and b took nothing.
    expect((await call(a, "POST", "/v1/orders/intent", intent(agent))).status).toBe(201);
    const takes = procs.flatMap((p) => p.lines.filter((l) => l.includes('"lease taken"') && l.includes(agent)));
    expect(takes).toEqual([]);
  }, 30_000);

  test("a rolling restart of the three under load: no overshoot, no order lost or doubled", async () => {
    // 30 USDC a day, 3-USDC intents: the load reaches every agent's limit during the restarts.
    const agents = await Promise.all([0, 1, 2].map((i) => newAgent(bases()[i], { daily_volume_usdc: 30 }, true)));
    const sent: { key: string; agent: string; status?: number; orderId?: string; error?: string }[] = [];
    let alive = true;
    let k = 0;
    const worker = async (w: number) => {
      while (alive) {
        const live = procs.slice(0, 3).filter((p) => p.url);
        const base = live[(w + k++) % live.length].url;
        const rec: (typeof sent)[number] = { key: `roll-${w}-${k}`, agent: agents[(w + k) % agents.length] };
        sent.push(rec);
        try {
          const r = await call(base, "POST", "/v1/orders/intent", intent(rec.agent, 3), { "idempotency-key": rec.key });
          rec.status = r.status;
          rec.orderId = r.body?.order_id;
        } catch (error) {
          // the instance went away before the request reached it: a refused connection
          rec.error = String(error);
        }
        await Bun.sleep(5);
      }
    };
    const workers = Array.from({ length: 6 }, (_, w) => worker(w));
    const stopped: ServiceProcess[] = [];
    for (let i = 0; i < 3; i++) {
      await Bun.sleep(300);
      const old = procs[i];
      stopped.push(old);
      const stopping = old.stop();
      // Requests keep going to the two others meanwhile.
      procs[i] = { ...old, url: procs[(i + 1) % 3].url };
      expect(await stopping).toBe(0);
      procs[i] = await start(["a", "b", "c"][i]);
    }
    await Bun.sleep(300);
    alive = false;
    await Promise.all(workers);
    // Every key resolves to one outcome (an answer given is given again); a request that got no answer
    // (refused connection) is resolved by its retry.
    for (const rec of sent) {
      const r = await call(bases()[0], "POST", "/v1/orders/intent", intent(rec.agent, 3), { "idempotency-key": rec.key });
      expect(r.status).toBeLessThan(500);
      expect(r.body?.code).not.toBe("idempotency_conflict");
      if (rec.status !== undefined) {
        expect({ key: rec.key, status: r.status }).toEqual({ key: rec.key, status: rec.status });
        if (rec.orderId) expect(r.body.order_id).toBe(rec.orderId);
      }
      rec.orderId = r.body?.order_id;
    }
    // A stopping instance released its leases: the others took them at once, never after a lapse.
    const lapsed = [...stopped, ...procs.slice(0, 3)].flatMap((p) => p.lines.filter((l) => l.includes('"lease taken"') && l.includes('"lapsed"') && agents.some((a) => l.includes(a))));
    expect(lapsed).toEqual([]);
    const unanswered = sent.filter((r) => r.status === undefined);
    console.log(`rolling restart: ${sent.length} intents, ${unanswered.length} without an answer (refused connections), resolved by their retries`);
    for (const agent of agents) {
      const rows = await ordersOf(bases()[0], agent);
      // Every order stored is one key's answer, and each key's answer one stored order; the day is never overshot.
      const answered = new Set(sent.filter((r) => r.agent === agent && r.orderId).map((r) => r.orderId!));
      expect(new Set(rows.map((r) => r.id))).toEqual(answered);
      const used = (await call(bases()[1], "GET", `/v1/agents/${agent}`)).body.daily_volume.used_usdc;
      expect(used).toBeLessThanOrEqual(30);
      // The limit was reached (the load was real): 10 orders of 2.99 USDC fit in the day, no 11th.
      expect(rows.length).toBe(10);
      const posts = (await (await fetch(`${sim.url}/_sim/stats`)).json()) as { posts: Record<string, number> };
      for (const r of rows) expect(posts.posts[r.order_hash] ?? 0).toBeLessThanOrEqual(1);
    }
  }, 120_000);

  test("SIGKILL of the owner under load: another instance serves within 2 s of the lapse; a kill meanwhile answers in time; every key resolves once", async () => {
    const [, b, c] = bases();
    const owner = procs[0];
    const agent = await newAgent(owner.url, { daily_volume_usdc: 100_000 }, true);
    const other = await newAgent(owner.url, { daily_volume_usdc: 100_000 });
    // The owner takes both.
    expect((await call(owner.url, "POST", "/v1/orders/intent", intent(other))).status).toBe(201);
    const sent: { key: string; status?: number; orderId?: string }[] = [];
    let alive = true;
    let n = 0;
    const worker = async () => {
      while (alive) {
        const rec: (typeof sent)[number] = { key: `sigkill-${n++}` };
        sent.push(rec);
        try {
          const r = await call(owner.url, "POST", "/v1/orders/intent", intent(agent, 3), { "idempotency-key": rec.key });
          rec.status = r.status;
          rec.orderId = r.body?.order_id;
        } catch {
          // in flight at the SIGKILL
        }
      }
    };
    const workers = [worker(), worker(), worker(), worker()];
    await Bun.sleep(400);
    owner.signal("SIGKILL");
    const killedAt = Date.now();
    alive = false;
    // A kill of the other agent sent meanwhile, through c: within the 5 s deadline.
    const kill = call(c, "POST", `/v1/agents/${other}/kill`, {});
    // b serves the agent once the lease lapsed (1.5 s), within 2 s of it.
    const served = await call(b, "POST", "/v1/orders/intent", intent(agent, 3));
    const servedAfter = Date.now() - killedAt;
    expect({ status: served.status, body: served.status === 201 ? null : served.body }).toEqual({ status: 201, body: null });
    expect(servedAfter).toBeLessThan(TTL_MS + 2000);
    const k = await kill;
    expect(k.status).toBe(200);
    // Its order (awaiting a signature) is cancelled by the kill, through the instance that took it over.
    expect(k.body.cancelled.length).toBe(1);
    expect(Date.now() - killedAt).toBeLessThan(5000 + TTL_MS);
    expect(k.body.duration_ms).toBeLessThan(5000);
    await Promise.all(workers);
    // Every key resolves to one outcome (the dead instance's records in progress are interrupted and
    // resolved); an answer given before is given again.
    const deadline = Date.now() + 10_000;
    for (const rec of sent) {
      for (;;) {
        const r = await call(b, "POST", "/v1/orders/intent", intent(agent, 3), { "idempotency-key": rec.key });
        // A record the dead instance left in progress answers "still in progress" until a survivor
        // marked it interrupted (its instance's row lapsed); then its retry resolves.
        if (r.status === 409 && r.body?.code === "idempotency_conflict" && String(r.body?.detail).includes("in progress") && Date.now() < deadline) {
          await Bun.sleep(200);
          continue;
        }
        expect(r.status).toBeLessThan(500);
        expect(r.body?.code).not.toBe("idempotency_conflict");
        if (rec.status !== undefined) {
          expect(r.status).toBe(rec.status);
          if (rec.orderId) expect(r.body.order_id).toBe(rec.orderId);
        }
        rec.status = r.status;
        rec.orderId = r.body?.order_id;
        break;
      }
    }
    const rows = await ordersOf(b, agent);
    const answered = new Set([...sent.filter((s) => s.orderId).map((s) => s.orderId!), served.body.order_id]);
    const stored = new Set(rows.map((r) => r.id));
    const lost = [...answered].filter((id) => !stored.has(id));
    const extra = rows.filter((r) => !answered.has(r.id)).map((r) => `${r.id} ${r.status} ${JSON.stringify(r.history)}`);
    expect({ lost, extra }).toEqual({ lost: [], extra: [] });
    const posts = (await (await fetch(`${sim.url}/_sim/stats`)).json()) as { posts: Record<string, number> };
    for (const r of rows) expect(posts.posts[r.order_hash] ?? 0).toBeLessThanOrEqual(1);
    procs[0] = await start("a2");
  }, 60_000);

  test("a paused owner (SIGSTOP past its lease, then SIGCONT) writes nothing after losing the lease", async () => {
    const [, b] = bases();
    const owner = procs[0];
    const agent = await newAgent(owner.url, { daily_volume_usdc: 100_000 });
    const fromOwner: { status?: number; orderId?: string; at?: number }[] = [];
    expect((await call(owner.url, "POST", "/v1/orders/intent", intent(agent, 3))).status).toBe(201);
    // Requests in flight at the owner when it is paused.
    const inFlight = Array.from({ length: 8 }, async () => {
      const rec: (typeof fromOwner)[number] = {};
      fromOwner.push(rec);
      try {
        const r = await call(owner.url, "POST", "/v1/orders/intent", intent(agent, 3));
        rec.status = r.status;
        rec.orderId = r.body?.order_id;
        rec.at = Date.now();
      } catch {
        // no answer
      }
    });
    await Bun.sleep(5);
    process.kill(owner.pid, "SIGSTOP");
    const stoppedAt = Date.now();
    const fromB: { status: number; body: any }[] = [];
    let xidBeforeResume = 0;
    try {
      await Bun.sleep(TTL_MS + 300);
      // b takes the lapsed lease and serves.
      for (let i = 0; i < 5; i++) fromB.push(await call(b, "POST", "/v1/orders/intent", intent(agent, 3)));
      for (const r of fromB) expect(r.status).toBe(201);
      // A transaction id taken now: every write from here on has a larger one.
      xidBeforeResume = Number((await db!`select txid_current() as x`)[0].x) % 2 ** 32;
    } finally {
      process.kill(owner.pid, "SIGCONT");
    }
    await Promise.all(inFlight);
    await Bun.sleep(1000);
    const rows = await ordersOf(b, agent);
    // Nothing was written by the paused owner after b took over: every row is an answered order, and
    // none the owner answered after its pause was created after it.
    for (const rec of fromOwner) if (rec.status === 201) expect(rows.find((r) => r.id === rec.orderId)).toBeDefined();
    const late = rows.filter((r) => new Date(r.created_at).getTime() > stoppedAt + TTL_MS && fromOwner.some((f) => f.orderId === r.id));
    expect(late).toEqual([]);
    console.log(`paused owner: answers after the pause ${JSON.stringify(fromOwner.map((f) => f.status))}`);
    expect(owner.lines.some((l) => l.includes("lease lost"))).toBe(true);
    // Nothing of the agent's was written after the owner resumed except b's own orders: no order row
    // with a later transaction than b's last answer before the resume that b did not answer.
    const bIds = new Set(fromB.map((r) => r.body.order_id));
    const written = await db!`select id, xmin::text::bigint as x from orders where agent_id = ${agent}`;
    expect(written.filter((r: any) => Number(r.x) > xidBeforeResume && !bIds.has(r.id)).map((r: any) => r.id)).toEqual([]);
    const agentRow = await db!`select xmin::text::bigint as x from agents where id = ${agent}`;
    expect(Number(agentRow[0].x)).toBeLessThan(xidBeforeResume);
    const used = (await call(b, "GET", `/v1/agents/${agent}`)).body.daily_volume.used_usdc;
    const sum = rows.reduce((s, r) => s + Number(r.notional_usdc ?? 0), 0);
    if (rows[0]?.notional_usdc !== undefined) expect(Math.abs(used - sum)).toBeLessThan(1e-6);
  }, 60_000);
  test("a paused owner writes no order, fill, decision, kill record, event or Idempotency-Key record once it lost the lease; every key it took resolves to one outcome", async () => {
    const [, b] = bases();
    const owner = procs[0];
    // Marketable buys (they fill at once: a fill recorded with the placement) of 3 USDC, and 5-USDC ones
    // above max_order_usdc (rejected: a decision and its event), for one agent; a kill of another (its
    // kills row and event), both owned by the owner.
    const ASK = Number(MARKET.tokens[0].book.asks[0].price);
    const taker = (agent: string, size: number) => ({ market_id: TOKEN, side: "buy", size_usdc: size, price: Math.round((ASK + 0.02) * 100) / 100, agent_id: agent });
    const trader = await newAgent(owner.url, { daily_volume_usdc: 100_000, max_order_usdc: 4 }, true);
    const killed = await newAgent(owner.url, { daily_volume_usdc: 100_000 }, true);
    const warm = await call(owner.url, "POST", "/v1/orders/intent", taker(trader, 3));
    expect({ status: warm.status, order: warm.body?.order?.status ?? warm.body?.status }).toEqual({ status: 201, order: "filled" });
    for (let i = 0; i < 3; i++) expect((await call(owner.url, "POST", "/v1/orders/intent", intent(killed))).status).toBe(201);
    const ownerId = (await call(owner.url, "GET", `/v1/agents/${trader}`)).body.owner_instance as string;
    // Every write to the agents' rows is recorded with the session's instance (application_name) and
    // the agents' lease owners at that moment, in the writing transaction (a refused write records nothing).
    await db!.unsafe(`
      create table write_audit (id bigserial primary key, app text, tbl text, op text, agent_id text, idem_key text, status text, owners jsonb, at timestamptz default clock_timestamp());
      create table write_watch (agent_id text primary key);
      create function write_audit() returns trigger language plpgsql as $f$
      declare r jsonb := to_jsonb(case when TG_OP = 'DELETE' then OLD else NEW end);
      begin
        insert into write_audit (app, tbl, op, agent_id, idem_key, status, owners)
        values (current_setting('application_name'), TG_TABLE_NAME, TG_OP, coalesce(r->>'agent_id', case when TG_TABLE_NAME = 'agents' then r->>'id' end),
                r->>'key', r->>'status', (select jsonb_object_agg(w.agent_id, l.owner) from write_watch w left join agent_leases l on l.agent_id = w.agent_id));
        return null;
      end $f$;
    `);
    for (const t of ["orders", "fills", "risk_decisions", "kills", "events", "agents", "credentials", "idempotency_keys"]) {
      await db!.unsafe(`create trigger write_audit after insert or update or delete on ${t} for each row execute function write_audit()`);
    }
    await db!`insert into write_watch (agent_id) values (${trader}), (${killed})`;
    try {
      // The venue answers slowly: the owner's placements and the kill's cancels are under way when it is paused.
      const venueCalls = async () => {
        const stats = (await (await fetch(`${sim.url}/_sim/stats`)).json()) as { requests: Record<string, number> };
        return { posts: stats.requests["POST /order"] ?? 0, cancels: (stats.requests["DELETE /order"] ?? 0) + (stats.requests["DELETE /orders"] ?? 0) };
      };
      const before = await venueCalls();
      await fetch(`${sim.url}/_sim/faults`, { method: "POST", body: JSON.stringify({ latency_ms: 600, cancel_latency_ms: 600 }) });
      const sent: { key: string; agent: string; body: unknown; path: string; status?: number; orderId?: string }[] = [];
      const send = async (rec: (typeof sent)[number]) => {
        sent.push(rec);
        try {
          const r = await call(owner.url, "POST", rec.path, rec.body, { "idempotency-key": rec.key });
          rec.status = r.status;
          rec.orderId = r.body?.order_id;
        } catch {
          // no answer
        }
      };
      const inFlight: Promise<void>[] = [];
      for (let i = 0; i < 6; i++) inFlight.push(send({ key: `paused-take-${i}`, agent: trader, path: "/v1/orders/intent", body: taker(trader, 3) }));
      inFlight.push(send({ key: "paused-kill", agent: killed, path: `/v1/agents/${killed}/kill`, body: {} }));
      // Rejected intents keep coming until the pause.
      let pausing = false;
      let r = 0;
      const rejections = (async () => {
        while (!pausing) {
          inFlight.push(send({ key: `paused-reject-${r}`, agent: trader, path: "/v1/orders/intent", body: taker(trader, 5) }));
          r++;
          await Bun.sleep(15);
        }
      })();
      // Paused once the venue has the placements and the kill's cancels (they wait out its latency).
      for (let i = 0; i < 150; i++) {
        const now = await venueCalls();
        if (now.posts - before.posts >= 6 && now.cancels > before.cancels) break;
        await Bun.sleep(20);
      }
      pausing = true;
      await rejections;
      process.kill(owner.pid, "SIGSTOP");
      let tookOverAt = "";
      let inProgressAtResume = 0;
      try {
        await fetch(`${sim.url}/_sim/faults`, { method: "POST", body: JSON.stringify({ latency_ms: 0, cancel_latency_ms: 0 }) });
        // b takes both agents over as soon as their leases lapse, and the owner is resumed at once: its
        // records in progress are then (most likely) not yet interrupted by the others' periodic pass.
        const views = await Promise.all([call(b, "GET", `/v1/agents/${trader}`), call(b, "GET", `/v1/agents/${killed}`)]);
        expect(views.map((v) => v.body.owner_instance)).toEqual(["b", "b"]);
        tookOverAt = String((await db!`select clock_timestamp()::text as t`)[0].t);
        inProgressAtResume = Number((await db!`select count(*)::int as n from idempotency_keys where key like 'paused-%' and status = 0`)[0].n);
      } finally {
        process.kill(owner.pid, "SIGCONT");
      }
      await Promise.all(inFlight);
      await Bun.sleep(1500);
      const ownerApp = `brokerage ${ownerId}`;
      const all = (await db!`select app, tbl, op, agent_id, idem_key, status, owners, clock_timestamp() > at and at > ${tookOverAt}::timestamptz as after from write_audit order by id`) as any[];
      const after = all.filter((a) => a.after);
      const describe = (a: any) => `${a.app} ${a.op} ${a.tbl} ${a.agent_id ?? a.idem_key} status=${a.status} owners=${JSON.stringify(a.owners)}`;
      // Every write for the agents after b took over was made by the instance holding the agent's lease
      // at that moment (b, or the paused owner only had it taken the lease back by a hand-over for a
      // request it read after its pause): never by the owner under the lease it lost.
      const instanceOf = (app: string) => app.replace(/^brokerage /, "");
      // (The trigger sees every agent's writes: agents of the earlier tests, which b may own and write
      // for meanwhile, are not this test's.)
      const watched = new Set([trader, killed]);
      expect(after.filter((a) => a.tbl !== "idempotency_keys" && watched.has(a.agent_id) && a.owners?.[a.agent_id] !== instanceOf(a.app)).map(describe)).toEqual([]);
      // The Idempotency-Key records the owner held when it was paused: it wrote nothing more of them (no
      // answer, no release, not even "interrupted"); the others only left them interrupted (dead runs,
      // resolved by their retries below).
      const heldAtPause = new Set(all.filter((a) => !a.after && a.tbl === "idempotency_keys" && a.app === ownerApp && a.op === "INSERT").map((a) => a.idem_key));
      const records = after.filter((a) => a.tbl === "idempotency_keys" && heldAtPause.has(a.idem_key));
      expect(records.filter((a) => a.app === ownerApp).map(describe)).toEqual([]);
      expect(records.filter((a) => a.op !== "UPDATE" || a.status !== "-1").map(describe)).toEqual([]);
      const wrote = [...new Set(after.map((a) => `${a.app} ${a.tbl}`))].sort();
      console.log(`paused owner: ${sent.length} requests (${r} rejections), answers ${JSON.stringify(sent.map((x) => x.status))}; ${heldAtPause.size} records held at the pause (${inProgressAtResume} still in progress at the resume); writes after the take-over: ${JSON.stringify(wrote)}`);
      expect(owner.lines.some((l) => l.includes("lease lost"))).toBe(true);

      // Every key resolves to one outcome at b: an order the owner answered is answered again, and each
      // order is posted once.
      for (const rec of sent) {
        let res: { status: number; body: any } | null = null;
        for (let i = 0; i < 50; i++) {
          res = await call(b, "POST", rec.path, rec.body, { "idempotency-key": rec.key });
          if (!(res.status === 409 && String(res.body?.detail).includes("in progress"))) break;
          await Bun.sleep(200);
        }
        expect({ key: rec.key, status: res!.status < 500, conflict: res!.body?.code === "idempotency_conflict" }).toEqual({ key: rec.key, status: true, conflict: false });
        if (rec.orderId && rec.path === "/v1/orders/intent") expect({ key: rec.key, order: res!.body.order_id }).toEqual({ key: rec.key, order: rec.orderId });
        if (rec.path === "/v1/orders/intent" && rec.key.startsWith("paused-take-")) expect({ key: rec.key, status: res!.status }).toEqual({ key: rec.key, status: 201 });
        if (res!.body?.order_id) rec.orderId = res!.body.order_id;
      }
      const rows = await ordersOf(b, trader);
      const answered = new Set([warm.body.order_id, ...sent.filter((x) => x.orderId).map((x) => x.orderId!)]);
      expect(new Set(rows.map((o) => o.id))).toEqual(answered);
      const posts = (await (await fetch(`${sim.url}/_sim/stats`)).json()) as { posts: Record<string, number> };
      for (const o of rows) expect(posts.posts[o.order_hash] ?? 0).toBeLessThanOrEqual(1);
    } finally {
      await fetch(`${sim.url}/_sim/faults`, { method: "POST", body: JSON.stringify({ latency_ms: 0, cancel_latency_ms: 0 }) });
      for (const t of ["orders", "fills", "risk_decisions", "kills", "events", "agents", "credentials", "idempotency_keys"]) await db!.unsafe(`drop trigger if exists write_audit on ${t}`);
      await db!.unsafe("drop function if exists write_audit() cascade; drop table if exists write_audit; drop table if exists write_watch");
    }
  }, 90_000);
});
