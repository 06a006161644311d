/**
 * Exposure from positions plus open orders (issue #22, item 6): the concentration check and
 * `GET /v1/agents/{id}/exposure` count the positions at cost (from the fills) plus open buys' unfilled
 * notional, so a filled order counts once (as a position, not also as an order), a sell takes its
 * shares out at their average cost, and a cancel after a fill gives nothing back. The paper venue
 * (the default) reports its fills in-process; the agent's actor keeps the same figure in memory as the
 * view reads from the database. PGlite and, with TEST_DATABASE_URL, PostgreSQL.
 */
import { beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { approved, DEM_NO, DEM_YES, expectProblem, getOrder, holdShares, newTrader, patchLimits, postIntent, sign, submitSigned, type Trader } from "../support/payload.ts";

describeEachDatabase("exposure and concentration: positions plus open orders", (_kind, database) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(await database());
  });

  const exposureOf = async (tr: Trader) => {
    const res = await t.call("GET", `/v1/agents/${tr.agent.id}/exposure`, { key: tr.key });
    expect(res.status).toBe(200);
    return res.body;
  };
  const demRow = async (tr: Trader) => {
    const body = await exposureOf(tr);
    const rows = body.data.filter((r: any) => r.market_ids.includes(DEM_YES));
    expect(rows.length).toBeLessThanOrEqual(1);
    return rows[0] ?? null;
  };
  async function place(tr: Trader, body: Record<string, unknown>) {
    const order = await approved(t, tr, body);
    const res = await submitSigned(t, tr.key, order.order_id, await sign(tr.account, order.unsigned_order));
    expect(res.status).toBe(200);
    await t.app.services.venueReports.settled();
    return { ...order, status: res.body.status as string };
  }
  /** The exposure the actor counts (in memory), read through a dry run of a buy the concentration check fails. */
  async function actorExposure(tr: Trader): Promise<number> {
    const res = await postIntent(t, tr, { size_usdc: 1000, price: 0.49 }, "?dry_run=true");
    const failures = res.body.risk?.failures ?? res.body.failures ?? [];
    const c = failures.find((f: any) => f.check === "concentration");
    if (!c) throw new Error(`no concentration failure: ${res.status} ${res.text}`);
    return Math.round((c.actual - 1000) * 1e6) / 1e6;
  }

  test("a resting buy, its partial fill, its full fill, a sell and a cancel: each counted once", async () => {
    const x = await newTrader(t);
    const y = await newTrader(t);
    await holdShares(t, y); // Y bought 12 shares at 0.50 from the book: cost 6.

    // X bids 0.49 for 10.2 shares (4.998 USDC), resting: an open order, no position.
    const bid = await place(x, { price: 0.49 });
    expect(bid.status).toBe("open");
    expect(await demRow(x)).toMatchObject({ exposure_usdc: 4.998, positions_cost_usdc: 0, open_orders_usdc: 4.998 });
    expect(await actorExposure(x)).toBe(4.998);

    // Y sells 5 shares into it: X holds 5 at 0.49 (2.45) and its order has 5.2 unfilled (2.548).
    const s1 = await place(y, { side: "sell", size_usdc: 2.45, price: 0.49 });
    expect(s1.status).toBe("filled");
    expect((await getOrder(t, x.key, bid.order_id)).filled_shares).toBe(5);
    expect(await demRow(x)).toMatchObject({ exposure_usdc: 4.998, positions_cost_usdc: 2.45, open_orders_usdc: 2.548 });
    expect(await actorExposure(x)).toBe(4.998);

    // Y sells the other 5.2: X's order is filled; it counts once, as the position (not 2 × 4.998).
    await place(y, { side: "sell", size_usdc: 2.548, price: 0.49 });
    expect((await getOrder(t, x.key, bid.order_id)).status).toBe("filled");
    expect(await demRow(x)).toMatchObject({ exposure_usdc: 4.998, positions_cost_usdc: 4.998, open_orders_usdc: 0 });
    expect(await actorExposure(x)).toBe(4.998);

    // Y sold 10.2 of its 12 shares (cost 6 at 0.50): 1.8 left at cost 0.9. The sells took out their
    // cost basis (5.1), not their proceeds (4.998).
    expect(await demRow(y)).toMatchObject({ exposure_usdc: 0.9, positions_cost_usdc: 0.9, open_orders_usdc: 0 });
    expect(await actorExposure(y)).toBe(0.9);

    // X bids again (0.49, 10 shares = 4.9 USDC); another seller fills 5 of them, then X cancels: the
    // filled part stays as the position, the rest goes.
    const z = await newTrader(t);
    await holdShares(t, z);
    const bid2 = await place(x, { price: 0.49, size_usdc: 4.9 });
    expect(bid2.status).toBe("open");
    expect(await demRow(x)).toMatchObject({ exposure_usdc: 9.898, positions_cost_usdc: 4.998, open_orders_usdc: 4.9 });
    await place(z, { side: "sell", size_usdc: 2.45, price: 0.49 });
    expect((await getOrder(t, x.key, bid2.order_id)).filled_shares).toBe(5);
    expect(await demRow(x)).toMatchObject({ exposure_usdc: 9.898, positions_cost_usdc: 7.448, open_orders_usdc: 2.45 });
    expect(await actorExposure(x)).toBe(9.898);
    expect((await t.call("DELETE", `/v1/orders/${bid2.order_id}`, { key: x.key })).status).toBe(200);
    expect(await demRow(x)).toMatchObject({ exposure_usdc: 7.448, positions_cost_usdc: 7.448, open_orders_usdc: 0 });
    expect(await actorExposure(x)).toBe(7.448);
    // Its actor loaded again from the database (as after a restart or an eviction) counts the same.
    const registry = t.app.services.agents.registry;
    registry.forget(x.agent.id, registry.peek(x.agent.id)!);
    expect(registry.peek(x.agent.id)).toBeUndefined();
    expect(await actorExposure(x)).toBe(7.448);
    expect(await actorExposure(y)).toBe(0.9);
  });

  test("the concentration check counts positions plus open orders: the cap is reached by what is held", async () => {
    const x = await newTrader(t);
    await holdShares(t, x); // 12 shares at 0.50: cost 6.
    // Cap: 0.5 × 17 = 8.5 USDC per market. Held 6 + a resting bid of 5 shares at 0.40 (2 USDC) = 8.
    await patchLimits(t, x, { capital_usdc: 17, max_market_exposure_pct: 0.5, kelly_fallback_pct: 1 });
    const bid = await place(x, { price: 0.4, size_usdc: 2 });
    expect(bid.status).toBe("open");
    expect(await demRow(x)).toMatchObject({ exposure_usdc: 8, positions_cost_usdc: 6, open_orders_usdc: 2 });
    // A 2.5 USDC buy of the other outcome token (the same market) exceeds the cap: 8 + 2.5 > 8.5.
    const other = { market_id: DEM_NO, price: 0.5, size_usdc: 2.5 };
    const over = expectProblem(await postIntent(t, x, other), 422, "risk_rejected");
    expect(over.failures).toEqual([expect.objectContaining({ check: "concentration", code: "concentration_exceeded", limit: 8.5, actual: 10.5 })]);
    // Cancelling the open bid frees its 2: the same buy fits (6 + 2.5 = 8.5, the cap exactly).
    expect((await t.call("DELETE", `/v1/orders/${bid.order_id}`, { key: x.key })).status).toBe(200);
    expect(await demRow(x)).toMatchObject({ exposure_usdc: 6, positions_cost_usdc: 6, open_orders_usdc: 0 });
    expect((await postIntent(t, x, other)).status).toBe(201);
    // A sell is never refused by concentration.
    expect((await postIntent(t, x, { side: "sell", price: 0.5, size_usdc: 2.5 })).status).toBe(201);
  });
});
