/**
 * The guards' transitions in the event log (docs/events.md), as GET /v1/events replays them: an
 * order pending approval, its approval and a rejection (`order` events), a runaway trip (`breaker`,
 * reason runaway), and a heartbeat kill (`breaker` reason heartbeat, the cancelled order, and the
 * `kill` answer with reason heartbeat). Read from the stored log, in order. PGlite, and PostgreSQL
 * when TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { DEM_YES, newTrader, patchLimits, postIntent, type Trader } from "../support/payload.ts";
import { type FakeClock, fakeClock, guardApp } from "./guard-app.ts";

const BUY = { market_id: DEM_YES, side: "buy", size_usdc: 15, price: 0.47 };

describeEachDatabase("guard events", (_kind, database) => {
  let t: TestApp;
  let clock: FakeClock;
  beforeAll(async () => {
    clock = fakeClock();
    ({ t } = await guardApp(await database(), clock));
  });
  afterAll(() => t?.app.stop());

  /** The agent's events as the stream sends them: type and the fields that matter here. */
  async function eventsOf(tr: Trader) {
    const rows = await t.app.services.eventLog.after({ orgId: tr.agent.org_id, agentId: tr.agent.id }, 0);
    return rows.map((e) => {
      const d = e.data as any;
      if (e.type === "order") return { type: e.type, id: d.order.id, status: d.order.status, by: d.order.history.at(-1).by };
      if (e.type === "breaker") return { type: e.type, state: d.state, reason: d.reason };
      if (e.type === "kill") return { type: e.type, reason: d.reason, cancelled: d.cancelled };
      return { type: e.type, codes: d.failures?.map((f: any) => f.code) };
    });
  }

  test("pending approval, approval and rejection are order events; the decision names who made it", async () => {
    const tr = await newTrader(t);
    await patchLimits(t, tr, { approval_threshold_usdc: 10, duplicate_window_s: 0 });
    const a = (await postIntent(t, tr, BUY)).body.order_id;
    const b = (await postIntent(t, tr, BUY)).body.order_id;
    expect((await t.call("POST", `/v1/orders/${a}/approve`, { key: tr.key })).status).toBe(200);
    expect((await t.call("POST", `/v1/orders/${b}/reject`, { key: tr.key })).status).toBe(200);
    const keyId = (await t.call("GET", "/v1/api-keys", { key: tr.key })).body.data[0].id;
    expect(await eventsOf(tr)).toEqual([
      { type: "order", id: a, status: "pending_approval", by: undefined },
      { type: "order", id: b, status: "pending_approval", by: undefined },
      { type: "order", id: a, status: "awaiting_signature", by: keyId },
      { type: "order", id: b, status: "rejected", by: keyId },
    ]);
  });

  test("an approval's expiry is an order event", async () => {
    const tr = await newTrader(t);
    await patchLimits(t, tr, { approval_threshold_usdc: 10 });
    const res = await postIntent(t, tr, BUY);
    clock.t = Date.parse(res.body.approval_deadline);
    await t.app.services.orders.expireDue(new Date(clock.now()));
    expect((await eventsOf(tr)).map((e: any) => e.status)).toEqual(["pending_approval", "expired"]);
  });

  test("a runaway trip is a breaker event with reason runaway, after the refusals' risk_rejected events", async () => {
    const tr = await newTrader(t);
    await patchLimits(t, tr, { runaway_trip_count: 2, max_open_orders: 1 });
    const first = (await postIntent(t, tr, { ...BUY, size_usdc: 5 })).body.order_id;
    await postIntent(t, tr, { ...BUY, size_usdc: 6 });
    await postIntent(t, tr, { ...BUY, size_usdc: 7 });
    expect(await eventsOf(tr)).toEqual([
      { type: "order", id: first, status: "awaiting_signature", by: undefined },
      { type: "risk_rejected", codes: ["open_orders_exceeded"] },
      { type: "breaker", state: "tripped", reason: "runaway" },
      { type: "risk_rejected", codes: ["open_orders_exceeded"] },
    ]);
  });

  test("a heartbeat kill: breaker (heartbeat), the cancelled order, and the kill answer with reason heartbeat", async () => {
    const tr = await newTrader(t);
    const order = (await postIntent(t, tr, { ...BUY, size_usdc: 5 })).body.order_id;
    const on = await t.call("PUT", `/v1/agents/${tr.agent.id}/heartbeat`, { key: tr.key, body: { interval_s: 5 } });
    clock.t = Date.parse(on.body.heartbeat.deadline_at) + 1;
    await t.app.services.heartbeats.sweep();
    expect(await eventsOf(tr)).toEqual([
      { type: "order", id: order, status: "awaiting_signature", by: undefined },
      { type: "breaker", state: "tripped", reason: "heartbeat" },
      { type: "order", id: order, status: "cancelled", by: undefined },
      { type: "kill", reason: "heartbeat", cancelled: [order] },
    ]);
  });
});
