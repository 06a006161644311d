/** CONTRACT 14 / issue 12: the event log and GET /v1/events (Server-Sent Events). */
import { beforeAll, expect, test } from "bun:test";
import { asc, eq, sql } from "drizzle-orm";
import { jsonbOrdered } from "../../src/db/jsonb-order.ts";
import { events, orders } from "../../src/db/schema.ts";
import { toOrderModel } from "../../src/modules/orders/order-view.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { connect } from "../support/sse.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { approved, expectProblem, newTrader, postIntent } from "../support/payload.ts";

describeEachDatabase("event stream", (_kind, database) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(await database(), { config: { eventsKeepaliveMs: 100 } });
  });

  test("a client that disconnects mid-flow and reconnects with Last-Event-ID sees every event exactly once", async () => {
    const tr = await newTrader(t);
    const agentId = tr.agent.id;
    const first = await connect(t, tr.key, `?agent_id=${agentId}`);
    const order = await approved(t, tr, { size_usdc: 5 });
    await first.until((e) => e.some((f) => f.data.data.order?.id === order.order_id), "the new order's event");
    const seenFirst = first.events();
    await first.close();

    // While disconnected: a cancel, a risk rejection, a manual trip, a kill (and its trip), a resume.
    expect((await t.call("DELETE", `/v1/orders/${order.order_id}`, { key: tr.key })).status).toBe(200);
    expectProblem(await postIntent(t, tr, { size_usdc: 500 }), 422, "risk_rejected");
    expect((await t.call("POST", `/v1/agents/${agentId}/breaker`, { key: tr.key })).status).toBe(200);
    const kill = await t.call("POST", `/v1/agents/${agentId}/kill`, { key: tr.key });
    expect(kill.status).toBe(200);
    expect((await t.call("POST", `/v1/agents/${agentId}/resume`, { key: tr.key })).status).toBe(200);

    const lastSeen = seenFirst.at(-1)!.id!;
    const second = await connect(t, tr.key, `?agent_id=${agentId}`, { "last-event-id": lastSeen });
    // And one more after the reconnection: followed live, not only replayed.
    const later = await approved(t, tr, { size_usdc: 6 });
    await second.until((e) => e.some((f) => f.data.data.order?.id === later.order_id), "the later order's event");
    await second.close();

    const ids = [...seenFirst, ...second.events()].map((f) => Number(f.id));
    expect(new Set(ids).size).toBe(ids.length); // exactly once
    expect(ids).toEqual([...ids].sort((a, b) => a - b)); // in order
    const stored = await (await database()).db.select().from(events).where(eq(events.agentId, agentId)).orderBy(asc(events.id));
    expect(ids).toEqual(stored.map((e) => e.id)); // every stored event, none missing

    const all = [...seenFirst, ...second.events()];
    for (const f of all) {
      expect(f.event).toBe(f.data.type);
      expect(String(f.data.id)).toBe(f.id!);
      expect(f.data.agent_id).toBe(agentId);
    }
    const types = all.map((f) => f.event);
    expect(types).toEqual(expect.arrayContaining(["order", "risk_rejected", "breaker", "kill"]));
    const orderStatuses = all.filter((f) => f.event === "order" && f.data.data.order.id === order.order_id).map((f) => f.data.data.order.status);
    expect(orderStatuses).toEqual(["awaiting_signature", "cancelled"]);
    const rejection = all.find((f) => f.event === "risk_rejected")!;
    expect(rejection.data.data.failures.map((x: any) => x.code)).toContain("order_too_large");
    const breakers = all.filter((f) => f.event === "breaker").map((f) => [f.data.data.state, f.data.data.reason]);
    expect(breakers).toEqual([
      ["tripped", "manual"],
      ["tripped", "kill"],
      ["closed", null],
    ]);
    const killEvent = all.find((f) => f.event === "kill")!;
    expect(killEvent.data.data).toMatchObject({ kill_id: kill.body.kill_id, agent_id: agentId, cancelled: kill.body.cancelled, failed: kill.body.failed });
  });

  test("?after= replays from the table; another organization's agent is 404; idle streams get keepalives", async () => {
    const tr = await newTrader(t);
    const a = await approved(t, tr);
    const b = await approved(t, tr, { size_usdc: 7 });
    const stored = await (await database()).db.select().from(events).where(eq(events.agentId, tr.agent.id)).orderBy(asc(events.id));
    // A new order's event stores its order's id; its data is rendered when read.
    expect(stored.map((e) => e.orderId ?? (e.data as any).order.id)).toEqual([a.order_id, b.order_id]);
    const replay = await connect(t, tr.key, `?agent_id=${tr.agent.id}&after=${stored[0].id}`);
    await replay.until((e) => e.length >= 1, "the replayed event");
    await replay.until(() => replay.frames.some((f) => f.comment === "keepalive"), "a keepalive", 3000);
    expect(replay.events().map((f) => f.data.data.order.id)).toEqual([b.order_id]);
    await replay.close();

    const other = await newTrader(t);
    expectProblem(await t.call("GET", `/v1/events?agent_id=${tr.agent.id}`, { key: other.key }), 404, "not_found");
    expectProblem(await t.call("GET", `/v1/events?agent_id=${tr.agent.id}`), 401, "unauthenticated");
    // Without agent_id: the caller's organization only.
    const orgWide = await connect(t, other.key, "?after=0");
    await approved(t, other);
    await orgWide.until((e) => e.length >= 1, "the other organization's own event");
    await new Promise((r) => setTimeout(r, 50));
    expect(orgWide.events().every((f) => f.data.agent_id === other.agent.id)).toBe(true);
    await orgWide.close();
  });
});

