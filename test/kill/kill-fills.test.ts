/**
 * The kill switch and fills it learns of at the venue: an order the venue had
 * already matched is reported `filled` and keeps counting against the limits;
 * a cancelled order that had partly filled keeps its filled part.
 */
import { beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { approved, DEM_YES, getAgent, getOrder, holdShares, newTrader, sign, submitSigned, type Trader } from "../support/payload.ts";
import { until } from "../support/until.ts";

async function place(t: TestApp, tr: Trader, body: Record<string, unknown>) {
  const order = await approved(t, tr, body);
  const res = await submitSigned(t, tr.key, order.order_id, await sign(tr.account, order.unsigned_order));
  expect(res.status).toBe(200);
  return { order, status: res.body.status as string };
}

describeEachDatabase("kill switch and venue fills", (_kind, database) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(await database());
  });

  test("an open order another trader filled before the kill is reported filled, and its notional still counts", async () => {
    const maker = await newTrader(t);
    const taker = await newTrader(t);
    await holdShares(t, taker);
    // 5 USDC at 0.49: the best bid, resting (the fixture's best ask is 0.50).
    const { order: resting, status } = await place(t, maker, { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.49 });
    expect(status).toBe("open");
    // Another agent sells into it: the venue matches the resting order, and reports the fill in-process:
    // the maker's order is filled before any kill.
    const { status: takerStatus } = await place(t, taker, { market_id: DEM_YES, side: "sell", size_usdc: 5, price: 0.49 });
    expect(takerStatus).toBe("filled");
    expect((await t.app.services.venue.getOrder({ venue_order_id: resting.order_hash }))?.status).toBe("matched");
    await t.app.services.venueReports.settled();
    expect((await getOrder(t, maker.key, resting.order_id)).status).toBe("filled");

    const res = await t.call("POST", `/v1/agents/${maker.agent.id}/kill`, { key: maker.key });
    expect(res.status).toBe(200);
    expect(res.body.filled).toEqual([]);
    expect(res.body.cancelled).toEqual([]);
    expect(res.body.failed).toEqual([]);
    const row = await getOrder(t, maker.key, resting.order_id);
    expect(row.status).toBe("filled");
    expect(row.filled_usdc).toBe(4.998); // 10.2 shares × 0.49
    expect((await getAgent(t, maker)).daily_volume.used_usdc).toBe(4.998);
  });

  test("a cancelled order that had partly filled keeps its filled part against the daily volume", async () => {
    const maker = await newTrader(t);
    const taker = await newTrader(t);
    // The maker bids 20 USDC at 0.49 (40.81 shares); the taker sells 5 USDC into it (10.2 shares).
    await holdShares(t, taker);
    const { order: resting } = await place(t, maker, { market_id: DEM_YES, side: "buy", size_usdc: 20, price: 0.49 });
    await place(t, taker, { market_id: DEM_YES, side: "sell", size_usdc: 5, price: 0.49 });
    expect((await t.app.services.venue.getOrder({ venue_order_id: resting.order_hash }))?.filled_usdc).toBe("4.998");

    const res = await t.call("POST", `/v1/agents/${maker.agent.id}/kill`, { key: maker.key });
    expect(res.status).toBe(200);
    expect(res.body.cancelled).toEqual([resting.order_id]);
    // The fill is read after the answer; wait for it to be recorded.
    await until("the resting order's fill", async () => (await getOrder(t, maker.key, resting.order_id)).filled_usdc === 4.998, 3000);
    const row = await getOrder(t, maker.key, resting.order_id);
    expect(row.status).toBe("cancelled");
    expect((await getAgent(t, maker)).daily_volume.used_usdc).toBe(4.998);
  });
});
