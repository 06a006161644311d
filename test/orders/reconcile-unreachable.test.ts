/** A reconciliation pass ends at the first venue time-out instead of waiting out one per order. */
import { expect, test } from "bun:test";
import { inArray } from "drizzle-orm";
import { orders } from "../../src/db/schema.ts";
import { createPaperVenue } from "../../src/venues/create-venue.ts";
import { type Venue, VenueUnavailableError } from "../../src/venues/venue.ts";
import { createTestApp } from "../support/app.ts";
import { copyOfTemplate } from "../support/databases.ts";
import { openDatabase } from "../../src/db/database.ts";
import { approved, newTrader } from "../support/payload.ts";

test("an unreachable venue ends the pass after one call; the orders stay unsettled and reserved", async () => {
  const database = await openDatabase({ kind: "pglite", dataDir: await copyOfTemplate() });
  try {
    const paper = createPaperVenue({ chainId: 137, paperMarkets: null });
    let reads = 0;
    const venue = new Proxy(paper, {
      get(target, prop, receiver) {
        if (prop === "getOrder") {
          return async () => {
            reads++;
            throw new VenueUnavailableError("venue down");
          };
        }
        const v = Reflect.get(target, prop, receiver);
        return typeof v === "function" ? v.bind(target) : v;
      },
    }) as Venue;
    const t = await createTestApp(database, { venue });
    const tr = await newTrader(t);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await approved(t, tr, { size_usdc: 5, price: 0.47 })).order_id);
    await database.db.update(orders).set({ status: "submitting" }).where(inArray(orders.id, ids));

    const result = await t.app.services.orders.reconcile();
    expect(reads).toBe(1);
    expect(result.settled).toBe(0);
    expect(result.pending).toBe(3);
    const rows = await database.db.select({ status: orders.status }).from(orders).where(inArray(orders.id, ids));
    expect(rows.map((r) => r.status)).toEqual(["submitting", "submitting", "submitting"]);
  } finally {
    await database.close();
  }
});
