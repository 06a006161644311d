/**
 * A placement's own report from the venue (the user channel's PLACEMENT) often arrives before the
 * placement's answer: it is applied once that answer is recorded, so it finds the order as the answer
 * left it (open: a repeat, nothing logged) instead of `submitting`, from which the lifecycle table
 * does not let it move the order. After a placement that timed out (unknown) it opens the order.
 * Found without a read of the database (the order's hash, remembered at its insert). Both databases.
 */
import { beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { orders } from "../../src/db/schema.ts";
import type { VenueReport } from "../../src/domain/venue-report.ts";
import { createPaperVenue } from "../../src/venues/create-venue.ts";
import type { PaperVenue } from "../../src/venues/paper/paper-venue.ts";
import { VenueUnavailableError } from "../../src/venues/venue.ts";
import { loadConfig } from "../../src/config.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { DEM_YES, newTrader, type Trader } from "../support/payload.ts";

describeEachDatabase("a placement's own report before its answer", (_kind, database) => {
  let t: TestApp;
  /** While set, delegated placements wait for it (the venue has not answered yet); `fail`: they then fail as a timeout. */
  let gate: { open: Promise<void>; fail: boolean } | null = null;

  beforeAll(async () => {
    const venue = createPaperVenue(loadConfig({ ADMIN_TOKEN: "x".repeat(32) })) as PaperVenue;
    const place = venue.placeDelegatedOrder.bind(venue);
    venue.placeDelegatedOrder = async (req, opts) => {
      const g = gate;
      if (g) {
        await g.open;
        if (g.fail) throw new VenueUnavailableError("POST /order: no answer within 5000 ms");
      }
      return place(req, opts);
    };
    t = await createTestApp(await database(), { venue });
  });

  async function delegated(): Promise<Trader> {
    const tr = await newTrader(t);
    const creds = await t.call("POST", `/v1/agents/${tr.agent.id}/creds`, { key: tr.key, body: { api_key: `k-${tr.agent.id}`, api_secret: "c2VjcmV0", scopes: ["order:place", "order:cancel"] } });
    expect(creds.status).toBe(200);
    return tr;
  }
  /** The agent's one order once it is written (as `submitting`, its placement under way). */
  async function written(tr: Trader) {
    for (let i = 0; i < 200; i++) {
      const [row] = await (await database()).db.select().from(orders).where(eq(orders.agentId, tr.agent.id));
      if (row) return row;
      await Bun.sleep(10);
    }
    throw new Error("the order was never written");
  }
  const placedReport = (hash: string): VenueReport => ({ kind: "placed", ref: { venueOrderId: hash, orderHash: hash as `0x${string}` }, source: "user_channel", at: new Date() });
  const pending = async (p: Promise<unknown>) => (await Promise.race([p.then(() => "settled"), Bun.sleep(150).then(() => "pending")])) === "pending";

  test("it waits for the answer and is a repeat: the order stays open, nothing is logged as refused", async () => {
    const tr = await delegated();
    let release!: () => void;
    gate = { open: new Promise<void>((r) => (release = r)), fail: false };
    const intent = t.call("POST", "/v1/orders/intent", { key: tr.key, body: { agent_id: tr.agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.47 } });
    const row = await written(tr);
    expect(row.status).toBe("submitting");
    const logsBefore = t.logs.length;
    const report = t.app.services.venueReports.deliver(placedReport(row.orderHash!));
    expect(await pending(report)).toBe(true);
    gate = null;
    release();
    const res = await intent;
    expect(res.status).toBe(201);
    expect(res.body.status).toBe("open");
    expect(await report).toBe("repeat");
    expect(t.logs.slice(logsBefore).join("\n")).not.toContain("not allowed by the order lifecycle");
    const [after] = await (await database()).db.select().from(orders).where(eq(orders.id, row.id));
    expect(after.status).toBe("open");
    expect(after.history.map((h) => h.status)).toEqual(["submitting", "open"]);
  });

  test("after a placement that timed out (unknown), the venue's report of it opens the order", async () => {
    const tr = await delegated();
    let release!: () => void;
    gate = { open: new Promise<void>((r) => (release = r)), fail: true };
    const intent = t.call("POST", "/v1/orders/intent", { key: tr.key, body: { agent_id: tr.agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.47 } });
    const row = await written(tr);
    const report = t.app.services.venueReports.deliver(placedReport(row.orderHash!));
    expect(await pending(report)).toBe(true);
    release();
    const res = await intent;
    expect(res.status).toBe(504);
    expect(await report).toBe("applied");
    const [after] = await (await database()).db.select().from(orders).where(eq(orders.id, row.id));
    expect(after.history.map((h) => h.status)).toEqual(["submitting", "unknown", "open"]);
    gate = null;
  });
});
