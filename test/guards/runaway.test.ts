/**
 * Runaway guards in the breaker check (docs/api.md#runaway-guards), over HTTP on the real default
 * limits and a fake clock: the order rate per minute, the open-order cap, the duplicate window and
 * its boundary, the breaker trip with reason `runaway`, the limits' validation, and approvals
 * remembered across an actor's restart. PGlite, and PostgreSQL when TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { DEM_YES, expectInvalid, expectProblem, getAgent, holdShares, MADRID_YES, newTrader, patchLimits, postIntent, type Trader } from "../support/payload.ts";
import { type FakeClock, fakeClock, guardApp } from "./guard-app.ts";

/** A buy resting below the ask: passes the eight checks on the default limits. */
const BUY = { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.47 };

describeEachDatabase("runaway guards", (_kind, database) => {
  let t: TestApp;
  let clock: FakeClock;
  beforeAll(async () => {
    clock = fakeClock();
    ({ t } = await guardApp(await database(), clock));
  });
  afterAll(() => t?.app.stop());

  const failuresOf = (res: { body: any }) => res.body.failures.map((f: any) => ({ check: f.check, code: f.code, limit: f.limit, actual: f.actual }));

  test("a new agent carries the guard limits' defaults", async () => {
    const tr = await newTrader(t);
    expect(tr.agent.limits).toMatchObject({
      max_orders_per_minute: 60,
      max_open_orders: 100,
      duplicate_window_s: 5,
      runaway_trip_count: 20,
      approval_threshold_usdc: null,
    });
  });

  test("duplicate window boundary: the same intent at window − 1 ms is refused, at the window accepted", async () => {
    const tr = await newTrader(t);
    // The sell below sells shares the agent holds (a sell of shares not held fails insufficient_position).
    await holdShares(t, tr);
    expect((await postIntent(t, tr, BUY)).status).toBe(201);
    clock.advance(4_999);
    const dup = await postIntent(t, tr, BUY);
    expectProblem(dup, 422, "risk_rejected");
    expect(failuresOf(dup)).toEqual([{ check: "breaker", code: "duplicate_order", limit: 5, actual: 4.999 }]);
    expect(dup.body.checks[0]).toEqual({ check: "breaker", passed: false });
    // Any difference in market, side, size or price is not a duplicate.
    for (const other of [{ price: 0.46 }, { size_usdc: 5.5 }, { side: "sell", price: 0.52 }, { market_id: MADRID_YES, price: 0.17 }]) {
      const res = await postIntent(t, tr, { ...BUY, ...other });
      expect({ other, status: res.status, text: res.status === 201 ? "" : res.text }).toEqual({ other, status: 201, text: "" });
    }
    clock.advance(1);
    expect((await postIntent(t, tr, BUY)).status).toBe(201);
    // The window counts from the latest approval of that intent.
    clock.advance(4_999);
    expect(failuresOf(await postIntent(t, tr, BUY))[0].code).toBe("duplicate_order");
  });

  test("duplicate_window_s 0 turns the duplicate guard off", async () => {
    const tr = await newTrader(t);
    await patchLimits(t, tr, { duplicate_window_s: 0 });
    for (let i = 0; i < 3; i++) expect((await postIntent(t, tr, BUY)).status).toBe(201);
  });

  test("order rate: more than max_orders_per_minute approvals in 60 s is refused; the oldest leaves the window after 60 s", async () => {
    const tr = await newTrader(t);
    await patchLimits(t, tr, { max_orders_per_minute: 3, duplicate_window_s: 0 });
    const first = clock.now();
    for (let i = 0; i < 3; i++) {
      expect((await postIntent(t, tr, BUY)).status).toBe(201);
      clock.advance(1_000);
    }
    const over = await postIntent(t, tr, BUY);
    expectProblem(over, 422, "risk_rejected");
    expect(failuresOf(over)).toEqual([{ check: "breaker", code: "order_rate_exceeded", limit: 3, actual: 4 }]);
    // A refusal is not an approval: it does not count toward the rate.
    clock.t = first + 59_999;
    expect(failuresOf(await postIntent(t, tr, BUY))[0].code).toBe("order_rate_exceeded");
    clock.t = first + 60_000;
    expect((await postIntent(t, tr, BUY)).status).toBe(201);
    // A dry run reports the guard too.
    const dry = await postIntent(t, tr, BUY, "?dry_run=true");
    expect(dry.status).toBe(200);
    expect(dry.body.risk.failures.map((f: any) => f.code)).toEqual(["order_rate_exceeded"]);
  });

  test("open orders: max_open_orders orders open or awaiting block the next intent until one ends", async () => {
    const tr = await newTrader(t);
    await patchLimits(t, tr, { max_open_orders: 2, duplicate_window_s: 0 });
    const a = await postIntent(t, tr, BUY);
    const b = await postIntent(t, tr, BUY);
    expect([a.status, b.status]).toEqual([201, 201]);
    const over = await postIntent(t, tr, BUY);
    expect(failuresOf(over)).toEqual([{ check: "breaker", code: "open_orders_exceeded", limit: 2, actual: 3 }]);
    expect((await getAgent(t, tr)).open_orders).toBe(2);
    expect((await t.call("DELETE", `/v1/orders/${a.body.order_id}`, { key: tr.key })).status).toBe(200);
    expect((await postIntent(t, tr, BUY)).status).toBe(201);
  });

  test("all guard failures are collected beside the other checks' failures", async () => {
    const tr = await newTrader(t);
    await patchLimits(t, tr, { max_open_orders: 1, max_orders_per_minute: 1 });
    expect((await postIntent(t, tr, BUY)).status).toBe(201);
    const res = await postIntent(t, tr, { ...BUY, size_usdc: 500 });
    const codes = res.body.failures.map((f: any) => `${f.check}:${f.code}`);
    expect(codes.slice(0, 2)).toEqual(["breaker:order_rate_exceeded", "breaker:open_orders_exceeded"]);
    expect(codes).toContain("order_size:order_too_large");
    expect(res.body.checks).toHaveLength(8);
  });

  test("runaway_trip_count guard refusals within a minute trip the breaker (reason runaway) until resumed", async () => {
    const tr = await newTrader(t);
    await patchLimits(t, tr, { runaway_trip_count: 3, duplicate_window_s: 60 });
    expect((await postIntent(t, tr, BUY)).status).toBe(201);
    // Dry runs and refusals by other checks do not count.
    for (let i = 0; i < 3; i++) expect((await postIntent(t, tr, BUY, "?dry_run=true")).body.risk.approved).toBe(false);
    for (let i = 0; i < 3; i++) expect(failuresOf(await postIntent(t, tr, { ...BUY, size_usdc: 500 })).map((f: any) => f.code)).toContain("order_too_large");
    expect((await getAgent(t, tr)).breaker.state).toBe("closed");
    // Two refusals, then a minute passes: the count starts again.
    for (let i = 0; i < 2; i++) expect(failuresOf(await postIntent(t, tr, BUY))[0].code).toBe("duplicate_order");
    clock.advance(60_000);
    expect((await postIntent(t, tr, BUY)).status).toBe(201); // out of the window now, approved again
    for (let i = 0; i < 2; i++) {
      expect(failuresOf(await postIntent(t, tr, BUY))[0].code).toBe("duplicate_order");
      clock.advance(10_000);
    }
    expect((await getAgent(t, tr)).breaker.state).toBe("closed");
    const third = await postIntent(t, tr, BUY);
    expect(failuresOf(third).map((f: any) => f.code)).toEqual(["duplicate_order"]);
    const tripped = await getAgent(t, tr);
    expect(tripped.breaker).toEqual({ state: "tripped", reason: "runaway", since: new Date(clock.now()).toISOString() });
    const after = await postIntent(t, tr, { ...BUY, price: 0.46 });
    expect(failuresOf(after).map((f: any) => f.code)).toEqual(["breaker_tripped"]);
    expect(after.body.failures[0].message).toContain("runaway");
    const resumed = await t.call("POST", `/v1/agents/${tr.agent.id}/resume`, { key: tr.key });
    expect(resumed.body.breaker.state).toBe("closed");
    expect((await postIntent(t, tr, { ...BUY, price: 0.46 })).status).toBe(201);
  });

  test("a runaway trip does not replace a kill halt", async () => {
    const tr = await newTrader(t);
    await patchLimits(t, tr, { runaway_trip_count: 1, max_open_orders: 1 });
    expect((await postIntent(t, tr, BUY)).status).toBe(201);
    expect((await t.call("POST", `/v1/agents/${tr.agent.id}/kill`, { key: tr.key })).status).toBe(200);
    await postIntent(t, tr, BUY);
    expect((await getAgent(t, tr)).breaker.reason).toBe("kill");
  });

  test("PATCH validates the guard limits; approval_threshold_usdc takes null", async () => {
    const tr = await newTrader(t);
    const patch = (body: Record<string, unknown>) => t.call("PATCH", `/v1/agents/${tr.agent.id}/limits`, { key: tr.key, body });
    expectInvalid(await patch({ max_orders_per_minute: 0 }), "/max_orders_per_minute");
    expectInvalid(await patch({ max_open_orders: 2.5 }), "/max_open_orders");
    // An integer limit is a JSON integer, as a USDC one is a JSON number: a numeric string is refused.
    expectInvalid(await patch({ max_open_orders: "5" }), "/max_open_orders");
    expectInvalid(await patch({ duplicate_window_s: "3" }), "/duplicate_window_s");
    expectInvalid(await patch({ duplicate_window_s: -1 }), "/duplicate_window_s");
    expectInvalid(await patch({ duplicate_window_s: 3601 }), "/duplicate_window_s");
    expectInvalid(await patch({ runaway_trip_count: 0 }), "/runaway_trip_count");
    expectInvalid(await patch({ approval_threshold_usdc: -1 }), "/approval_threshold_usdc");
    expectInvalid(await patch({ approval_threshold_usdc: "10" }), "/approval_threshold_usdc");
    expectInvalid(await patch({ approval_threshold_usdc: 1.0000001 }), "/limits/approval_threshold_usdc");
    expect((await getAgent(t, tr)).limits).toMatchObject({ approval_threshold_usdc: null, max_open_orders: 100, duplicate_window_s: 5 });
    const set = await patch({ approval_threshold_usdc: 25.5, max_open_orders: 7 });
    expect(set.status).toBe(200);
    expect(set.body.limits).toMatchObject({ approval_threshold_usdc: 25.5, max_open_orders: 7 });
    const off = await patch({ approval_threshold_usdc: null });
    expect(off.body.limits.approval_threshold_usdc).toBeNull();
  });

  test("approvals are remembered across a restart of the agent's actor (from the stored orders)", async () => {
    const tr: Trader = await newTrader(t);
    await patchLimits(t, tr, { max_orders_per_minute: 2 });
    expect((await postIntent(t, tr, BUY)).status).toBe(201);
    clock.advance(1_000);
    // A second service on the same database activates the agent afresh from its rows.
    const { t: t2 } = await guardApp(await database(), clock);
    try {
      const dup = await postIntent(t2, tr, BUY);
      expect(failuresOf(dup)).toEqual([{ check: "breaker", code: "duplicate_order", limit: 5, actual: 1 }]);
      expect((await postIntent(t2, tr, { ...BUY, price: 0.46 })).status).toBe(201);
      expect(failuresOf(await postIntent(t2, tr, { ...BUY, price: 0.45 })).map((f: any) => f.code)).toEqual(["order_rate_exceeded"]);
    } finally {
      await t2.app.stop();
    }
  });
});
