/**
 * Migration 0024 (docs/decisions.md, "Delegated placements as HOT updates"): no index of orders covers a
 * column a delegated placement's status write changes, so that write is a HOT update; the queries by
 * status find their orders through the generated column `watch`, an order named by a venue id that is
 * not its hash through `venue_ref`, and each of them is served by an index.
 */
import { beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Database } from "../../src/db/database.ts";
import { FillStore } from "../../src/db/fill-store.ts";
import { type NewOrderRow, OrderRepository } from "../../src/db/order-repository.ts";
import type { OrderStatus } from "../../src/db/schema.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";
import { orderRow } from "../support/order-row.ts";

/** The columns a placement (submitting → open) writes: OrderRepository's placement statement. */
const PLACEMENT_WRITES = ["status", "venue_order_id", "history", "updated_at", "filled_units"];

describeEachDatabase("orders: placements as HOT updates", (kind, open) => {
  let database: Database;
  let repo: OrderRepository;
  const tag = `${kind}${process.pid}x${Date.now().toString(36)}`;
  const org = `org_hot${tag}`;
  const agentId = `agt_hot${tag}`;
  let n = 0;

  beforeAll(async () => {
    database = await open();
    repo = new OrderRepository(database.db, { maxInFlight: 1, run: database.run, query: database.query });
    await database.db.execute(sql`insert into orgs (id, name) values (${org}, 'hot')`);
  });

  const order = (status: OrderStatus, extra: Partial<NewOrderRow> = {}): NewOrderRow => {
    const id = `ord_hot${tag}n${++n}`;
    const hash = `0x${tag}${n.toString(16).padStart(8, "0")}`;
    return orderRow({ id, orgId: org, agentId, mode: "delegated", marketId: "123", conditionId: "0xc", sizeUnits: 1_000_000n, notionalUnits: 500_000n, status, orderHash: hash, ...extra }, "approved");
  };
  const insert = (o: NewOrderRow) =>
    repo.insert(o, { id: `dec_${o.id}`, orgId: org, agentId, approved: true, intent: {}, failures: [], checks: [], orderId: o.id, createdAt: o.createdAt! });
  const watchOf = async (id: string) => (await rowsOf(database, sql`select watch from orders where id = ${id}`))[0]?.watch;

  test("no index of orders covers a column the placement writes, in its key, expression or predicate; the table keeps room on its pages", async () => {
    const defs = (await rowsOf(database, sql`select indexname, indexdef from pg_indexes where tablename = 'orders'`)).map((r) => String(r.indexdef));
    expect(defs.length).toBeGreaterThanOrEqual(5);
    for (const def of defs) for (const column of PLACEMENT_WRITES) expect(def).not.toMatch(new RegExp(`\\b${column}\\b`));
    const [rel] = await rowsOf(database, sql`select array_to_string(reloptions, ',') as options from pg_class where relname = 'orders' and relkind = 'r'`);
    expect(String(rel?.options)).toContain("fillfactor=50");
  });

  test("orders of a real size inserted together and placed in one statement all stay on their pages (HOT: no other page, no index entry)", async () => {
    // About the size of a service's row (~1.5 kB): the EIP-712 order and the approving intent. At
    // fillfactor 75 a page held three of them and room for two new versions: the third placed in the
    // same statement (which cannot prune the others' old versions) went to another page.
    const wide = () =>
      order("submitting", {
        marketId: "71321045679252212594626385532706912750332728571942532289631379312455583992563",
        conditionId: `0x${"5f".repeat(32)}`,
        orderHash: `0x${tag}${(++n).toString(16).padStart(8, "0")}${"ab".repeat(24)}`,
        typedData: {
          domain: { name: "Polymarket CTF Exchange", version: "2", chainId: 137, verifyingContract: "0x4bFb41d5B3570DeFd03C39a9A4D8dE6Bd8B8982E" },
          primaryType: "Order",
          message: {
            salt: "817263549182736", maker: `0x${"ab".repeat(20)}`, signer: `0x${"cd".repeat(20)}`, taker: `0x${"00".repeat(20)}`,
            tokenId: "71321045679252212594626385532706912750332728571942532289631379312455583992563", makerAmount: "2600000", takerAmount: "5000000",
            expiration: "0", nonce: "0", feeRateBps: "0", side: 0, signatureType: 0,
          } as never,
        },
        decisionIntent: { market_id: "71321045679252212594626385532706912750332728571942532289631379312455583992563", side: "buy", size_usdc: 2.6, price: 0.52, order_type: "GTC" },
        clientOrderId: `client-${tag}-${n}`,
      });
    const batch = Array.from({ length: 12 }, wide);
    await Promise.all(batch.map(insert));
    const pages = async () =>
      Object.fromEntries((await rowsOf(database, sql`select id, (ctid::text::point)[0] as page from orders where id in ${sql`(${sql.join(batch.map((o) => sql`${o.id}`), sql`, `)})`}`)).map((r) => [r.id, Number(r.page)]));
    const before = await pages();
    expect(Object.keys(before)).toHaveLength(batch.length);
    const placed = await Promise.all(batch.map((o) => repo.transitionPlaced(o.id, "open", "resting at the venue", { venueOrderId: o.orderHash!, filledUnits: 0n })));
    expect(placed.map((r) => r?.status)).toEqual(batch.map(() => "open"));
    expect(await pages()).toEqual(before);
  });

  test("watch follows the status: sign, approve, venue (a placement leaves it), none once ended", async () => {
    const unsigned = order("awaiting_signature", { mode: "payload", signatureDeadline: new Date(Date.now() + 60_000) });
    const pending = order("pending_approval", { approvalDeadline: new Date(Date.now() + 60_000) });
    const placed = order("submitting");
    for (const o of [unsigned, pending, placed]) await insert(o);
    expect([await watchOf(unsigned.id), await watchOf(pending.id), await watchOf(placed.id)]).toEqual(["sign", "approve", "venue"]);
    await repo.transitionPlaced(placed.id, "open", "resting", { venueOrderId: "0xv", filledUnits: 0n });
    expect(await watchOf(placed.id)).toBe("venue");
    await repo.transition(placed.id, ["open"], "cancelled", "cancelled by the client");
    expect(await watchOf(placed.id)).toBeNull();
  });

  test("the sweeps by status and deadline find their orders", async () => {
    const past = new Date(Date.now() - 1000);
    const expired = order("awaiting_signature", { mode: "payload", signatureDeadline: past });
    const approvalDue = order("pending_approval", { approvalDeadline: past });
    const stuck = order("submitting");
    // Resting orders are restored from their stored message (restingAtVenue).
    const cancelling = order("submitting", { typedData: { domain: { name: "Polymarket CTF Exchange", version: "2", chainId: 137, verifyingContract: "0x0" }, primaryType: "Order", message: { salt: "1" } as never } });
    for (const o of [expired, approvalDue, stuck, cancelling]) await insert(o);
    await repo.transitionPlaced(cancelling.id, "open", "resting", { venueOrderId: "0xc1", filledUnits: 0n });
    expect(await repo.markCancelRequested(cancelling.id, ["open"])).not.toBeNull();
    const now = new Date();
    expect((await repo.dueForExpiry(now)).map((o) => o.id)).toContain(expired.id);
    expect((await repo.dueForApprovalExpiry(now)).map((o) => o.id)).toContain(approvalDue.id);
    const unsettled = (await repo.unsettled()).map((o) => o.id);
    expect(unsettled).toContain(stuck.id);
    expect(unsettled).toContain(cancelling.id);
    expect((await repo.restingAtVenue()).map((o) => o.id)).toContain(cancelling.id);
  });

  test("an order named by the venue's id: one that is its hash, and one that is not", async () => {
    const fills = new FillStore(database.db, (row) => ({ order: { id: row.id } }), () => new Date());
    const byHash = order("submitting");
    const byOther = order("submitting");
    await insert(byHash);
    await insert(byOther);
    await repo.transitionPlaced(byHash.id, "open", "resting", { venueOrderId: byHash.orderHash!, filledUnits: 0n });
    await repo.transitionPlaced(byOther.id, "open", "resting", { venueOrderId: `venue-${byOther.id}`, filledUnits: 0n });
    expect(await fills.findOrder({ venueOrderId: byHash.orderHash! })).toEqual({ id: byHash.id, agentId });
    expect(await fills.findOrder({ venueOrderId: `venue-${byOther.id}` })).toEqual({ id: byOther.id, agentId });
    expect(await fills.findOrder({ venueOrderId: "venue-none" })).toBeNull();
    const refs = await rowsOf(database, sql`select id, venue_ref from orders where id in (${byHash.id}, ${byOther.id}) order by id`);
    expect(Object.fromEntries(refs.map((r) => [r.id, r.venue_ref]))).toEqual({ [byHash.id]: null, [byOther.id]: `venue-${byOther.id}` });
  });

  test("the queries by status and by the venue's id are served by an index", async () => {
    const plan = async (query: string) => (await rowsOf(database, `explain ${query}`)).map((r) => String(r["QUERY PLAN"])).join("\n");
    for (const [query, index] of [
      ["select id from orders where watch = 'sign' and status = 'awaiting_signature' and signature_deadline < now() limit 500", "orders_watch_idx"],
      ["select id from orders where watch = 'approve' and status = 'pending_approval' and approval_deadline <= now() limit 500", "orders_watch_idx"],
      ["select id from orders where watch = 'venue' and (status in ('submitting', 'unknown') or (status = 'open' and cancel_requested_at is not null)) limit 500", "orders_watch_idx"],
      ["select id from orders where venue_ref = 'x' limit 1", "orders_venue_ref_idx"],
    ] as const)
      expect(await plan(query)).toContain(index);
  });
});
