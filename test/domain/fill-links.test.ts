/**
 * reckonFills (src/domain/fill-links.ts) on its own: which of an order's rows count, and what a
 * placement answer's row still counts, from the rows alone (the store's tests drive it through the
 * service: test/lifecycle/arrival-orders.test.ts).
 */
import { expect, test } from "bun:test";
import { type FillFacts, reckonFills } from "../../src/domain/fill-links.ts";

const H1 = "0xh1";
const H2 = "0xh2";
let next = 1;
const row = (f: Partial<FillFacts>): FillFacts => ({
  id: next++,
  tradeId: null,
  txHash: null,
  logIndex: null,
  sharesUnits: 4n,
  usdcUnits: 2n,
  status: "matched",
  covers: null,
  placedSharesUnits: null,
  placedUsdcUnits: null,
  ...f,
});
const twins = (rows: FillFacts[]) => rows.map((r) => reckonFills(rows).twinOf.get(r.id));

test("a MATCHED report and a log no report names, same shares: the log counts, the report is its twin", () => {
  const u = row({ tradeId: "T1" });
  const c = row({ txHash: H1, logIndex: 3 });
  expect(twins([u, c])).toEqual([c.id, null]);
  // Other shares: two trades.
  expect(twins([u, row({ txHash: H1, logIndex: 3, sharesUnits: 5n })])).toEqual([null, null]);
});

test("a report naming its transaction is the twin of that transaction's log only, whatever the shares", () => {
  const u = row({ tradeId: "T1", txHash: H1, sharesUnits: 1n });
  const v = row({ tradeId: "T2", txHash: H1, sharesUnits: 3n });
  const c = row({ txHash: H1, logIndex: 9 });
  expect(twins([u, v, c])).toEqual([c.id, c.id, null]);
  // A report naming another transaction is not paired with a log it cannot be.
  const w = row({ tradeId: "T3", txHash: H2 });
  const d = row({ txHash: H1, logIndex: 2 });
  expect(twins([w, d])).toEqual([null, null]);
  // A log already named after another trade is that trade's.
  const x = row({ tradeId: "T4", txHash: H1 });
  const e = row({ tradeId: "T5", txHash: H1, logIndex: 2 });
  expect(twins([x, e])).toEqual([null, null]);
});

test("pairs in arrival order, equal USDC first; rows taken back pair with nothing", () => {
  const u1 = row({ tradeId: "T1", usdcUnits: 5n });
  const u2 = row({ tradeId: "T2", usdcUnits: 2n });
  const c = row({ txHash: H1, logIndex: 1, usdcUnits: 2n });
  expect(twins([u1, u2, c])).toEqual([null, c.id, null]);
  const failed = row({ tradeId: "T3", status: "failed" });
  const d = row({ txHash: H2, logIndex: 1 });
  expect(twins([failed, d])).toEqual([null, null]);
});

test("a placement answer counts what its covered rows leave, twins accounting for nothing, rows taken back for their part", () => {
  const p = row({ covers: ["trade:T1", "trade:T2"], sharesUnits: 8n, usdcUnits: 4n, placedSharesUnits: 8n, placedUsdcUnits: 4n });
  const u1 = row({ tradeId: "T1", status: "failed" });
  const u2 = row({ tradeId: "T2" });
  const c2 = row({ txHash: H2, logIndex: 1 }); // T2's log: u2 is its twin, c2 accounts once
  const later = row({ tradeId: "T9", sharesUnits: 1n }); // a trade the answer did not name
  const r = reckonFills([p, u1, u2, c2, later]);
  expect(r.twinOf.get(u2.id)).toBe(c2.id);
  expect(r.placement.get(p.id)).toEqual({ sharesUnits: 0n, usdcUnits: 0n });
  const r2 = reckonFills([p, u2, c2]);
  expect(r2.placement.get(p.id)).toEqual({ sharesUnits: 4n, usdcUnits: 2n });
});
