/**
 * Client cancels recorded before the venue call (docs/decisions.md "Client cancels recorded before the
 * venue call"): `DELETE /v1/orders/{id}` of an open order marks the row (cancel_requested_at) before the
 * venue is called. A cancel a crash interrupted after the venue cancelled the order and before the row
 * was settled is settled by the next process's start-up reconciliation (`cancelled`, its reservation
 * released, an `order` event stored). A cancel the venue refused, or never answered while the order
 * stayed live, leaves the order `open` without the marker. A normal cancel answers as before. PGlite,
 * and PostgreSQL when TEST_DATABASE_URL is set.
 */
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Database } from "../../src/db/database.ts";
import { startJobs } from "../../src/jobs.ts";
import { VenueUnavailableError } from "../../src/venues/venue.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";
import { freshDatabase, QUIET_JOBS } from "../support/fresh-database.ts";
import { hookedVenue } from "../support/hooked-venue.ts";
import { DEM_YES, getAgent, getOrder, newTrader, postIntent, type Trader } from "../support/payload.ts";

const BUY = { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.47 };


/** A delegated agent (the service cancels with its stored credentials) with one open order resting at the venue. */
async function delegatedWithOpenOrder(t: TestApp): Promise<{ tr: Trader; orderId: string; venueOrderId: string }> {
  const tr = await newTrader(t);
  const creds = await t.call("POST", `/v1/agents/${tr.agent.id}/creds`, {
    key: tr.key,
    body: { api_key: "k-cancel", api_secret: "s-cancel", passphrase: "p-cancel", scopes: ["order:place", "order:cancel"] },
  });
  expect(creds.status).toBe(200);
  const r = await postIntent(t, tr, BUY);
  expect(r.status).toBe(201);
  const o = await getOrder(t, tr.key, r.body.order_id);
  expect(o.status).toBe("open");
  return { tr, orderId: r.body.order_id, venueOrderId: o.venue_order_id };
}

const marker = async (database: Database, orderId: string) =>
  (await rowsOf(database, sql`select status, cancel_requested_at from orders where id = ${orderId}`))[0] as { status: string; cancel_requested_at: unknown };
const orderEvents = async (database: Database, orderId: string) =>
  (await rowsOf(database, sql`select data from events where type = 'order' and (order_id = ${orderId} or data->'order'->>'id' = ${orderId}) order by id`)).map((r) =>
    typeof r.data === "string" ? JSON.parse(r.data) : r.data,
  );

