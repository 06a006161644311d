/**
 * The dead-man switch (docs/api.md#heartbeat-dead-man-switch) over HTTP with a fake clock: the
 * routes and their validation, a beat on time (at the deadline itself) versus one 1 ms late, the
 * sweep's kill with reason heartbeat (kill row, cancelled orders, deleted credentials, halted
 * breaker), and the start-up kill of an agent that became overdue while the service was down.
 * PGlite, and PostgreSQL when TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startJobs } from "../../src/jobs.ts";
import type { TestApp } from "../support/app.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";
import { DEM_YES, expectInvalid, expectProblem, getAgent, getOrder, newTrader, postIntent, type Trader } from "../support/payload.ts";
import { type FakeClock, fakeClock, guardApp } from "./guard-app.ts";

const BUY = { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.47 };

describeEachDatabase("heartbeat dead-man switch", (_kind, database) => {
  let t: TestApp;
  let clock: FakeClock;
  beforeAll(async () => {
    clock = fakeClock();
    ({ t } = await guardApp(await database(), clock));
  });
  afterAll(() => t?.app.stop());

  const hb = (tr: Trader, method: string, body?: unknown, app = t) => app.call(method, `/v1/agents/${tr.agent.id}/heartbeat`, { key: tr.key, body });
  const killsOf = async (agentId: string) =>
    rowsOf(await database(), sql`select reason, cancelled, failed, credentials_deleted from kills where agent_id = ${agentId} order by started_at`);

  test("PUT turns it on (interval_s 5..3600), the Agent shows it, DELETE turns it off; a beat while off is 409", async () => {
    const tr = await newTrader(t);
    expect(tr.agent.heartbeat).toBeNull();
    expectInvalid(await hb(tr, "PUT", { interval_s: 4 }), "/interval_s");
    expectInvalid(await hb(tr, "PUT", { interval_s: 3601 }), "/interval_s");
    expectInvalid(await hb(tr, "PUT", { interval_s: 10.5 }), "/interval_s");
    expectInvalid(await hb(tr, "PUT", { interval_s: "30" }), "/interval_s");
    expectInvalid(await hb(tr, "PUT", {}), "/interval_s");
    expectProblem(await hb(tr, "POST"), 409, "invalid_state");
    const on = await hb(tr, "PUT", { interval_s: 5 });
    expect(on.status).toBe(200);
    const now = clock.now();
    expect(on.body.heartbeat).toEqual({ interval_s: 5, last_at: new Date(now).toISOString(), deadline_at: new Date(now + 5_000).toISOString() });
    expect((await getAgent(t, tr)).heartbeat).toEqual(on.body.heartbeat);
    const off = await hb(tr, "DELETE");
    expect(off.status).toBe(200);
    expect(off.body.heartbeat).toBeNull();
    // Off: the deadline passes and nothing happens.
    clock.advance(10_000);
    expect(await t.app.services.heartbeats.sweep()).toEqual({ killed: 0 });
    expect((await getAgent(t, tr)).breaker.state).toBe("closed");
    // Another organization's agent is 404; another agent's scoped key 403.
    const other = await newTrader(t);
    expectProblem(await t.call("PUT", `/v1/agents/${tr.agent.id}/heartbeat`, { key: other.key, body: { interval_s: 5 } }), 404, "not_found");
  });

  test("a beat at the deadline itself is on time and moves it; the sweep at the deadline kills nothing", async () => {
    const tr = await newTrader(t);
    const on = await hb(tr, "PUT", { interval_s: 5 });
    const deadline = Date.parse(on.body.heartbeat.deadline_at);
    clock.t = deadline;
    expect(await t.app.services.heartbeats.sweep()).toEqual({ killed: 0 });
    const beat = await hb(tr, "POST");
    expect(beat.status).toBe(200);
    expect(beat.body.heartbeat).toEqual({ interval_s: 5, last_at: new Date(deadline).toISOString(), deadline_at: new Date(deadline + 5_000).toISOString() });
    clock.t = deadline + 5_000;
    expect(await t.app.services.heartbeats.sweep()).toEqual({ killed: 0 });
    expect((await getAgent(t, tr)).breaker.state).toBe("closed");
    expect(await killsOf(tr.agent.id)).toEqual([]);
    await hb(tr, "DELETE");
  });

  test("a beat 1 ms late kills the agent as the kill endpoint does (reason heartbeat) and answers 409 agent_halted", async () => {
    const tr = await newTrader(t);
    const order = await postIntent(t, tr, BUY);
    expect(order.status).toBe(201);
    const on = await hb(tr, "PUT", { interval_s: 30 });
    clock.t = Date.parse(on.body.heartbeat.deadline_at) + 1;
    const late = await hb(tr, "POST");
    const problem = expectProblem(late, 409, "agent_halted");
    expect(problem.detail).toContain("heartbeat");
    const agent = await getAgent(t, tr);
    expect(agent.breaker).toEqual({ state: "tripped", reason: "heartbeat", since: new Date(clock.now()).toISOString() });
    expect(agent.heartbeat).toBeNull();
    expect(agent.open_orders).toBe(0);
    expect((await getOrder(t, tr.key, order.body.order_id)).status).toBe("cancelled");
    expect(await killsOf(tr.agent.id)).toEqual([{ reason: "heartbeat", cancelled: [order.body.order_id], failed: [], credentials_deleted: false }]);
    // Halted as by a kill: intents are refused, credentials too, until the resume.
    const refused = await postIntent(t, tr, { ...BUY, price: 0.46 });
    expect(refused.body.failures.map((f: any) => f.code)).toEqual(["breaker_tripped"]);
    const creds = await t.call("POST", `/v1/agents/${tr.agent.id}/creds`, { key: tr.key, body: { api_key: "k", api_secret: "c2VjcmV0", scopes: ["order:place"] } });
    expectProblem(creds, 409, "agent_halted");
    // A manual trip does not downgrade the halt.
    expect((await t.call("POST", `/v1/agents/${tr.agent.id}/breaker`, { key: tr.key })).body.breaker.reason).toBe("heartbeat");
    // The switch is off after the kill: nothing more happens.
    clock.advance(60_000);
    expect(await t.app.services.heartbeats.sweep()).toEqual({ killed: 0 });
    expect(await killsOf(tr.agent.id)).toHaveLength(1);
    const resumed = await t.call("POST", `/v1/agents/${tr.agent.id}/resume`, { key: tr.key });
    expect(resumed.body.breaker.state).toBe("closed");
    expect((await postIntent(t, tr, { ...BUY, price: 0.46 })).status).toBe(201);
  });

  test("no beat: the sweep 1 ms after the deadline kills the delegated agent, deleting its credentials", async () => {
    const tr = await newTrader(t);
    const creds = await t.call("POST", `/v1/agents/${tr.agent.id}/creds`, {
      key: tr.key,
      body: { api_key: "k-hb", api_secret: "s-hb", passphrase: "p-hb", scopes: ["order:place", "order:cancel"] },
    });
    expect(creds.status).toBe(200);
    const placed = await postIntent(t, tr, BUY);
    expect(placed.body).toMatchObject({ mode: "delegated", status: "open" });
    const on = await hb(tr, "PUT", { interval_s: 5 });
    clock.t = Date.parse(on.body.heartbeat.deadline_at);
    expect(await t.app.services.heartbeats.sweep()).toEqual({ killed: 0 });
    clock.t += 1;
    const swept = await t.app.services.heartbeats.sweep();
    expect(swept.killed).toBeGreaterThanOrEqual(1);
    const agent = await getAgent(t, tr);
    expect(agent.breaker.reason).toBe("heartbeat");
    expect(agent.mode).toBe("payload");
    expect(agent.credentials).toBeNull();
    expect(await killsOf(tr.agent.id)).toEqual([{ reason: "heartbeat", cancelled: [placed.body.order_id], failed: [], credentials_deleted: true }]);
    expect((await t.app.services.venue.getOrder({ venue_order_id: placed.body.venue_order_id }))?.status).toBe("cancelled");
    // A beat after the sweep's kill: still 409, and no second kill.
    expectProblem(await hb(tr, "POST"), 409, "invalid_state");
    expect(await killsOf(tr.agent.id)).toHaveLength(1);
  });

  test("the deadline survives a restart; an agent overdue at start-up is killed by the start-up sweep", async () => {
    const tr = await newTrader(t);
    const order = await postIntent(t, tr, BUY);
    const on = await hb(tr, "PUT", { interval_s: 60 });
    // The service stops; when it starts again the deadline has passed by a millisecond.
    clock.t = Date.parse(on.body.heartbeat.deadline_at) + 1;
    const { t: t2 } = await guardApp(await database(), clock);
    const jobs = startJobs(t2.app.services, { expireEveryMs: 3_600_000, reconcileEveryMs: 3_600_000, heartbeatEveryMs: 3_600_000 });
    try {
      await jobs.started;
      const agent = await getAgent(t2, tr);
      expect(agent.breaker.reason).toBe("heartbeat");
      expect(agent.heartbeat).toBeNull();
      expect((await getOrder(t2, tr.key, order.body.order_id)).status).toBe("cancelled");
      expect(await killsOf(tr.agent.id)).toEqual([{ reason: "heartbeat", cancelled: [order.body.order_id], failed: [], credentials_deleted: false }]);
    } finally {
      jobs.stop();
      await t2.app.stop();
    }
  });

  test("a restart before the deadline keeps it: the agent is not killed, and its next beat is on time", async () => {
    const tr = await newTrader(t);
    const on = await hb(tr, "PUT", { interval_s: 60 });
    clock.t = Date.parse(on.body.heartbeat.deadline_at);
    const { t: t2 } = await guardApp(await database(), clock);
    const jobs = startJobs(t2.app.services, { expireEveryMs: 3_600_000, reconcileEveryMs: 3_600_000, heartbeatEveryMs: 3_600_000 });
    try {
      await jobs.started;
      const agent = await getAgent(t2, tr);
      expect(agent.heartbeat).toEqual(on.body.heartbeat);
      expect(agent.breaker.state).toBe("closed");
      expect((await hb(tr, "POST", undefined, t2)).status).toBe(200);
    } finally {
      jobs.stop();
      await t2.app.stop();
      await hb(tr, "DELETE");
    }
  });
});
