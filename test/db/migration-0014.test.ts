/**
 * Migration 0014 turns the orders' three JSON documents (typed_data, decision_intent, history) from
 * jsonb into text holding JSON. On a database made before it, an order stored as jsonb must read back
 * the same after the migration (values and the API's key order), and its history must still take new
 * entries. Run on a new PGlite directory and on a new PostgreSQL database, each migrated to 0013 first.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { jsonbOrdered } from "../../src/db/jsonb-order.ts";
import { runMigrations } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations.generated.ts";
import { OrderRepository } from "../../src/db/order-repository.ts";
import { rowsOf } from "../support/databases.ts";
import { ownPostgresDatabase } from "../support/own-postgres-database.ts";

const before = migrations.slice(
  0,
  migrations.findIndex((m) => m.tag.startsWith("0014_")),
);

const typedData = {
  primaryType: "Order",
  message: {
    salt: "5865214070841879",
    maker: "0x0000000000000000000000000000000000000001",
    signer: "0x0000000000000000000000000000000000000001",
    tokenId: "62116011324642788450213843133477763167049099528131416799711191854278105821744",
    makerAmount: "4996100",
    takerAmount: "10630000",
    side: 0,
    signatureType: 0,
    timestamp: "1795736374638",
    metadata: `0x${"0".repeat(64)}`,
    builder: `0x${"ab".repeat(32)}`,
  },
  domain: { verifyingContract: "0xE111180000d2663C0091e4f400237545B87B996B", name: "Polymarket CTF Exchange", version: "2", chainId: 137 },
};
const intent = { side: "buy", market_id: "62116011324642788450213843133477763167049099528131416799711191854278105821744", size_usdc: 5, price: 0.47, note: "prix élevé €" };
const history = [{ status: "awaiting_signature", at: "2026-11-26T23:44:34.637Z", reason: "approved by the risk engine" }];

const literal = (v: unknown) => `'${JSON.stringify(v).replaceAll("'", "''")}'::jsonb`;

async function storeBefore0014(database: Database, id: string): Promise<void> {
  expect(before.length).toBe(14);
  await runMigrations(database.db, before);
  const [column] = await rowsOf(database, `select data_type from information_schema.columns where table_name = 'orders' and column_name = 'typed_data'`);
  expect(column?.data_type).toBe("jsonb");
  await rowsOf(
    database,
    `insert into orders (id, org_id, agent_id, mode, market_id, condition_id, side, size_units, price, notional_units, order_type, status, order_hash,
       typed_data, decision_id, decision_intent, trading_day, history, created_at, updated_at)
     values ('${id}', 'org_m14', 'agt_m14', 'payload', '${intent.market_id}', '0xc0', 'buy', 10630000, '0.47', 4996100, 'GTC', 'awaiting_signature', '0x01',
       ${literal(typedData)}, 'dec_m14', ${literal(intent)}, '2026-11-26', ${literal(history)}, '2026-11-26T23:44:34.637Z', '2026-11-26T23:44:34.637Z')`,
  );
}

async function checkAfter0014(database: Database, id: string): Promise<void> {
  // 0014 first (later migrations, e.g. 0020, follow it).
  expect((await runMigrations(database.db)).map((tag) => tag.slice(0, 4))[0]).toBe("0014");
  const [column] = await rowsOf(database, `select data_type from information_schema.columns where table_name = 'orders' and column_name = 'typed_data'`);
  expect(column?.data_type).toBe("text");

  const repo = new OrderRepository(database.db, { maxInFlight: 1, run: database.run });
  const row = await repo.get(id);
  expect(row).not.toBeNull();
  // The same values, with keys in the order jsonb gave them before (what the API served).
  expect(row!.typedData as unknown).toEqual(typedData);
  expect(JSON.stringify(row!.typedData)).toBe(JSON.stringify(jsonbOrdered(typedData)));
  expect(Object.keys(row!.typedData!)).toEqual(["domain", "message", "primaryType"]);
  expect(row!.decisionIntent).toEqual(intent);
  expect(JSON.stringify(row!.decisionIntent)).toBe(JSON.stringify(jsonbOrdered(intent)));
  expect(row!.history).toEqual(history as NonNullable<typeof row>["history"]);

  // The converted history still takes entries.
  const moved = await repo.transition(id, ["awaiting_signature"], "cancelled", "cancelled by the client");
  expect(moved?.status).toBe("cancelled");
  expect(moved!.history.map((h) => h.status)).toEqual(["awaiting_signature", "cancelled"]);
  expect((await repo.get(id))!.history.map((h) => h.reason)).toEqual(["approved by the risk engine", "cancelled by the client"]);
}

describe("migration 0014 on orders stored as jsonb [pglite]", () => {
  const dir = mkdtempSync(join(tmpdir(), "brokerage-m14-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  test("an order stored before it reads back the same after it, and its history still grows", async () => {
    const database = await openDatabase({ kind: "pglite-dir", dir: join(dir, "pg") }, false);
    try {
      await storeBefore0014(database, "ord_m14pglite0000000000");
      await checkAfter0014(database, "ord_m14pglite0000000000");
    } finally {
      await database.close();
    }
  });
});

if (process.env.TEST_DATABASE_URL) {
  describe("migration 0014 on orders stored as jsonb [postgres]", () => {
    test("an order stored before it reads back the same after it, and its history still grows", async () => {
      const url = await ownPostgresDatabase("m14");
      const database = await openDatabase({ kind: "postgres", url: url!, max: 2 }, false);
      try {
        await storeBefore0014(database, "ord_m14postgres00000000");
        await checkAfter0014(database, "ord_m14postgres00000000");
      } finally {
        await database.close();
      }
    });
  });
}