describeEachDatabase("a new order's event, rendered from its order row", (_kind, database) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(await database());
  });

  test("serves the order as created, byte for byte as the view stored as jsonb read back, after the order has moved on", async () => {
    const db = (await database()).db;
    const tr = await newTrader(t);
    const order = await approved(t, tr);
    const [created] = await db.select().from(orders).where(eq(orders.id, order.order_id));
    // What the event held when its data was the view stored in a jsonb column (read back through the driver).
    const view = { order: toOrderModel(created) };
    const result = (await db.execute(sql`select ${JSON.stringify(view)}::jsonb as d`)) as unknown as { d: unknown }[] | { rows: { d: unknown }[] };
    const asStored = ("rows" in result ? result.rows : result)[0].d;
    const [row] = await db.select().from(events).where(eq(events.orderId, order.order_id));
    expect(row.data).toBeNull();

    const log = t.app.services.eventLog;
    const read = async () => (await log.after({ orgId: created.orgId, agentId: created.agentId }, 0)).filter((e) => e.type === "order");
    const [first] = await read();
    expect(JSON.stringify(first.data)).toBe(JSON.stringify(asStored));

    // Cancelled: the creation event still shows the order as created, the cancellation its own state.
    expect((await t.call("DELETE", `/v1/orders/${order.order_id}`, { key: tr.key })).status).toBe(200);
    const [again, cancelled] = await read();
    expect(JSON.stringify(again.data)).toBe(JSON.stringify(asStored));
    expect((cancelled.data as any).order.status).toBe("cancelled");
    expect((cancelled.data as any).order.history.map((h: any) => h.status)).toEqual(["awaiting_signature", "cancelled"]);
  });

  test("jsonb key order: shorter keys first, then by bytes, at every depth", () => {
    const ordered = jsonbOrdered({ zeta: 1, b: [{ status: 1, at: 2, reason: 3, by: 4 }], aa: { y: null, x: undefined, é: 1, e: 2 }, a: "s" });
    expect(JSON.stringify(ordered)).toBe('{"a":"s","b":[{"at":2,"by":4,"reason":3,"status":1}],"aa":{"e":2,"y":null,"é":1},"zeta":1}');
  });
});

describeEachDatabase("event log reads and wake-ups", (_kind, database) => {
  test("a wake-up while a reader is still reading is not left to the poll; latestId is the scope's newest event", async () => {
    const t = await createTestApp(await database());
    const log = t.app.services.eventLog;
    const before = log.wakeCount;
    log.wake(); // a commit lands while the reader is between its read and its wait
    const started = performance.now();
    await log.waitForMore(10_000, undefined, before);
    expect(performance.now() - started).toBeLessThan(500);

    const tr = await newTrader(t);
    const a = await approved(t, tr);
    const other = await newTrader(t, { key: tr.key });
    await approved(t, other);
    const orgId = tr.agent.org_id;
    const all = await log.after({ orgId }, 0, 1000);
    const mine = all.filter((e) => e.agentId === tr.agent.id);
    expect(await log.latestId({ orgId })).toBe(all.at(-1)!.id);
    expect(await log.latestId({ orgId, agentId: tr.agent.id })).toBe(mine.at(-1)!.id);
    expect((mine.at(-1)!.data as any).order.id).toBe(a.order_id);
    expect(await log.latestId({ orgId: "org_none" })).toBe(0);
  });
});
