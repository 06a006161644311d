/**
 * Kills resumed at start-up (docs/decisions.md "Kills resumed at start-up"): the kill's row is written
 * before the venue is called; a kill a crash interrupted after the venue cancelled the orders and
 * before their rows were updated is finished by the next process's start-up jobs (orders `cancelled`,
 * the row completed, the breaker still halted, the `kill` event in the stream). A normal kill answers
 * and stores what it did before. PGlite, and PostgreSQL when TEST_DATABASE_URL is set.
 */
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Database } from "../../src/db/database.ts";
import { startJobs } from "../../src/jobs.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";
import { freshDatabase, QUIET_JOBS } from "../support/fresh-database.ts";
import { hookedVenue } from "../support/hooked-venue.ts";
import { DEM_YES, getAgent, getOrder, newTrader, postIntent, type Trader } from "../support/payload.ts";

const BUY = { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.47 };
const ANSWER_KEYS = ["agent", "agent_id", "cancelled", "completed_at", "credentials_deleted", "duration_ms", "failed", "filled", "kill_id", "started_at"].sort();


/** A delegated agent (credentials stored, orders placed at the venue by the service) with two open orders. */
async function delegatedWithOpenOrders(t: TestApp): Promise<{ tr: Trader; orderIds: string[] }> {
  const tr = await newTrader(t);
  const creds = await t.call("POST", `/v1/agents/${tr.agent.id}/creds`, {
    key: tr.key,
    body: { api_key: "k-resume", api_secret: "s-resume", passphrase: "p-resume", scopes: ["order:place", "order:cancel"] },
  });
  expect(creds.status).toBe(200);
  const orderIds: string[] = [];
  for (const price of [0.47, 0.46]) {
    const r = await postIntent(t, tr, { ...BUY, price });
    expect(r.status).toBe(201);
    orderIds.push(r.body.order_id);
  }
  for (const id of orderIds) expect((await getOrder(t, tr.key, id)).status).toBe("open");
  return { tr, orderIds: orderIds.sort() };
}

const killRows = async (database: Database, agentId: string) =>
  rowsOf(
    database,
    sql`select id, reason, breaker_reason, started_at, completed_at, cancelled, filled, failed, credentials_deleted from kills where agent_id = ${agentId} order by started_at`,
  );
const killEvents = async (database: Database, agentId: string) =>
  (await rowsOf(database, sql`select id, type, data from events where agent_id = ${agentId} and type = 'kill' order by id`)).map((r) => ({
    ...r,
    data: typeof r.data === "string" ? JSON.parse(r.data) : r.data,
  }));

/** The events the stream replays from the start for one agent (Last-Event-ID 0), until a `kill` event came. */
async function streamedUntilKill(t: TestApp, key: string, agentId: string): Promise<{ event?: string; data?: any }[]> {
  const res = await t.app.handle(new Request(`http://localhost/v1/events?agent_id=${agentId}`, { headers: { "x-api-key": key, "last-event-id": "0" } }));
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const frames: { event?: string; data?: any }[] = [];
  let buffer = "";
  const timeout = setTimeout(() => reader.cancel(), 5_000);
  try {
    while (!frames.some((f) => f.event === "kill")) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const f: { event?: string; data?: any } = {};
        for (const line of buffer.slice(0, cut).split("\n")) {
          if (line.startsWith("event: ")) f.event = line.slice(7);
          else if (line.startsWith("data: ")) f.data = JSON.parse(line.slice(6));
        }
        buffer = buffer.slice(cut + 2);
        if (f.event) frames.push(f);
      }
    }
  } finally {
    clearTimeout(timeout);
    await reader.cancel().catch(() => undefined);
  }
  return frames;
}

