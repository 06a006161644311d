/**
 * The venue's truth reaching the agent (issue #22, items 1, 4, 6, 7, 11): the order lifecycle table;
 * fills handed to the venue report sink as the sources hand them (the chain, the user channel), each
 * counted once across sources and repeats; partial fills; a fill taken back; cancels at the venue;
 * positions and PnL across buys, partial fills and sells; `insufficient_position`; the paper venue's
 * in-process fills; checksummed addresses. PGlite and, with TEST_DATABASE_URL, PostgreSQL.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { getAddress } from "viem";
import { ORDER_LIFECYCLE, allows, fromStatuses, nextStatus } from "../../src/domain/order-lifecycle.ts";
import type { FillReport, VenueReport } from "../../src/domain/venue-report.ts";
import { postOrderPayload } from "../../src/venues/clob/clob-venue.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";
import { approved, DEM_YES, expectProblem, getAgent, getOrder, holdShares, newTrader, postIntent, sign, submitSigned, type Trader } from "../support/payload.ts";

describe("the order lifecycle table", () => {
  test("allowed events lead where the statuses say", () => {
    expect(nextStatus("open", "fill")).toBe("open");
    expect(nextStatus("open", "fill_complete")).toBe("filled");
    expect(nextStatus("unknown", "fill")).toBe("open");
    expect(nextStatus("cancelled", "fill")).toBe("cancelled"); // matched before the cancel: kept
    expect(nextStatus("cancelled", "fill_complete")).toBe("filled");
    expect(nextStatus("filled", "fill_reverted")).toBe("open");
    expect(nextStatus("open", "venue_cancelled")).toBe("cancelled");
    expect(nextStatus("open", "venue_expired")).toBe("expired");
    expect(nextStatus("unknown", "venue_placed")).toBe("open");
    expect(nextStatus("open", "cancel_unreadable")).toBe("unknown");
    expect(nextStatus("submitting", "venue_timeout")).toBe("unknown");
  });

  test("refused events: nothing leads out of a status the table does not name", () => {
    for (const s of ["awaiting_signature", "pending_approval", "rejected"] as const) {
      expect(allows(s, "fill")).toBe(false);
      expect(allows(s, "fill_complete")).toBe(false);
      expect(allows(s, "fill_reverted")).toBe(false);
    }
    expect(allows("filled", "venue_cancelled")).toBe(false);
    expect(allows("cancelled", "venue_placed")).toBe(false);
    expect(allows("expired", "signature_verified")).toBe(false);
    expect(allows("open", "signature_verified")).toBe(false);
    expect(nextStatus("rejected", "venue_cancelled")).toBeNull();
  });

  test("the store's conditional updates read their 'from' statuses from the table", () => {
    expect(fromStatuses("kill_cancelled").sort()).toEqual(["awaiting_signature", "open", "pending_approval", "submitting", "unknown"]);
    expect(fromStatuses("cancel_confirmed").sort()).toEqual(["open", "unknown"]);
    expect(fromStatuses("venue_timeout")).toEqual(["submitting"]);
    expect(fromStatuses("fill_complete", "filled").sort()).toEqual(["cancelled", "expired", "failed", "filled", "open", "unknown"]);
    // Every row leads to a status (the table is total over what it names).
    for (const row of Object.values(ORDER_LIFECYCLE)) for (const to of Object.values(row)) expect(typeof to).toBe("string");
  });
});

describeEachDatabase("venue reports through the sink", (_kind, database) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(await database());
  });

  const sink = () => t.app.services.venueReports;

  /** 5 USDC at 0.47: 10.63 shares resting (best bid 0.48, best ask 0.50). */
  async function openOrder(tr: Trader, body: Record<string, unknown> = { price: 0.47 }) {
    const order = await approved(t, tr, body);
    const res = await submitSigned(t, tr.key, order.order_id, await sign(tr.account, order.unsigned_order));
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("open");
    return order;
  }

  const fill = (orderHash: string, f: Partial<FillReport> & { sharesUnits: bigint; usdcUnits: bigint }): FillReport => ({
    kind: "fill",
    ref: { orderHash: orderHash as `0x${string}` },
    source: "user_channel",
    fillKey: f.tradeId ? `trade:${f.tradeId}` : `tx:${f.txHash}:${f.logIndex}`,
    feeUnits: 0n,
    price: "0.47",
    status: "matched",
    at: new Date(),
    ...f,
  });

  const orderEvents = async (orderId: string) =>
    (await rowsOf(t.app.services.database, `select data from events where type = 'order' and data is not null and data->'order'->>'id' = '${orderId}' order by id`)).map(
      (r) => (typeof r.data === "string" ? JSON.parse(r.data) : r.data) as any,
    );

  test("a fill seen twice and by two sources counts once; a partial fill keeps the order open; the rest fills it", async () => {
    const tr = await newTrader(t);
    const order = await openOrder(tr);
    const first = fill(order.order_hash, { tradeId: "T-1", sharesUnits: 4_000_000n, usdcUnits: 1_880_000n });
    expect(await sink().deliver(first)).toBe("applied");
    expect(await sink().deliver(first)).toBe("repeat");
    // The chain reports the same trade by its transaction (and knows the trade id through the match).
    const chain = fill(order.order_hash, { source: "chain", tradeId: "T-1", txHash: `0x${"ab".repeat(32)}`, logIndex: 3, status: "confirmed", sharesUnits: 4_000_000n, usdcUnits: 1_880_000n });
    chain.fillKey = `tx:${chain.txHash}:3`;
    expect(await sink().deliver(chain)).toBe("applied"); // the transaction and a later status learned, nothing counted again
    // And once more by the transaction alone.
    const byTx: FillReport = { ...chain, tradeId: undefined };
    expect(await sink().deliver(byTx)).toBe("repeat");

    let got = await getOrder(t, tr.key, order.order_id);
    expect(got.status).toBe("open");
    expect(got.filled_usdc).toBe(1.88);
    expect(got.filled_shares).toBe(4);
    expect(got.fills.length).toBe(1);
    expect(got.fills[0]).toMatchObject({ price: "0.47", shares: "4", usdc: "1.88", fee: "0", source: "user_channel", sources: ["user_channel", "chain"], trade_id: "T-1", tx_hash: chain.txHash, log_index: 3, status: "confirmed" });
    let agent = await getAgent(t, tr);
    expect(agent.open_orders).toBe(1);
    expect(agent.daily_volume.used_usdc).toBe(4.9961); // the open order's whole notional

    // The rest of the 10.63 shares: filled.
    expect(await sink().deliver(fill(order.order_hash, { tradeId: "T-2", sharesUnits: 6_630_000n, usdcUnits: 3_116_100n }))).toBe("applied");
    got = await getOrder(t, tr.key, order.order_id);
    expect(got.status).toBe("filled");
    expect(got.filled_shares).toBe(10.63);
    expect(got.filled_usdc).toBe(4.9961);
    agent = await getAgent(t, tr);
    expect(agent.open_orders).toBe(0);
    expect(agent.daily_volume.used_usdc).toBe(4.9961);
    // Every fill was an `order` event carrying it.
    const fillsReported = (await orderEvents(order.order_id)).filter((e) => e.fill).map((e) => [e.order.status, e.fill.trade_id]);
    expect(fillsReported).toEqual([
      ["open", "T-1"],
      ["open", "T-1"],
      ["filled", "T-2"],
    ]);
  });

  test("a FAILED trade is taken back: the order is open again with what still counts", async () => {
    const tr = await newTrader(t);
    const order = await openOrder(tr);
    await sink().deliver(fill(order.order_hash, { tradeId: "F-1", sharesUnits: 5_000_000n, usdcUnits: 2_350_000n }));
    await sink().deliver(fill(order.order_hash, { tradeId: "F-2", sharesUnits: 5_630_000n, usdcUnits: 2_646_100n }));
    expect((await getOrder(t, tr.key, order.order_id)).status).toBe("filled");
    // The venue marks the second trade FAILED.
    expect(await sink().deliver({ kind: "fill_reverted", ref: { orderHash: order.order_hash }, source: "user_channel", fillKey: "trade:F-2", reason: "trade_failed", at: new Date() })).toBe("applied");
    const got = await getOrder(t, tr.key, order.order_id);
    expect(got.status).toBe("open");
    expect(got.filled_usdc).toBe(2.35);
    expect(got.filled_shares).toBe(5);
    expect(got.fills.map((f: any) => f.status)).toEqual(["matched", "failed"]);
    expect((await getAgent(t, tr)).open_orders).toBe(1);
    // Taking it back twice changes nothing; a trade reported FAILED as a fill status does the same.
    expect(await sink().deliver({ kind: "fill_reverted", ref: { orderHash: order.order_hash }, source: "chain", fillKey: "trade:F-2", reason: "reorg", at: new Date() })).toBe("repeat");
    expect(await sink().deliver({ ...fill(order.order_hash, { tradeId: "F-1", sharesUnits: 5_000_000n, usdcUnits: 2_350_000n }), status: "failed" })).toBe("applied");
    expect((await getOrder(t, tr.key, order.order_id)).filled_usdc).toBe(0);
  });

  test("an event the table does not allow is logged and ignored: a fill of an order awaiting its signature", async () => {
    const tr = await newTrader(t);
    const order = await approved(t, tr, { price: 0.47 });
    expect(await sink().deliver(fill(order.order_hash, { tradeId: "X-1", sharesUnits: 1_000_000n, usdcUnits: 470_000n }))).toBe("refused");
    expect(await sink().deliver({ kind: "cancelled", ref: { orderHash: order.order_hash }, source: "user_channel", at: new Date() })).toBe("refused");
    const got = await getOrder(t, tr.key, order.order_id);
    expect(got.status).toBe("awaiting_signature");
    expect(got.fills).toEqual([]);
    expect(got.filled_usdc).toBe(0);
    expect(t.logs.join("\n")).toContain("venue report not allowed by the order lifecycle");
    // An order nobody here knows is dropped.
    expect(await sink().deliver(fill(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`, { tradeId: "X-2", sharesUnits: 1n, usdcUnits: 1n }))).toBe("unknown_order");
  });

  test("a cancel at the venue of a partly filled order: cancelled, its filled part keeps counting", async () => {
    const tr = await newTrader(t);
    const order = await openOrder(tr);
    await sink().deliver(fill(order.order_hash, { tradeId: "C-1", sharesUnits: 5_000_000n, usdcUnits: 2_350_000n }));
    expect(await sink().deliver({ kind: "cancelled", ref: { venueOrderId: order.order_hash }, source: "user_channel", at: new Date() })).toBe("applied");
    const got = await getOrder(t, tr.key, order.order_id);
    expect(got.status).toBe("cancelled");
    expect(got.filled_usdc).toBe(2.35);
    const agent = await getAgent(t, tr);
    expect(agent.open_orders).toBe(0);
    expect(agent.daily_volume.used_usdc).toBe(2.35);
    // A GTD expiry of another order.
    const other = await openOrder(tr);
    expect(await sink().deliver({ kind: "expired", ref: { orderHash: other.order_hash }, source: "user_channel", at: new Date() })).toBe("applied");
    expect((await getOrder(t, tr.key, other.order_id)).status).toBe("expired");
    expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(2.35);
    // A cancel that says 5 shares had matched, with no fill reported: the 5 × 0.47 keep counting.
    const third = await openOrder(tr);
    expect(await sink().deliver({ kind: "cancelled", ref: { orderHash: third.order_hash }, source: "rest", sizeMatchedUnits: 5_000_000n, at: new Date() })).toBe("applied");
    expect(await getOrder(t, tr.key, third.order_id)).toMatchObject({ status: "cancelled", filled_usdc: 2.35 });
    expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(4.7);
    // A second cancel of it is not allowed by the table (cancelled → cancelled): ignored.
    expect(await sink().deliver({ kind: "cancelled", ref: { orderHash: third.order_hash }, source: "user_channel", at: new Date() })).toBe("refused");
  });

  test("the paper venue reports in-process: X's resting buy filled by Y's sell is filled", async () => {
    const x = await newTrader(t);
    const y = await newTrader(t);
    await holdShares(t, y);
    // X bids 0.49 for 10.2 shares (the best bid); Y sells 10.2 shares into it.
    const bid = await openOrder(x, { price: 0.49 });
    const ask = await approved(t, y, { side: "sell", price: 0.49 });
    const sold = await submitSigned(t, y.key, ask.order_id, await sign(y.account, ask.unsigned_order));
    expect(sold.body.status).toBe("filled");
    await sink().settled();
    const got = await getOrder(t, x.key, bid.order_id);
    expect(got.status).toBe("filled");
    expect(got.filled_usdc).toBe(4.998);
    expect(got.filled_shares).toBe(10.2);
    expect(got.fills).toHaveLength(1);
    expect(got.fills[0]).toMatchObject({ source: "paper", price: "0.49", shares: "10.2", usdc: "4.998", status: "confirmed" });
    expect((await getAgent(t, x)).open_orders).toBe(0);
    // Y's order has the same trade, on its own side.
    const yours = await getOrder(t, y.key, ask.order_id);
    expect(yours.fills[0].trade_id).toBe(got.fills[0].trade_id);
  });

  test("positions and PnL across a buy, a partly filled sell, and insufficient_position", async () => {
    const a = await newTrader(t);
    const b = await newTrader(t);
    // A buys 12 shares at 0.50 from the book: cost 6.
    await holdShares(t, a, { size_usdc: 6, price: 0.5 });
    let pos = (await t.call("GET", `/v1/agents/${a.agent.id}/positions`, { key: a.key })).body;
    expect(pos.agent_id).toBe(a.agent.id);
    expect(pos.positions).toHaveLength(1);
    expect(pos.positions[0]).toMatchObject({ token_id: DEM_YES, market_id: DEM_YES, shares: "12", avg_price: "0.5", cost_usdc: "6", realized_pnl_usdc: "0" });

    // A offers 10 shares at 0.49 (the new best ask); B buys 5 of them.
    const sell = await approved(t, a, { side: "sell", size_usdc: 4.9, price: 0.49 });
    const rest = await submitSigned(t, a.key, sell.order_id, await sign(a.account, sell.unsigned_order));
    expect(rest.body.status).toBe("open");
    const buy = await approved(t, b, { size_usdc: 2.45, price: 0.49 });
    expect((await submitSigned(t, b.key, buy.order_id, await sign(b.account, buy.unsigned_order))).body.status).toBe("filled");
    await sink().settled();
    const partly = await getOrder(t, a.key, sell.order_id);
    expect(partly.status).toBe("open");
    expect(partly.filled_shares).toBe(5);

    pos = (await t.call("GET", `/v1/agents/${a.agent.id}/positions`, { key: a.key })).body;
    // 7 shares left at 0.50 (cost 3.5); the 5 sold at 0.49 realized 5 × (0.49 − 0.50) = −0.05. Mark: the
    // mid of the best bid 0.48 and A's own remaining ask 0.49 = 0.485; unrealized 7 × 0.485 − 3.5 = −0.105.
    expect(pos.positions[0]).toMatchObject({ shares: "7", avg_price: "0.5", cost_usdc: "3.5", realized_pnl_usdc: "-0.05", mark_price: "0.485", unrealized_pnl_usdc: "-0.105" });
    const bPos = (await t.call("GET", `/v1/agents/${b.agent.id}/positions`, { key: b.key })).body;
    expect(bPos.positions[0]).toMatchObject({ shares: "5", avg_price: "0.49", cost_usdc: "2.45" });

    // A holds 7 and offers 5 in its open sell: a sell of 5 more shares fails order_size.
    const tooMany = await postIntent(t, a, { side: "sell", size_usdc: 2.5, price: 0.5 });
    const p = expectProblem(tooMany, 422, "risk_rejected");
    expect(p.failures).toEqual([expect.objectContaining({ check: "order_size", code: "insufficient_position", limit: 2, actual: 5 })]);
    expect(p.checks).toHaveLength(8);
    // A sell of the 2 free shares is below the market's 5-share minimum; after the open sell is
    // cancelled, 7 are free and a 5-share sell passes.
    expect((await t.call("DELETE", `/v1/orders/${sell.order_id}`, { key: a.key })).status).toBe(200);
    expect((await postIntent(t, a, { side: "sell", size_usdc: 2.5, price: 0.5 })).status).toBe(201);
    // Another agent's positions are not A's to read.
    expect((await t.call("GET", `/v1/agents/${b.agent.id}/positions`, { key: a.key })).status).toBe(404);
  });

  test("unsigned orders carry checksummed addresses, and so does every forwarded body", async () => {
    const tr = await newTrader(t);
    const order = await approved(t, tr, { price: 0.47 });
    const m = order.unsigned_order.message;
    expect(m.maker).toBe(getAddress(tr.account.address));
    expect(m.signer).toBe(getAddress(tr.account.address));
    // A stored order with lowercase addresses (written before this change) is forwarded checksummed.
    const body = postOrderPayload({ order: { ...m, maker: m.maker.toLowerCase(), signer: m.signer.toLowerCase() }, signature: "0x01", order_type: "GTC", expiration: "0", owner: "k" });
    expect(body).toContain(`"maker":"${getAddress(tr.account.address)}"`);
    expect(body).toContain(`"signer":"${getAddress(tr.account.address)}"`);
  });
});
