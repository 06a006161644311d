/**
 * A delegated placement's status write (OrderRepository.transitionPlaced) with the database's
 * query runner, on both databases: for an order still as it was inserted, one statement per batch
 * writes the status, the history, the venue id and what filled, and the `order` event, and answers
 * the row the repository predicted; that row and that event must be what reading the order back
 * gives. An order changed since its insert (a kill, a fill reported first) takes the general
 * conditional write instead, exactly as before. Under a stale lease nothing is written.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, asc, eq } from "drizzle-orm";
import { LeaseLostError } from "../../actors/lease-port.ts";
import { DbLeases } from "../../src/db/agent-leases.ts";
import type { Database } from "../../src/db/database.ts";
import { EventLog } from "../../src/db/event-log.ts";
import { jsonbOrdered } from "../../src/db/jsonb-order.ts";
import { type NewOrderRow, OrderRepository } from "../../src/db/order-repository.ts";
import { events, orders } from "../../src/db/schema.ts";
import { toOrderModel } from "../../src/modules/orders/order-view.ts";
import type { TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { orderRow } from "../support/order-row.ts";
import { unleasedTrader } from "../support/unleased-trader.ts";

describeEachDatabase("a delegated placement's status write", (kind, open) => {
  let database: Database;
  let t: TestApp;
  let repo: OrderRepository;
  let agentId: string;
  let orgId: string;
  let n = 0;
  const leases: DbLeases[] = [];
  const movedByOneStatement = new Set<string>();
  /** The statements that wrote new orders and placements together. */
  const combined: { params: (string | null)[]; moved: string[] }[] = [];
  /** How many such statements were sent (a refused one included). */
  let combinedSent = 0;
  const orderEvent = (row: Parameters<typeof toOrderModel>[0]) => ({ order: toOrderModel(row) });

  beforeAll(async () => {
    database = await open();
    ({ t, agentId, orgId } = await unleasedTrader(database));
    // The orders each one-statement write moved (its answer), to tell it from the general write.
    const query: Database["query"] = async (text, params, opts) => {
      if (text.includes("u as (update orders") && text.includes("insert into orders")) combinedSent++;
      const rows = await database.query(text, params, opts);
      // The placements' statement answers the ids it moved; the one that also writes new orders, ('u', id).
      const moved = text.includes("insert into orders") ? rows.filter((r) => r[0] === "u").map((r) => r[1]!) : rows.map(([id]) => id!);
      if (text.includes("u as (update orders")) for (const id of moved) movedByOneStatement.add(id);
      if (text.includes("u as (update orders") && text.includes("insert into orders")) combined.push({ params, moved });
      return rows;
    };
    repo = new OrderRepository(database.db, { maxInFlight: 1, run: database.run, query, orderEvent });
  });
  afterAll(async () => {
    for (const l of leases) await l.stop();
  });

  const submitting = (): NewOrderRow => {
    const id = `ord_place${kind}${process.pid}x${++n}${Date.now().toString(36)}`;
    return orderRow(
      {
        id,
        orgId,
        agentId,
        mode: "delegated",
        marketId: "71321045679252212594626385532706912750332728571942532289631379312455583992563",
        conditionId: "0xcondition",
        sizeUnits: 5_000_000n,
        price: "0.52",
        status: "submitting",
        orderHash: `0x${(n + 1000).toString(16).padStart(64, "0")}`,
        typedData: {
          domain: { name: "Polymarket CTF Exchange", version: "2", chainId: 137, verifyingContract: `0x${"11".repeat(20)}` },
          primaryType: "Order",
          message: { salt: "42", maker: `0x${"22".repeat(20)}`, side: 0, makerAmount: "5000000", takerAmount: "9615384", note: `it's "quoted" \\ é` } as never,
        },
        signatureDeadline: null,
        venueOrderId: null,
        clientOrderId: `cli-${id}`,
        decisionId: `dec_${id}`,
      },
      "approved by the risk engine",
    );
  };
  const insert = (r: OrderRepository, o: NewOrderRow) =>
    r.insert(o, { id: o.decisionId!, orgId, agentId, approved: true, intent: { market_id: o.marketId, side: "buy", size_usdc: 5, price: 0.52 }, failures: [], checks: [], orderId: o.id, createdAt: o.createdAt! });
  /**
   * The order's `order` events after its creation's, as the stream serves them (EventLog: a placement's
   * is stored without data and rendered from the row when read); its creation's is checked first.
   */
  const orderEvents = async (id: string) => {
    const all = (await new EventLog(database.db, orderEvent).after({ orgId, agentId }, 0, 100_000)).filter(
      (e) => e.type === "order" && (e.data as { order?: { id?: string } }).order?.id === id,
    );
    expect((all[0]?.data as any)?.order).toMatchObject({ status: "submitting", venue_order_id: null, filled_usdc: 0 });
    expect((all[0]?.data as any)?.order.history).toHaveLength(1);
    return all.slice(1);
  };

  test("a batch of placements: each answers the row read back, and one `order` event is served whose data is that row's view", async () => {
    const placed = Array.from({ length: 6 }, submitting);
    await Promise.all(placed.map((o) => insert(repo, o)));
    const outcomes = [
      { to: "open", filled: 0n },
      { to: "filled", filled: 5_000_000n },
      { to: "cancelled", filled: 0n },
      { to: "open", filled: 1_250_000n },
      { to: "open", filled: 0n },
      { to: "filled", filled: 4_999_999n },
    ] as const;
    const rows = await Promise.all(placed.map((o, i) => repo.transitionPlaced(o.id, outcomes[i].to, `placed ${i}`, { venueOrderId: `0xvenue${o.id}`, filledUnits: outcomes[i].filled })));
    for (const [i, o] of placed.entries()) {
      expect(movedByOneStatement.has(o.id)).toBe(true);
      const row = rows[i]!;
      const stored = (await repo.get(o.id))!;
      expect(row).toEqual(stored);
      expect(stored.status).toBe(outcomes[i].to);
      expect(stored.filledUnits).toBe(outcomes[i].filled);
      expect(stored.venueOrderId).toBe(`0xvenue${o.id}`);
      expect(stored.history.map((h) => [h.status, h.reason])).toEqual([
        ["submitting", "approved by the risk engine"],
        [outcomes[i].to, `placed ${i}`],
      ]);
      // The same text as a row read back: the history in jsonb's key order.
      expect(JSON.stringify(row.history)).toBe(JSON.stringify(stored.history));
      const evs = await orderEvents(o.id);
      expect(evs).toHaveLength(1);
      expect(evs[0].data).toEqual(jsonbOrdered(orderEvent(stored)) as Record<string, unknown>);
      expect(evs[0].createdAt.getTime()).toBe(stored.updatedAt.getTime());
      // The venue's reports of it name it by its hash or the venue's id: known without a read.
      expect(repo.placedOrder({ venueOrderId: `0xvenue${o.id}` })).toEqual({ id: o.id, agentId });
      expect(repo.placedOrder({ orderHash: o.orderHash! })).toEqual({ id: o.id, agentId });
    }
  });

  test("a placement's event stores no data and is served as the placement left the order, whatever changed since", async () => {
    const o = submitting();
    await insert(repo, o);
    const placed = (await repo.transitionPlaced(o.id, "open", "resting at the venue", { venueOrderId: `0xv${o.id}`, filledUnits: 1_000_000n }))!;
    expect(movedByOneStatement.has(o.id)).toBe(true);
    const asServed = jsonbOrdered(orderEvent(placed)) as Record<string, unknown>;
    const stored = await database.db.select().from(events).where(eq(events.orderId, o.id)).orderBy(asc(events.id));
    expect(stored.map((e) => [e.type, e.data, e.orderStep, e.orderVenueId, e.orderFilledUnits])).toEqual([
      ["order", null, null, null, null],
      ["order", null, 2, `0xv${o.id}`, 1_000_000n],
    ]);
    expect(stored[1]!.createdAt.getTime()).toBe(placed.updatedAt.getTime());
    expect((await orderEvents(o.id)).map((e) => e.data)).toEqual([asServed]);
    // Later writes: a larger fill, a flag, a cancel (each with its own event); the placement's stays.
    await database.db.update(orders).set({ filledUnits: 3_000_000n, flaggedForReview: true, updatedAt: new Date() }).where(eq(orders.id, o.id));
    const cancelled = (await repo.transition(o.id, ["open"], "cancelled", "cancelled by the client"))!;
    expect(cancelled.history).toHaveLength(3);
    const evs = await orderEvents(o.id);
    expect(evs.map((e) => e.data)).toEqual([asServed, jsonbOrdered(orderEvent(cancelled)) as Record<string, unknown>]);
    expect(JSON.stringify(evs[0]!.data)).toBe(JSON.stringify(asServed));
  });

  test("an order changed since its insert is written as before: a kill's status stays (null, no event), a fill reported first is kept", async () => {
    const killed = submitting();
    const filledFirst = submitting();
    await insert(repo, killed);
    await insert(repo, filledFirst);
    expect(await repo.transitionMany([killed.id], ["submitting"], "cancelled", "killed")).toEqual([killed.id]);
    // A fill the user channel reported before the placement's answer (the fill store's write).
    await database.db.update(orders).set({ filledUnits: 2_000_000n, updatedAt: new Date() }).where(eq(orders.id, filledFirst.id));
    const [k, f] = await Promise.all([
      repo.transitionPlaced(killed.id, "open", "resting at the venue", { venueOrderId: "0xkilled", filledUnits: 0n }),
      repo.transitionPlaced(filledFirst.id, "open", "resting at the venue", { venueOrderId: "0xfilled", filledUnits: 1_000_000n }),
    ]);
    expect(k).toBeNull();
    expect([movedByOneStatement.has(killed.id), movedByOneStatement.has(filledFirst.id)]).toEqual([false, false]);
    const killedRow = (await repo.get(killed.id))!;
    expect(killedRow.status).toBe("cancelled");
    expect(killedRow.venueOrderId).toBeNull();
    expect((await orderEvents(killed.id)).map((e) => (e.data as any).order.status)).toEqual(["cancelled"]);
    // What filled never shrinks: the larger amount the fill reported stays.
    expect(f).toEqual((await repo.get(filledFirst.id))!);
    expect(f).toMatchObject({ status: "open", venueOrderId: "0xfilled", filledUnits: 2_000_000n });
    expect((await orderEvents(filledFirst.id)).map((e) => (e.data as any).order.status)).toEqual(["open"]);
  });

  test("new orders and placements written at the same moment: one statement; the orders stored with their creation events, each placement as alone", async () => {
    const placed = Array.from({ length: 3 }, submitting);
    await Promise.all(placed.map((o) => insert(repo, o)));
    const fresh = Array.from({ length: 4 }, submitting);
    const before = combined.length;
    const [rows] = await Promise.all([
      Promise.all(placed.map((o, i) => repo.transitionPlaced(o.id, "open", `placed ${i}`, { venueOrderId: `0xvenue${o.id}`, filledUnits: BigInt(i) * 1_000_000n }))),
      Promise.all(fresh.map((o) => insert(repo, o))),
    ]);
    // One statement carried all seven writes.
    expect(combined.length - before).toBe(1);
    const statement = combined[combined.length - 1]!;
    expect(statement.moved.sort()).toEqual(placed.map((o) => o.id).sort());
    for (const o of fresh) expect(statement.params).toContain(o.id);
    for (const [i, o] of placed.entries()) {
      const stored = (await repo.get(o.id))!;
      expect(rows[i]).toEqual(stored);
      expect(stored).toMatchObject({ status: "open", venueOrderId: `0xvenue${o.id}`, filledUnits: BigInt(i) * 1_000_000n });
      const evs = await orderEvents(o.id);
      expect(evs).toHaveLength(1);
      expect(evs[0].data).toEqual(jsonbOrdered(orderEvent(stored)) as Record<string, unknown>);
    }
    for (const o of fresh) {
      const stored = (await repo.get(o.id))!;
      expect(stored).toMatchObject({ status: "submitting", venueOrderId: null, history: o.history });
      // The new order's event: its id, no data (rendered from the row when read).
      const created = await database.db.select().from(events).where(eq(events.orderId, o.id));
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({ type: "order", data: null, agentId, orgId });
    }
    // A later status change appends to the history the placement wrote (JSON text, read as jsonb).
    const cancelled = (await repo.transition(placed[0]!.id, ["open"], "cancelled", "cancelled by the client"))!;
    expect(cancelled.history.map((h) => [h.status, h.reason])).toEqual([
      ["submitting", "approved by the risk engine"],
      ["open", "placed 0"],
      ["cancelled", "cancelled by the client"],
    ]);
    expect(cancelled).toEqual((await repo.get(placed[0]!.id))!);
    // Placed in turn, alone or together with more new orders: as any placement.
    const more = submitting();
    const [row] = await Promise.all([repo.transitionPlaced(fresh[0]!.id, "filled", "matched", { venueOrderId: "0xm", filledUnits: 5_000_000n }), insert(repo, more)]);
    expect(row).toEqual((await repo.get(fresh[0]!.id))!);
    expect(row).toMatchObject({ status: "filled", filledUnits: 5_000_000n });
  });

  describe("under a lease", () => {
    test("a stale epoch writes nothing and throws LeaseLostError; the current one writes", async () => {
      const one = new DbLeases(database, { instanceId: `${kind}-place-one-${process.pid}`, ttlMs: 400, renewEveryMs: 100, log: { info: () => {}, warn: () => {} } });
      const two = new DbLeases(database, { instanceId: `${kind}-place-two-${process.pid}`, ttlMs: 400, renewEveryMs: 100, log: { info: () => {}, warn: () => {} } });
      leases.push(one, two);
      const first = (await one.acquire(agentId, { waitMs: 0, ask: false }))!;
      expect(first).not.toBeNull();
      const stale = submitting();
      const current = submitting();
      await insert(repo.fenced(first), stale);
      await insert(repo.fenced(first), current);
      // Handed over: the first lease's epoch is stale from now on.
      const released = one.release(first);
      const second = (await two.acquire(agentId, { waitMs: 2000, ask: true }))!;
      await released;
      expect(second.epoch).toBe(first.epoch + 1);
      const [s, c] = await Promise.allSettled([
        repo.fenced(first).transitionPlaced(stale.id, "open", "resting at the venue", { venueOrderId: "0xstale", filledUnits: 0n }),
        repo.fenced(second).transitionPlaced(current.id, "open", "resting at the venue", { venueOrderId: "0xcurrent", filledUnits: 0n }),
      ]);
      expect(s.status).toBe("rejected");
      expect((s as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
      expect((await repo.get(stale.id))!.status).toBe("submitting");
      expect(await orderEvents(stale.id)).toHaveLength(0);
      expect(c.status).toBe("fulfilled");
      expect(movedByOneStatement.has(current.id)).toBe(true);
      expect((await repo.get(current.id))!).toMatchObject({ status: "open", venueOrderId: "0xcurrent" });

      // The same in one statement beside new orders: the stale writes (a placement, a new order) are
      // refused alone, the current ones written.
      const stalePlacement = submitting();
      const currentPlacement = submitting();
      await insert(repo.fenced(second), stalePlacement);
      await insert(repo.fenced(second), currentPlacement);
      const staleNew = submitting();
      const currentNew = submitting();
      const before = combinedSent;
      const outcomes = await Promise.allSettled([
        repo.fenced(first).transitionPlaced(stalePlacement.id, "open", "resting at the venue", { venueOrderId: "0xstale2", filledUnits: 0n }),
        repo.fenced(second).transitionPlaced(currentPlacement.id, "open", "resting at the venue", { venueOrderId: "0xcurrent2", filledUnits: 0n }),
        insert(repo.fenced(first), staleNew),
        insert(repo.fenced(second), currentNew),
      ]);
      expect(combinedSent).toBeGreaterThan(before);
      expect(outcomes.map((o) => o.status)).toEqual(["rejected", "fulfilled", "rejected", "fulfilled"]);
      expect((outcomes[0] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
      expect((outcomes[2] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
      expect((await repo.get(stalePlacement.id))!.status).toBe("submitting");
      expect(await orderEvents(stalePlacement.id)).toHaveLength(0);
      expect(await repo.get(staleNew.id)).toBeNull();
      expect((await repo.get(currentPlacement.id))!).toMatchObject({ status: "open", venueOrderId: "0xcurrent2" });
      expect((await repo.get(currentNew.id))!.status).toBe("submitting");
      await two.release(second);
    });
  });
});