describeEachDatabase("kill resumed at start-up", (kind) => {
  test("a kill interrupted after the venue cancelled and before the rows were updated is finished at start-up", async () => {
    const { open, cleanup } = freshDatabase(kind);
    const h = hookedVenue(); // the venue outlives the service's crash
    let db1: Database | null = await open();
    let db2: Database | null = null;
    try {
      const t1 = await createTestApp(db1, { venue: h.venue });
      const { tr, orderIds } = await delegatedWithOpenOrders(t1);
      const agentId: string = tr.agent.id;
      const venueIds = await Promise.all(orderIds.map(async (id) => (await getOrder(t1, tr.key, id)).venue_order_id as string));

      // The crash: the venue cancels both orders, then the process dies before any order row moves
      // (every order write of the process fails from then on).
      const repo = t1.app.services.orderRepo as any;
      const died = async () => {
        throw new Error("the process died");
      };
      let venueCancels = 0;
      h.overrides.cancelOrder = async (req: any, opts: any) => {
        const r = await h.paper.cancelOrder(req, opts);
        venueCancels++;
        repo.transitionMany = died;
        repo.transition = died;
        return r;
      };
      const killed = await t1.call("POST", `/v1/agents/${agentId}/kill`, { key: tr.key, body: { reason: "runaway strategy" } });
      expect(killed.status).toBe(500); // the injected failure: no answer a client could rely on
      expect(venueCancels).toBe(2);
      for (const v of venueIds) expect((await h.paper.getOrder({ venue_order_id: v }))?.status).toBe("cancelled");
      // What the crash leaves: the rows still say open, the kill row is there but not completed.
      for (const id of orderIds) expect((await getOrder(t1, tr.key, id)).status).toBe("open");
      const interrupted = await killRows(db1, agentId);
      expect(interrupted.length).toBe(1);
      expect(interrupted[0]).toMatchObject({ reason: "runaway strategy", breaker_reason: "kill", completed_at: null, cancelled: [], failed: [] });
      expect(await killEvents(db1, agentId)).toEqual([]);
      await t1.app.stop();
      await db1.close();
      db1 = null;
      delete h.overrides.cancelOrder;

      // ---- the next process on the same data, with its start-up jobs
      db2 = await open();
      const t2 = await createTestApp(db2, { venue: h.venue });
      const jobs = startJobs(t2.app.services, QUIET_JOBS);
      try {
        await jobs.started;
        for (const id of orderIds) {
          const o = await getOrder(t2, tr.key, id);
          expect(o.status).toBe("cancelled");
          expect(o.flagged_for_review).toBe(false);
        }
        const rows = await killRows(db2, agentId);
        expect(rows.length).toBe(1);
        const row = rows[0] as any;
        expect(row.id).toBe(interrupted[0].id);
        expect(row.completed_at).not.toBeNull();
        expect(new Date(row.started_at).getTime()).toBe(new Date(interrupted[0].started_at as string).getTime());
        expect([...row.cancelled].sort()).toEqual(orderIds);
        expect(row.failed).toEqual([]);
        expect(row.filled).toEqual([]);
        // The credentials were still stored (the crash came before their deletion): the resumed kill
        // cancelled with them and then deleted them.
        expect(row.credentials_deleted).toBe(true);

        const agent = await getAgent(t2, tr);
        expect(agent.breaker).toMatchObject({ state: "tripped", reason: "kill" });
        expect(agent.open_orders).toBe(0);
        expect(agent.mode).toBe("payload");
        expect(agent.credentials).toBeNull();

        // The `kill` event, stored once and in the stream, is the kill's answer under its own id.
        const stored = await killEvents(db2, agentId);
        expect(stored.length).toBe(1);
        const frames = await streamedUntilKill(t2, tr.key, agentId);
        const kill = frames.find((f) => f.event === "kill")?.data;
        expect(kill).toMatchObject({ type: "kill", agent_id: agentId });
        expect(kill.data).toMatchObject({ kill_id: row.id, agent_id: agentId, reason: "runaway strategy", failed: [], credentials_deleted: true });
        expect([...kill.data.cancelled].sort()).toEqual(orderIds);
        expect(kill.data.started_at).toBe(new Date(interrupted[0].started_at as string).toISOString());
        expect(kill.data.agent.breaker).toMatchObject({ state: "tripped", reason: "kill" });

        // Nothing left to resume: a second start-up does no kill again.
        expect(await t2.app.services.kill.resumeUnfinished()).toMatchObject({ resumed: 0 });
        expect((await killEvents(db2, agentId)).length).toBe(1);
      } finally {
        await jobs.stop();
        await t2.app.stop();
      }
    } finally {
      await db1?.close();
      await db2?.close();
      cleanup();
    }
  }, 60_000);

  test("a normal kill: the row is written before the first venue call; the answer, the row and the event are as before", async () => {
    const { open, cleanup } = freshDatabase(kind);
    const h = hookedVenue();
    const db = await open();
    try {
      const t = await createTestApp(db, { venue: h.venue });
      try {
        const { tr, orderIds } = await delegatedWithOpenOrders(t);
        const agentId: string = tr.agent.id;
        // At each venue cancel, the kill's row is already stored, not completed.
        const seenAtCancel: unknown[][] = [];
        h.overrides.cancelOrder = async (req: any, opts: any) => {
          seenAtCancel.push(await rowsOf(db, sql`select completed_at from kills where agent_id = ${agentId}`));
          return h.paper.cancelOrder(req, opts);
        };
        const res = await t.call("POST", `/v1/agents/${agentId}/kill`, { key: tr.key, body: { reason: "done for today" } });
        delete h.overrides.cancelOrder;
        expect(res.status).toBe(200);
        expect(seenAtCancel).toEqual([[{ completed_at: null }], [{ completed_at: null }]]);

        const body = res.body;
        expect(Object.keys(body).sort()).toEqual(ANSWER_KEYS);
        expect(body.kill_id).toMatch(/^kil_/);
        expect(body.agent_id).toBe(agentId);
        expect([...body.cancelled].sort()).toEqual(orderIds);
        expect(body.failed).toEqual([]);
        expect(body.filled).toEqual([]);
        expect(body.credentials_deleted).toBe(true);
        expect(Date.parse(body.completed_at) - Date.parse(body.started_at)).toBe(body.duration_ms);
        expect(body.agent.breaker).toMatchObject({ state: "tripped", reason: "kill" });
        expect(body.agent.mode).toBe("payload");
        for (const id of orderIds) expect((await getOrder(t, tr.key, id)).status).toBe("cancelled");

        const rows = await killRows(db, agentId);
        expect(rows.length).toBe(1);
        const row = rows[0] as any;
        expect(row.id).toBe(body.kill_id);
        expect(row.reason).toBe("done for today");
        expect(row.breaker_reason).toBe("kill");
        expect(new Date(row.started_at).toISOString()).toBe(body.started_at);
        expect(new Date(row.completed_at).toISOString()).toBe(body.completed_at);
        expect(row.cancelled).toEqual(body.cancelled);
        expect(row.failed).toEqual([]);
        expect(row.credentials_deleted).toBe(true);

        // The event is the answer plus the reason, as before.
        const stored = await killEvents(db, agentId);
        expect(stored.length).toBe(1);
        expect(stored[0].data).toEqual({ ...body, reason: "done for today" });

        // A finished kill is not resumed.
        await t.app.services.kill.resumeUnfinished();
        expect((await killRows(db, agentId)).length).toBe(1);
        expect((await killEvents(db, agentId)).length).toBe(1);

        // A second kill is harmless and answers the same shape.
        const again = await t.call("POST", `/v1/agents/${agentId}/kill`, { key: tr.key });
        expect(again.status).toBe(200);
        expect(Object.keys(again.body).sort()).toEqual(ANSWER_KEYS);
        expect(again.body.cancelled).toEqual([]);
        expect((await killRows(db, agentId)).every((r) => r.completed_at !== null)).toBe(true);
      } finally {
        await t.app.stop();
      }
    } finally {
      await db.close();
      cleanup();
    }
  }, 60_000);
});
