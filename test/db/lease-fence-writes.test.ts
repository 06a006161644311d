/**
 * The writes fenced on an agent's lease beside the orders' (issue 23), on both databases, with two
 * lease holders on one database (as test/db/agent-leases.test.ts): the fills store's writes
 * (applyFill, revertFill) and rejected decisions change nothing under a stale epoch and throw
 * LeaseLostError, the current epoch's go through, and the stale holder is told it lost the lease.
 * Idempotency-Key records: a run's writes of its record are conditional on the record still being
 * that run's (src/db/idempotency-store.ts), so a run that was paused or lost its lease while a
 * retry resolved the record changes nothing of it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { LeaseLostError } from "../../actors/lease-port.ts";
import { DbLeases } from "../../src/db/agent-leases.ts";
import type { Database } from "../../src/db/database.ts";
import { FillStore, type FillDecision, type FillInput } from "../../src/db/fill-store.ts";
import { OrderRepository } from "../../src/db/order-repository.ts";
import { events, fills, idempotencyKeys, orders, riskDecisions } from "../../src/db/schema.ts";
import { IdempotencyStore } from "../../src/db/idempotency-store.ts";
import type { TestApp } from "../support/app.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";
import { orderRow } from "../support/order-row.ts";
import { newTrader } from "../support/payload.ts";
import { unleasedTrader } from "../support/unleased-trader.ts";

const quiet = { info: () => {}, warn: () => {} };

describeEachDatabase("writes fenced on the agent's lease beside the orders'", (kind, open) => {
  let database: Database;
  let t: TestApp;
  let agentId: string;
  let orgId: string;
  const holders: DbLeases[] = [];
  const lost: Record<string, string[]> = { one: [], two: [] };
  let n = 0;

  const holder = (name: "one" | "two", ttlMs = 1000) => {
    const h = new DbLeases(database, { instanceId: `${kind}-fw-${name}-${process.pid}`, ttlMs, renewEveryMs: 100, log: quiet });
    h.setHandlers({ releaseRequested: () => {}, lost: (id) => lost[name].push(id) });
    holders.push(h);
    return h;
  };

  beforeAll(async () => {
    database = await open();
    ({ t, agentId, orgId } = await unleasedTrader(database));
  });
  afterAll(async () => {
    for (const h of holders) await h.stop();
  });

  /**
   * A lease of the first holder made stale as a paused process's is: it stops renewing (its timer held
   * back), the second takes the agent over once it lapsed (the next epoch); the first still believes it
   * holds it.
   */
  async function staleAndCurrent() {
    const one = holder("one", 300);
    const two = holder("two", 300);
    const first = await one.acquire(agentId, { waitMs: 3000, ask: true });
    expect(first).not.toBeNull();
    clearInterval((one as unknown as { timer: ReturnType<typeof setInterval> }).timer);
    const second = await two.acquire(agentId, { waitMs: 3000, ask: true });
    expect(second?.epoch).toBe(first!.epoch + 1);
    expect(first!.lost).toBe(false);
    return { one, two, stale: first!, current: second! };
  }

  const openOrder = async (): Promise<string> => {
    const id = `ord_fw${kind}${process.pid}x${++n}`;
    const none = { typedData: null, signatureDeadline: null, clientOrderId: null };
    const row = orderRow({ id, orgId, agentId, status: "open", orderHash: `0x${n.toString(16).padStart(64, "0")}`, ...none, venueOrderId: `venue-${id}`, decisionId: `dec_${id}` });
    await new OrderRepository(database.db, { maxInFlight: 1, run: database.run }).insert(row, {
      id: row.decisionId!,
      orgId,
      agentId,
      approved: true,
      intent: {},
      failures: [],
      checks: [],
      orderId: id,
      createdAt: row.createdAt!,
    });
    return id;
  };
  const fill = (key: string): FillInput => ({
    fillKey: key,
    tradeId: key,
    source: "user_channel",
    price: "0.5",
    sharesUnits: 2_000_000n,
    usdcUnits: 1_000_000n,
    feeUnits: 0n,
    status: "matched",
    at: new Date(),
  });
  const decide: FillDecision = (order) => ({ to: order.status, reason: "partly filled at the venue (test)" });
  const fillRows = async (orderId: string) => database.db.select().from(fills).where(eq(fills.orderId, orderId));
  const eventCount = async (orderId: string) => (await database.db.select({ id: events.id }).from(events).where(eq(events.orderId, orderId))).length;

  test("the fills store: a stale epoch's fill and take-back change nothing (LeaseLostError, the holder told); the current epoch's go through", async () => {
    const store = new FillStore(database.db, (row) => ({ order: { id: row.id } }), () => new Date());
    lost.one.length = 0;
    const { two, stale, current } = await staleAndCurrent();
    const orderId = await openOrder();
    const eventsBefore = await eventCount(orderId);

    await expect(store.fenced(stale).applyFill(orderId, fill(`k1-${orderId}`), decide)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await fillRows(orderId)).toEqual([]);
    expect((await database.db.select({ f: orders.filledUnits }).from(orders).where(eq(orders.id, orderId)))[0].f).toBe(0n);
    expect(await eventCount(orderId)).toBe(eventsBefore);
    expect(lost.one).toEqual([agentId]);

    const applied = await store.fenced(current).applyFill(orderId, fill(`k1-${orderId}`), decide);
    expect(applied.kind).toBe("applied");
    expect((await fillRows(orderId)).map((f) => f.status)).toEqual(["matched"]);

    // Taking the fill back under the stale epoch: refused, the fill still counts.
    await expect(store.fenced(stale).revertFill(orderId, { fillKey: `k1-${orderId}` }, decide)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await fillRows(orderId)).map((f) => f.status)).toEqual(["matched"]);
    expect((await store.fenced(current).revertFill(orderId, { fillKey: `k1-${orderId}` }, decide)).kind).toBe("applied");
    expect((await fillRows(orderId)).map((f) => f.status)).toEqual(["failed"]);
    await two.release(current);
  });

  test("rejected decisions: a stale epoch's rejection (and its risk_rejected event) is not stored; in one batch with a current one only the stale one fails", async () => {
    const repo = new OrderRepository(database.db, { maxInFlight: 1, run: database.run });
    const { two, stale, current } = await staleAndCurrent();
    const rejection = (id: string) => ({
      id,
      orgId,
      agentId,
      approved: false,
      intent: { market_id: "1234" },
      failures: [{ check: "daily_volume", code: "daily_limit" }],
      checks: [],
      orderId: null,
      createdAt: new Date(),
    });
    const stored = async (id: string) => (await database.db.select({ id: riskDecisions.id }).from(riskDecisions).where(eq(riskDecisions.id, id))).length === 1;
    const rejectedEvents = async (id: string) =>
      (await database.db.select({ id: events.id }).from(events).where(sql`${events.type} = 'risk_rejected' and ${events.data}->>'decision_id' = ${id}`)).length;

    const alone = `dec_fwstale${kind}${process.pid}`;
    await expect(repo.fenced(stale).insertDecision(rejection(alone))).rejects.toBeInstanceOf(LeaseLostError);
    expect([await stored(alone), await rejectedEvents(alone)]).toEqual([false, 0]);

    const staleInBatch = `dec_fwstale2${kind}${process.pid}`;
    const currentInBatch = `dec_fwcurrent${kind}${process.pid}`;
    const results = await Promise.allSettled([repo.fenced(stale).insertDecision(rejection(staleInBatch)), repo.fenced(current).insertDecision(rejection(currentInBatch))]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "fulfilled"]);
    expect([await stored(staleInBatch), await stored(currentInBatch)]).toEqual([false, true]);
    expect([await rejectedEvents(staleInBatch), await rejectedEvents(currentInBatch)]).toEqual([0, 1]);
    await two.release(current);
  });

  test.skipIf(kind === "pglite")("the kill's audit rows: a kill by an instance whose lease was taken over stores no kills row and no kill event (PostgreSQL: PGlite's writes are not fenced)", async () => {
    const trader = await newTrader(t);
    const id = trader.agent.id;
    // The app's actor holds the agent; another instance takes it over (a new epoch) without it knowing.
    expect((await t.call("GET", `/v1/agents/${id}`, { key: trader.key })).status).toBe(200);
    await database.db.execute(sql`update agent_leases set owner = 'another-instance', epoch = epoch + 1, expires_at = clock_timestamp() + interval '10 seconds' where agent_id = ${id}`);
    const killed = await t.call("POST", `/v1/agents/${id}/kill`, { key: trader.key, body: {} });
    expect({ status: killed.status, code: killed.body.code }).toEqual({ status: 503, code: "agent_busy" });
    const count = async (q: ReturnType<typeof sql>) => Number((await rowsOf(database, q))[0].n);
    expect(await count(sql`select count(*) as n from kills where agent_id = ${id}`)).toBe(0);
    expect(await count(sql`select count(*) as n from events where agent_id = ${id} and type in ('kill', 'breaker')`)).toBe(0);
    expect((await rowsOf(database, sql`select breaker_state from agents where id = ${id}`))[0].breaker_state).toBe("closed");
    expect(t.logs.some((l) => l.includes("lease lost") && l.includes(id))).toBe(true);
    await database.db.execute(sql`update agent_leases set owner = null, expires_at = clock_timestamp() where agent_id = ${id}`);
  });

  test("Idempotency-Key records: a run's answer, release or interruption changes nothing once the record is no longer its own", async () => {
    const a = new IdempotencyStore(database.db, `${kind}-fw-a-${process.pid}`);
    const b = new IdempotencyStore(database.db, `${kind}-fw-b-${process.pid}`);
    const scope = `scope-${kind}-${process.pid}`;
    const record = async (key: string) => (await database.db.select().from(idempotencyKeys).where(sql`${idempotencyKeys.scope} = ${scope} and ${idempotencyKeys.key} = ${key}`))[0];

    // A claims; its run is left interrupted (it lost its agent's lease midway); B's retry resumes it
    // (a new run, B the owner) and answers.
    const claim = await a.claim(scope, "k1", "h");
    if (claim.kind !== "claimed") throw new Error(claim.kind);
    expect(await a.interrupt(scope, "k1", claim.run)).toBe(true);
    expect((await b.claim(scope, "k1", "h")).kind).toBe("interrupted");
    const resumed = await b.resume(scope, "k1");
    expect(resumed).not.toBeNull();
    expect(resumed).not.toBe(claim.run);
    expect((await record("k1")).owner).toBe(`${kind}-fw-b-${process.pid}`);
    // A's late writes (its answer, its release, its interruption) change nothing of B's run.
    expect(await a.complete(scope, "k1", claim.run, 201, "stale", "application/json")).toBe(false);
    await a.release(scope, "k1", claim.run);
    expect(await a.interrupt(scope, "k1", claim.run)).toBe(false);
    expect((await record("k1")).status).toBe(0);
    expect(await b.complete(scope, "k1", resumed!, 201, "fresh", "application/json")).toBe(true);
    expect(await a.complete(scope, "k1", claim.run, 503, "stale", "application/json")).toBe(false);
    const done = await record("k1");
    expect([done.status, done.body]).toEqual([201, "fresh"]);
    expect((await b.claim(scope, "k1", "h")).kind).toBe("replay");

    // A record in progress whose instance is gone (its service_instances row lapsed: dead or paused)
    // is interrupted by the retry that finds it; one of a live instance is not.
    await database.db.execute(sql`insert into service_instances (id, started_at, expires_at) values (${`${kind}-fw-a-${process.pid}`}, now(), now() + interval '1 hour') on conflict (id) do update set expires_at = excluded.expires_at`);
    const live = await a.claim(scope, "k2", "h");
    expect(live.kind).toBe("claimed");
    expect((await b.claim(scope, "k2", "h")).kind).toBe("in_progress");
    await database.db.execute(sql`update service_instances set expires_at = now() - interval '1 second' where id = ${`${kind}-fw-a-${process.pid}`}`);
    expect((await b.claim(scope, "k2", "h")).kind).toBe("interrupted");
    // The gone instance's run, resuming (a paused process), changes nothing of it: neither answers nor releases.
    if (live.kind !== "claimed") throw new Error(live.kind);
    expect(await a.complete(scope, "k2", live.run, 201, "late", "application/json")).toBe(false);
    await a.release(scope, "k2", live.run);
    expect((await record("k2")).status).toBe(-1);

    // A paused instance comes back and registers again: a new life. Its records of the earlier life are a
    // dead run's for the others (interrupted by the retry that finds them), and the instance itself
    // writes nothing more of them: not even leaving them interrupted.
    const aId = `${kind}-fw-a-${process.pid}`;
    await database.db.execute(sql`update service_instances set started_at = now() - interval '1 minute', expires_at = now() + interval '1 hour' where id = ${aId}`);
    const old1 = await a.claim(scope, "k3", "h");
    const old2 = await a.claim(scope, "k4", "h");
    if (old1.kind !== "claimed" || old2.kind !== "claimed") throw new Error("not claimed");
    expect((await b.claim(scope, "k3", "h")).kind).toBe("in_progress");
    await database.db.execute(sql`update service_instances set started_at = now(), expires_at = now() + interval '1 hour' where id = ${aId}`);
    expect((await b.claim(scope, "k3", "h")).kind).toBe("interrupted");
    expect(await a.interrupt(scope, "k4", old2.run)).toBe(false);
    expect((await record("k4")).status).toBe(0);
    // Its run of the new life is its own as before.
    const fresh = await a.claim(scope, "k5", "h");
    if (fresh.kind !== "claimed") throw new Error(fresh.kind);
    expect((await b.claim(scope, "k5", "h")).kind).toBe("in_progress");
    expect(await a.interrupt(scope, "k5", fresh.run)).toBe(true);
  });
});
