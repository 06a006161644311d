/**
 * The service's GTD expiry of payload orders: open payload GTD orders with nothing filled are handed to
 * the sink as `expired` once their expiration has passed, once per order; delegated, filled, GTC and
 * not-yet-due orders are not. On PGlite and PostgreSQL.
 */
import { beforeAll, expect, test } from "bun:test";
import { inArray, sql } from "drizzle-orm";
import type { Database } from "../../src/db/database.ts";
import { dueGtdPayloadOrders, dueGtdStatement } from "../../src/db/due-gtd-orders.ts";
import { type NewOrderRow } from "../../src/db/order-repository.ts";
import { orders } from "../../src/db/schema.ts";
import type { VenueReport } from "../../src/domain/venue-report.ts";
import { GtdExpiry } from "../../src/venues/gtd-expiry.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { orderRow } from "../support/order-row.ts";

describeEachDatabase("GTD expiry of payload orders", (kind, open) => {
  let database: Database;
  beforeAll(async () => {
    database = await open();
  });

  const tag = `${kind}${process.pid}${Date.now().toString(36)}`;
  /** An open payload GTD order (its history says open, whatever `over` sets). */
  const row = (name: string, over: Partial<NewOrderRow>): NewOrderRow => ({
    ...orderRow({
      id: `ord_gtd_${tag}_${name}`,
      orgId: `org_gtd_${tag}`,
      agentId: `agt_gtd_${tag}`,
      marketId: "123",
      conditionId: "0xcondition",
      price: "0.4",
      notionalUnits: 4_000_000n,
      orderType: "GTD",
      venueOrderId: null,
      filledUnits: 0n,
    }),
    ...over,
  });

  test("due orders are reported expired once; others are not", async () => {
    const now = 1_900_000_000; // seconds
    const rows = [
      row("due", { expiration: String(now - 5) }),
      row("due_exact", { expiration: String(now), venueOrderId: "0xVENUE" }),
      row("later", { expiration: String(now + 60) }),
      row("gtc", { orderType: "GTC", expiration: "0" }),
      row("delegated", { mode: "delegated", expiration: String(now - 5) }),
      row("partly_filled", { expiration: String(now - 5), filledUnits: 1n }),
      row("cancelled", { status: "cancelled", expiration: String(now - 5) }),
    ];
    await database.db.insert(orders).values(rows);
    try {
      const mine = <T extends { id: string }>(xs: T[]): T[] => xs.filter((x) => x.id.includes(tag));
      expect(mine(await dueGtdPayloadOrders(database.db, now)).map((d) => d.id)).toEqual([rows[0].id, rows[1].id]);

      const reports: VenueReport[] = [];
      let clockMs = now * 1000 + 400;
      const job = new GtdExpiry({
        listDue: async (s) => mine(await dueGtdPayloadOrders(database.db, s)),
        sink: { report: (r) => void reports.push(r) },
        clock: { now: () => clockMs },
      });
      expect(await job.runOnce()).toBe(2);
      expect(reports).toEqual([
        { kind: "expired", ref: { orderHash: rows[0].orderHash as `0x${string}` }, source: "rest", at: new Date((now - 5) * 1000) },
        { kind: "expired", ref: { orderHash: rows[1].orderHash as `0x${string}`, venueOrderId: "0xVENUE" }, source: "rest", at: new Date(now * 1000) },
      ]);
      // Still due (no actor applied the reports here): not reported again at once.
      expect(await job.runOnce()).toBe(0);
      // The later one falls due.
      clockMs = (now + 60) * 1000;
      expect(await job.runOnce()).toBe(1);
      expect(reports.at(-1)).toMatchObject({ kind: "expired", ref: { orderHash: rows[2].orderHash } });
    } finally {
      await database.db.delete(orders).where(inArray(orders.id, rows.map((r) => r.id)));
    }
  });

  test("the read can go through the index of open payload GTD orders alone, in a generic plan too", async () => {
    // Sequential scans off: the plan shows whether orders_gtd_due_idx can serve the statement at all
    // (its partial predicate implied by the statement's own conditions), however small the table.
    const plan = await database.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      await tx.execute(sql`set local plan_cache_mode = force_generic_plan`);
      const r = (await tx.execute(sql`explain ${dueGtdStatement(sql`${1_900_000_000}`, sql`${500}`)}`)) as unknown as { rows?: Record<string, unknown>[] } | Record<string, unknown>[];
      return (Array.isArray(r) ? r : (r.rows ?? [])).map((x) => String(Object.values(x)[0])).join("\n");
    });
    expect(plan).toContain("orders_gtd_due_idx");
    expect(plan).not.toContain("orders_watch_idx");
  });
});
