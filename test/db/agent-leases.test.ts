/**
 * Agent leases and their fence in the database (src/db/agent-leases.ts, src/db/lease-fence.ts), on
 * both databases: two lease holders on one database (two instances' DbLeases; on PGlite they share the
 * one process, which is what the fence itself cares about): a lease is taken free, refused while its
 * owner lives, handed over on request, taken once lapsed; a write under a stale epoch (the group-commit
 * insert, a status change, the agent store's writes) changes nothing and throws LeaseLostError, and
 * the lease's holder is told it lost it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { LeaseLostError } from "../../actors/lease-port.ts";
import { DbLeases } from "../../src/db/agent-leases.ts";
import type { Database } from "../../src/db/database.ts";
import { OrderRepository, type NewOrderRow } from "../../src/db/order-repository.ts";
import { agents, orders } from "../../src/db/schema.ts";
import { DbAgentStore } from "../../src/modules/agents/agent-store.ts";
import type { TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { orderRow } from "../support/order-row.ts";
import { unleasedTrader } from "../support/unleased-trader.ts";

const quiet = { info: () => {}, warn: () => {} };

describeEachDatabase("agent leases and their fence", (kind, open) => {
  let database: Database;
  let t: TestApp;
  let agentId: string;
  let orgId: string;
  const holders: DbLeases[] = [];
  const lostAt: Record<string, string[]> = { one: [], two: [], three: [] };
  const asked: Record<string, { agent: string; urgent: boolean }[]> = { one: [], two: [], three: [] };
  let n = 0;

  const holder = (name: "one" | "two" | "three", ttlMs = 400) => {
    const h = new DbLeases(database, { instanceId: `${kind}-${name}-${process.pid}`, ttlMs, renewEveryMs: 100, log: quiet });
    h.setHandlers({ releaseRequested: (agent, urgent) => asked[name].push({ agent, urgent }), lost: (id) => lostAt[name].push(id) });
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

  const order = (over: Partial<NewOrderRow> = {}): NewOrderRow => {
    const id = `ord_lease${kind}${process.pid}x${++n}`;
    const none = { typedData: null, signatureDeadline: null, venueOrderId: null, clientOrderId: null };
    return orderRow({ id, orgId, agentId, status: "awaiting_signature", orderHash: `0x${"cd".repeat(32)}`, ...none, decisionId: `dec_${id}`, ...over });
  };
  const decision = (o: NewOrderRow) => ({ id: o.decisionId!, orgId, agentId, approved: true, intent: {}, failures: [], checks: [], orderId: o.id, createdAt: o.createdAt! });
  const exists = async (id: string) => (await database.db.select({ id: orders.id }).from(orders).where(eq(orders.id, id))).length === 1;

  test("free → taken; refused while its owner lives; handed over on request; taken once lapsed; stale writes change nothing", async () => {
    const one = holder("one");
    const two = holder("two");
    const repo = new OrderRepository(database.db, { maxInFlight: 1, run: database.run });
    const store = new DbAgentStore(database.db);

    const first = await one.acquire(agentId, { waitMs: 0, ask: false });
    expect(first).not.toBeNull();
    // Another holder does not get it while the first renews it, without asking or within a short wait.
    expect(await two.acquire(agentId, { waitMs: 0, ask: false })).toBeNull();

    // Writes under the first lease go through.
    const ok = order();
    await repo.fenced(first!).insert(ok, decision(ok));
    expect(await exists(ok.id)).toBe(true);

    // Released on request: the second takes it at once, with the next epoch.
    const released = one.release(first!);
    const second = await two.acquire(agentId, { waitMs: 2000, ask: true });
    await released;
    expect(second?.epoch).toBe(first!.epoch + 1);

    // The first lease's writes are refused now: insert, status change, the agent store's writes.
    const stale = order();
    await expect(repo.fenced(first!).insert(stale, decision(stale))).rejects.toBeInstanceOf(LeaseLostError);
    expect(await exists(stale.id)).toBe(false);
    await expect(repo.fenced(first!).transition(ok.id, ["awaiting_signature"], "cancelled", "stale")).rejects.toBeInstanceOf(LeaseLostError);
    expect((await repo.get(ok.id))?.status).toBe("awaiting_signature");
    const limitsBefore = (await database.db.select({ limits: agents.limits }).from(agents).where(eq(agents.id, agentId)))[0].limits;
    await expect(store.fenced(first!).saveLimits(agentId, { ...(limitsBefore as any), daily_volume_usdc: 1 })).rejects.toBeInstanceOf(LeaseLostError);
    expect((await database.db.select({ limits: agents.limits }).from(agents).where(eq(agents.id, agentId)))[0].limits).toEqual(limitsBefore);

    // In one batch with a current write, only the stale one fails (the batch is retried row by row).
    const mixedStale = order();
    const mixedOk = order();
    const results = await Promise.allSettled([
      repo.fenced(first!).insert(mixedStale, decision(mixedStale)),
      repo.fenced(second!).insert(mixedOk, decision(mixedOk)),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "fulfilled"]);
    expect([await exists(mixedStale.id), await exists(mixedOk.id)]).toEqual([false, true]);

    // The second holder stops renewing (stopped): its lease lapses and the first takes it over.
    await two.stop();
    const third = await one.acquire(agentId, { waitMs: 3000, ask: true });
    expect(third?.epoch).toBe(second!.epoch + 1);
    const late = order();
    await expect(repo.fenced(second!).insert(late, decision(late))).rejects.toBeInstanceOf(LeaseLostError);
    expect(await exists(late.id)).toBe(false);
    await one.release(third!);
  });

  test("a renewal never leaves the instance's registration outliving the leases it renewed (a paused process's runs end no later than its leases)", async () => {
    const three = holder("three", 1500);
    const lease = await three.acquire(agentId, { waitMs: 3000, ask: true });
    expect(lease).not.toBeNull();
    const instance = `${kind}-three-${process.pid}`;
    const registrationWithinLease = async (q: { execute: typeof database.db.execute }) => {
      const rows = (await q.execute(
        sql`select (select expires_at from service_instances where id = ${instance}) <= (select expires_at from agent_leases where agent_id = ${agentId} and owner = ${instance}) as ok`,
      )) as unknown as { rows?: { ok: boolean }[] } & { ok: boolean }[];
      return (rows.rows ?? rows)[0]?.ok;
    };
    // Several renewals (every 100 ms): after each, the registration expires no later than the lease.
    for (let i = 0; i < 3; i++) {
      await Bun.sleep(130);
      expect(await registrationWithinLease(database.db)).toBe(true);
    }
    // A renewal stalled between its statements (here: the lease row held locked for three renewal
    // periods, as a process paused there would leave it): the registration is not extended past it.
    const during = await database.db.transaction(async (tx) => {
      await tx.execute(sql`select agent_id from agent_leases where agent_id = ${agentId} for update`);
      await Bun.sleep(350);
      return registrationWithinLease(tx);
    });
    expect(during).toBe(true);
    await three.release(lease!);
  });

  test("a holder whose lease was taken over while it did not renew (a paused process) learns it at its next renewal", async () => {
    const one = holder("one", 300);
    const two = holder("two", 300);
    const lease = await one.acquire(agentId, { waitMs: 1000, ask: false });
    expect(lease).not.toBeNull();
    // The first stops renewing (its timer held back, as in a paused process): the second takes it once lapsed.
    const internals = one as unknown as { timer: ReturnType<typeof setInterval>; renew(): Promise<void> };
    clearInterval(internals.timer);
    const taken = await two.acquire(agentId, { waitMs: 2000, ask: true });
    expect(taken?.epoch).toBe(lease!.epoch + 1);
    lostAt.one.length = 0;
    await internals.renew();
    expect(lease!.lost).toBe(true);
    expect(lostAt.one).toEqual([agentId]);
    expect(one.holds(agentId)).toBe(false);
    await two.release(taken!);
  });

  test("an urgent request (a kill) gets the lease handed to it directly: a waiter that asked before it cannot take it in between", async () => {
    const one = holder("one", 1000);
    const two = holder("two", 1000);
    const three = holder("three", 1000);
    await Promise.all([one.start(), two.start(), three.start()]);
    const first = await one.acquire(agentId, { waitMs: 1000, ask: false });
    expect(first).not.toBeNull();
    asked.one.length = 0;
    // An ordinary request waits (an intent at another instance), then an urgent one (a kill).
    let twoGot: number | null = null;
    const twoWaits = two.acquire(agentId, { waitMs: 5000, ask: true }).then((l) => {
      twoGot = Date.now();
      return l;
    });
    for (let i = 0; i < 100 && !asked.one.length; i++) await Bun.sleep(20);
    const threeWaits = three.acquire(agentId, { waitMs: 5000, ask: true, urgent: true });
    for (let i = 0; i < 100 && !asked.one.some((a) => a.urgent); i++) await Bun.sleep(20);
    expect(asked.one.some((a) => a.agent === agentId && a.urgent)).toBe(true);
    // The owner lets go: the row names the urgent requester at once (nobody else can take it).
    await one.release(first!);
    const row = (await database.db.execute(sql`select owner from agent_leases where agent_id = ${agentId}`)) as unknown;
    const rows = ((row as { rows?: { owner: string | null }[] }).rows ?? (row as { owner: string | null }[])) as { owner: string | null }[];
    expect(rows[0].owner).toBe(`${kind}-three-${process.pid}`);
    const urgentLease = await threeWaits;
    expect(urgentLease?.epoch).toBe(first!.epoch + 1);
    expect(twoGot).toBeNull();
    // The ordinary waiter gets it once the urgent one is done with it.
    await Bun.sleep(50);
    expect(twoGot).toBeNull();
    await three.release(urgentLease!);
    const later = await twoWaits;
    expect(later?.epoch).toBe(first!.epoch + 2);
    await two.release(later!);
  });

  test("opening an agent's credentials inside its actor does not wait for a hand-over of the agent under way (which waits for that very work)", async () => {
    const { agents, credentials, leases } = t.app.services;
    const actor = await agents.registry.get(agentId);
    expect(actor).not.toBeNull();
    // A placement under way (as between an order's write and its venue call, which opens the credentials).
    actor!.openInflight(`ord_leasehold${kind}${process.pid}`);
    // Another instance asks for the agent: the hand-over waits for the placement (LEASE_HANDOFF_MS).
    (leases as unknown as { handlers: { releaseRequested(agent: string, urgent: boolean): void } }).handlers.releaseRequested(agentId, false);
    await Bun.sleep(100);
    expect(agents.registry.peek(agentId)).toBe(actor!);
    // The placement's credentials (none stored here: null) are read at once, not after the hand-over
    // gave up waiting for the placement that is waiting for them.
    const started = Date.now();
    const opened = await Promise.race([credentials.withAgentCredentials(agentId, async () => "opened"), Bun.sleep(2000).then(() => "stalled")]);
    expect(opened).toBeNull();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await agents.signerAddressOf(agentId)).toBe(actor!.view().profile.signerAddress);
  }, 15_000);
});
