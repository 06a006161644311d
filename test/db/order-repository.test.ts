/**
 * The group-commit inserts of OrderRepository (one multi-row INSERT … VALUES per batch) must store
 * exactly what drizzle's own insert stores for the same row, on both databases: every column, the
 * defaults of the columns a row leaves out, JSON as JSON (not as a JSON-encoded string), NULLs,
 * booleans, bigints and times.
 */
import { beforeAll, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import type { Database } from "../../src/db/database.ts";
import { orders, riskDecisions } from "../../src/db/schema.ts";
import type { NewDecisionRow, NewOrderRow } from "../../src/db/order-repository.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";
import { orderRow as newOrderRow } from "../support/order-row.ts";
import { newTrader } from "../support/payload.ts";
import { storedDecisions } from "../support/stored-decisions.ts";

describeEachDatabase("order repository batch inserts", (kind, open) => {
  let database: Database;
  let t: TestApp;
  let agent: { id: string; org_id: string };
  let n = 0;

  beforeAll(async () => {
    database = await open();
    t = await createTestApp(database);
    agent = (await newTrader(t)).agent;
  });

  const tag = () => `${kind}${process.pid}x${++n}${Date.now().toString(36)}`;

  const orderRow = (id: string, over: Partial<NewOrderRow> = {}): NewOrderRow => {
    const at = new Date(Date.UTC(2026, 10, 21, 12, 0, 0, 123));
    const row = newOrderRow(
      {
        id,
        orgId: agent.org_id,
        agentId: agent.id,
        marketId: "1234567890123456789012345678901234567890",
        conditionId: "0xcondition",
        side: "sell",
        sizeUnits: 9_007_199_254_740_993n, // above 2^53: must not pass through a float
        price: "0.473",
        notionalUnits: 4_730_000n,
        orderType: "GTD",
        expiration: "1795000000",
        status: "awaiting_signature",
        orderHash: `0x${"ab".repeat(32)}`,
        typedData: {
          domain: { name: "Polymarket CTF Exchange", version: "2", chainId: 137, verifyingContract: `0x${"11".repeat(20)}` },
          primaryType: "Order",
          message: { salt: "42", maker: `0x${"22".repeat(20)}`, side: 1, note: `it's "quoted" \\ é` } as never,
        },
        signatureDeadline: new Date(at.getTime() + 300_000),
        venueOrderId: null,
        filledUnits: 17n,
        flaggedForReview: true,
        clientOrderId: `cli-'"\\-é-${id}`,
        decisionId: `dec_${id}`,
        createdAt: at,
      },
      "approved by the risk engine",
    );
    return { ...row, ...over };
  };

  const decisionRow = (id: string, orderId: string | null, over: Partial<NewDecisionRow> = {}): NewDecisionRow => ({
    id,
    orgId: agent.org_id,
    agentId: agent.id,
    approved: orderId !== null,
    intent: { market_id: "1234", side: "sell", size_usdc: 9.5, price: 0.473, probability: null, nested: { a: [1, "x"] } },
    failures: orderId ? [] : [{ check: "order_size", code: "order_too_large", limit: 100, actual: 150 }],
    checks: orderId ? [] : [{ check: "order_size", passed: false }],
    orderId,
    createdAt: new Date(Date.UTC(2026, 10, 21, 12, 0, 1)),
    ...over,
  });

  /** Every column of both rows, read back the same way, the id columns set aside. */
  async function readOrder(id: string) {
    const [row] = await database.db.select().from(orders).where(eq(orders.id, id));
    const { id: _id, decisionId: _d, clientOrderId, ...rest } = row;
    return { ...rest, clientOrderId: clientOrderId?.replace(id, "<id>") };
  }
  async function readDecision(id: string) {
    const [row] = await storedDecisions(database.db, { id });
    const { id: _id, orderId, ...rest } = row;
    return { ...rest, orderId: orderId ? "<order>" : null };
  }

  test("a batch of approved orders and their decisions stores what drizzle's insert stores, column for column", async () => {
    // Between them the variants give every column a value other than its default, so a column
    // missing from the batch insert would show as a difference.
    const variants: Partial<NewOrderRow>[] = [
      {},
      // Columns left out take the table's defaults; nullable ones are NULL.
      { expiration: undefined, filledUnits: undefined, flaggedForReview: undefined, orderHash: null, typedData: null, signatureDeadline: null, clientOrderId: null },
      { mode: "delegated", status: "submitting", venueOrderId: "venue-1", side: "buy", orderType: "GTC" },
    ];
    for (const over of variants) {
      const viaBatch = `ord_${tag()}`;
      const viaDrizzle = `ord_${tag()}`;
      // Three concurrent writes share one batch (one statement).
      await Promise.all([
        t.app.services.orderRepo.insert(orderRow(viaBatch, over), decisionRow(`dec_${viaBatch}`, viaBatch)),
        t.app.services.orderRepo.insert(orderRow(`${viaBatch}b`, over), decisionRow(`dec_${viaBatch}b`, `${viaBatch}b`)),
        t.app.services.orderRepo.insertDecision(decisionRow(`dec_${viaBatch}r`, null)),
      ]);
      // An approval is kept on its order row (decision_id, decision_intent); a rejection is a risk_decisions row.
      await database.db.insert(orders).values({ ...orderRow(viaDrizzle, over), decisionIntent: decisionRow(`dec_${viaDrizzle}`, viaDrizzle).intent });
      await database.db.insert(riskDecisions).values([decisionRow(`dec_${viaDrizzle}r`, null)]);

      expect(await readOrder(viaBatch)).toEqual(await readOrder(viaDrizzle));
      expect(await readOrder(`${viaBatch}b`)).toEqual(await readOrder(viaDrizzle));
      expect(await readDecision(`dec_${viaBatch}`)).toEqual(await readDecision(`dec_${viaDrizzle}`));
      expect(await readDecision(`dec_${viaBatch}r`)).toEqual(await readDecision(`dec_${viaDrizzle}r`));
    }
  });

  test("JSON columns hold JSON documents, not JSON-encoded strings (drizzle's reader would hide the difference); the order's are JSON text", async () => {
    const id = `ord_${tag()}`;
    await Promise.all([t.app.services.orderRepo.insert(orderRow(id), decisionRow(`dec_${id}`, id)), t.app.services.orderRepo.insertDecision(decisionRow(`dec_${id}r`, null))]);
    const [o] = await rowsOf(
      database,
      sql`select pg_typeof(typed_data)::text as type, jsonb_typeof(typed_data::jsonb) as td, jsonb_typeof(history::jsonb) as h, jsonb_typeof(decision_intent::jsonb) as i, typed_data::jsonb->'message'->>'note' as note from orders where id = ${id}`,
    );
    expect(o).toEqual({ type: "text", td: "object", h: "array", i: "object", note: `it's "quoted" \\ é` });
    const ds = await rowsOf(
      database,
      sql`select id, jsonb_typeof(intent) as i, jsonb_typeof(failures) as f, jsonb_typeof(checks) as c, approved from risk_decisions where id in (${`dec_${id}`}, ${`dec_${id}r`}) order by id`,
    );
    // The approval has no row of its own (it is on the order, checked above).
    expect(ds).toEqual([{ id: `dec_${id}r`, i: "object", f: "array", c: "array", approved: false }]);
  });

  test("one bad row in a batch does not fail the others: they are retried one by one", async () => {
    const good = `ord_${tag()}`;
    const dup = `ord_${tag()}`;
    await t.app.services.orderRepo.insert(orderRow(dup), decisionRow(`dec_${dup}`, dup));
    const results = await Promise.allSettled([
      t.app.services.orderRepo.insert(orderRow(good), decisionRow(`dec_${good}`, good)),
      t.app.services.orderRepo.insert(orderRow(dup), decisionRow(`dec_${dup}x`, dup)), // duplicate order id
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    expect((await database.db.select().from(orders).where(eq(orders.id, good))).length).toBe(1);
    expect((await storedDecisions(database.db, { id: `dec_${dup}x` })).length).toBe(0);
  });
});