describeEachDatabase("client cancels recorded before the venue call", (kind) => {
  test("a cancel interrupted after the venue cancelled and before the row was settled is settled by start-up reconciliation", async () => {
    const { open, cleanup } = freshDatabase(kind);
    const h = hookedVenue(); // the venue outlives the service's crash
    let db1: Database | null = await open();
    let db2: Database | null = null;
    try {
      const t1 = await createTestApp(db1, { venue: h.venue });
      const { tr, orderId, venueOrderId } = await delegatedWithOpenOrder(t1);
      expect((await getAgent(t1, tr)).open_orders).toBe(1);

      // The crash: the venue cancels the order, then the process dies before the row moves (every
      // order write of the process fails from then on).
      const repo = t1.app.services.orderRepo as any;
      const died = async () => {
        throw new Error("the process died");
      };
      let venueCancels = 0;
      h.overrides.cancelOrder = async (req: any, opts: any) => {
        const r = await h.paper.cancelOrder(req, opts);
        venueCancels++;
        repo.transition = died;
        repo.transitionMany = died;
        repo.clearCancelRequested = died;
        return r;
      };
      const res = await t1.call("DELETE", `/v1/orders/${orderId}`, { key: tr.key });
      expect(res.status).toBe(500); // the injected failure: no answer a client could rely on
      expect(venueCancels).toBe(1);
      expect((await h.paper.getOrder({ venue_order_id: venueOrderId }))?.status).toBe("cancelled");
      // What the crash leaves: the row still says open, with the cancel recorded.
      const left = await marker(db1, orderId);
      expect(left.status).toBe("open");
      expect(left.cancel_requested_at).not.toBeNull();
      const eventsBefore = (await orderEvents(db1, orderId)).length;
      await t1.app.stop();
      await db1.close();
      db1 = null;
      delete h.overrides.cancelOrder;

      // ---- the next process on the same data, with its start-up jobs; it never calls the venue's cancel
      let cancelsAfterRestart = 0;
      h.overrides.cancelOrder = async () => {
        cancelsAfterRestart++;
        return { ok: false, error: "not expected" };
      };
      db2 = await open();
      const t2 = await createTestApp(db2, { venue: h.venue });
      const jobs = startJobs(t2.app.services, QUIET_JOBS);
      try {
        await jobs.started;
        const o = await getOrder(t2, tr.key, orderId);
        expect(o.status).toBe("cancelled");
        expect(o.flagged_for_review).toBe(false);
        expect(o).not.toHaveProperty("cancel_requested_at");
        expect(cancelsAfterRestart).toBe(0);
        const agent = await getAgent(t2, tr);
        expect(agent.open_orders).toBe(0);
        expect(agent.daily_volume.used_usdc).toBe(0);
        // The `order` event of the cancellation was stored.
        const events = await orderEvents(db2, orderId);
        expect(events.length).toBe(eventsBefore + 1);
        expect(events.at(-1)).toMatchObject({ order: { id: orderId, status: "cancelled" } });
        // Its exposure was released too: the same order again is approved.
        expect((await postIntent(t2, tr, BUY)).status).toBe(201);
        // Nothing left for the next pass.
        await t2.app.services.orders.reconcile(); // (on PostgreSQL the database is shared: other suites' orders may settle)
        expect((await orderEvents(db2, orderId)).length).toBe(eventsBefore + 1);
      } finally {
        await jobs.stop();
        await t2.app.stop();
        delete h.overrides.cancelOrder;
      }
    } finally {
      await db1?.close();
      await db2?.close();
      cleanup();
    }
  }, 60_000);

  test("a cancel the venue refused leaves the order open without the marker, and reconciliation does not cancel it", async () => {
    const { open, cleanup } = freshDatabase(kind);
    const h = hookedVenue();
    const db = await open();
    try {
      const t = await createTestApp(db, { venue: h.venue });
      try {
        const { tr, orderId, venueOrderId } = await delegatedWithOpenOrder(t);
        const seenAtCancel: unknown[] = [];
        h.overrides.cancelOrder = async () => {
          seenAtCancel.push((await marker(db, orderId)).cancel_requested_at);
          return { ok: false, error: "order belongs to another account", status: 400 };
        };
        const res = await t.call("DELETE", `/v1/orders/${orderId}`, { key: tr.key });
        delete h.overrides.cancelOrder;
        expect(res.status).toBe(502);
        expect(res.body.code).toBe("venue_rejected");
        expect(seenAtCancel.length).toBe(1);
        expect(seenAtCancel[0]).not.toBeNull(); // written before the venue call
        expect(await marker(db, orderId)).toEqual({ status: "open", cancel_requested_at: null });

        await t.app.services.orders.reconcile();
        expect((await getOrder(t, tr.key, orderId)).status).toBe("open");
        expect((await h.paper.getOrder({ venue_order_id: venueOrderId }))?.status).toBe("live");
        expect((await getAgent(t, tr)).open_orders).toBe(1);
      } finally {
        await t.app.stop();
      }
    } finally {
      await db.close();
      cleanup();
    }
  }, 60_000);

  test("a cancel that never reached the venue: 503, the marker stays until reconciliation reads the order live, then it is cleared and the order stays open", async () => {
    const { open, cleanup } = freshDatabase(kind);
    const h = hookedVenue();
    const db = await open();
    try {
      const t = await createTestApp(db, { venue: h.venue });
      try {
        const { tr, orderId, venueOrderId } = await delegatedWithOpenOrder(t);
        h.overrides.cancelOrder = async () => {
          throw new VenueUnavailableError("DELETE /order: no answer within 5000 ms");
        };
        const res = await t.call("DELETE", `/v1/orders/${orderId}`, { key: tr.key });
        expect(res.status).toBe(503);
        expect(res.body.code).toBe("venue_unavailable");
        const after = await marker(db, orderId);
        expect(after.status).toBe("open");
        expect(after.cancel_requested_at).not.toBeNull(); // the cancel may have reached the venue

        // Reconciliation reads the order (still live) and never cancels it itself.
        await t.app.services.orders.reconcile();
        expect(await marker(db, orderId)).toEqual({ status: "open", cancel_requested_at: null });
        expect((await h.paper.getOrder({ venue_order_id: venueOrderId }))?.status).toBe("live");
        expect((await getAgent(t, tr)).open_orders).toBe(1);
        delete h.overrides.cancelOrder;

        // The client's retry works as usual.
        const again = await t.call("DELETE", `/v1/orders/${orderId}`, { key: tr.key });
        expect(again.status).toBe(200);
        expect(again.body.status).toBe("cancelled");
      } finally {
        delete h.overrides.cancelOrder;
        await t.app.stop();
      }
    } finally {
      await db.close();
      cleanup();
    }
  }, 60_000);

  test("a normal cancel: the marker is written before the venue call; the answer, the row and its event are as before", async () => {
    const { open, cleanup } = freshDatabase(kind);
    const h = hookedVenue();
    const db = await open();
    try {
      const t = await createTestApp(db, { venue: h.venue });
      try {
        const { tr, orderId, venueOrderId } = await delegatedWithOpenOrder(t);
        const before = await getOrder(t, tr.key, orderId);
        const eventsBefore = (await orderEvents(db, orderId)).length;
        const seenAtCancel: unknown[] = [];
        h.overrides.cancelOrder = async (req: any, opts: any) => {
          seenAtCancel.push((await marker(db, orderId)).cancel_requested_at);
          return h.paper.cancelOrder(req, opts);
        };
        const res = await t.call("DELETE", `/v1/orders/${orderId}`, { key: tr.key });
        delete h.overrides.cancelOrder;
        expect(res.status).toBe(200);
        expect(seenAtCancel.length).toBe(1);
        expect(seenAtCancel[0]).not.toBeNull();
        // The answer: the order model, cancelled, with the same keys as before and no marker.
        expect(Object.keys(res.body).sort()).toEqual(Object.keys(before).filter((k) => k !== "unsigned_order" && k !== "signature_deadline" && k !== "filled_shares" && k !== "fills").sort());
        expect(res.body).toMatchObject({ id: orderId, status: "cancelled", venue_order_id: venueOrderId });
        expect(JSON.stringify(res.body)).not.toContain("cancel_requested");
        expect((await h.paper.getOrder({ venue_order_id: venueOrderId }))?.status).toBe("cancelled");
        const row = await marker(db, orderId);
        expect(row.status).toBe("cancelled");
        const events = await orderEvents(db, orderId);
        expect(events.length).toBe(eventsBefore + 1);
        expect(events.at(-1)).toEqual({ order: res.body });
        expect((await getAgent(t, tr)).open_orders).toBe(0);
        // A settled cancel is not looked at again.
        await t.app.services.orders.reconcile();
        // A second cancel is refused as before.
        const again = await t.call("DELETE", `/v1/orders/${orderId}`, { key: tr.key });
        expect(again.status).toBe(409);
      } finally {
        await t.app.stop();
      }
    } finally {
      await db.close();
      cleanup();
    }
  }, 60_000);
});
