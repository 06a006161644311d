/**
 * GET /v1/orders/{id} reads the order's row and its fills in one snapshot: while fills are applied
 * concurrently, every answer's `filled_usdc` equals what its `fills` add up to (found end to end on
 * PostgreSQL: a fill committed between the two reads was listed while the row did not count it, so
 * an order showed `open`, filled_usdc 0, filled_shares 10 and its fill). Both databases.
 */
import { beforeAll, expect, test } from "bun:test";
import type { FillReport } from "../../src/domain/venue-report.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { approved, getOrder, newTrader, sign, submitSigned } from "../support/payload.ts";

describeEachDatabase("an order's row and its fills agree in every read", (_kind, database) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(await database());
  });

  test("fills applied while the order is read: filled_usdc is always the sum of the counted fills", async () => {
    const tr = await newTrader(t);
    // 5 USDC at 0.47 rests on the paper venue: 10.63 shares.
    const order = await approved(t, tr, { price: 0.47 });
    expect((await submitSigned(t, tr.key, order.order_id, await sign(tr.account, order.unsigned_order))).body.status).toBe("open");
    const N = 20;
    const reports: FillReport[] = Array.from({ length: N }, (_, i) => ({
      kind: "fill",
      ref: { orderHash: order.order_hash },
      source: "chain",
      fillKey: `tx:0x${(i + 1).toString(16).padStart(64, "0")}:0`,
      txHash: `0x${(i + 1).toString(16).padStart(64, "0")}`,
      logIndex: 0,
      sharesUnits: 500_000n,
      usdcUnits: 235_000n,
      feeUnits: 0n,
      price: "0.47",
      status: "mined",
      at: new Date(),
    }));
    let applying = true;
    const writer = (async () => {
      for (const r of reports) expect(await t.app.services.venueReports.deliver(r)).toBe("applied");
      applying = false;
    })();
    const reads: { usdc: number; listed: number; n: number }[] = [];
    while (applying) {
      const got = await getOrder(t, tr.key, order.order_id);
      const listed = got.fills.filter((f: any) => f.status !== "failed").reduce((s: number, f: any) => s + Math.round(Number(f.usdc) * 1e6), 0);
      reads.push({ usdc: Math.round(got.filled_usdc * 1e6), listed, n: got.fills.length });
    }
    await writer;
    expect(reads.length).toBeGreaterThan(0);
    // Reads that saw some fills but not all of them: the ones that could disagree.
    expect(reads.filter((r) => r.n > 0 && r.n < N).length).toBeGreaterThan(0);
    expect(reads.filter((r) => r.usdc !== r.listed)).toEqual([]);
    const last = await getOrder(t, tr.key, order.order_id);
    expect(last).toMatchObject({ status: "open", filled_usdc: 4.7, filled_shares: 10 });
  });
});
