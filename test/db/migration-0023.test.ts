/**
 * Migration 0023 keeps a placement answer's own amounts (`placed_shares_units`, `placed_usdc_units`)
 * beside what is left of them, and adds `twin_of`. A placement row stored before it held only what was
 * left once the covered rows took their part: the backfill gives back the answer's amounts so that
 * counting again from the rows (src/domain/fill-links.ts) leaves every row as it was. Run on a new
 * PGlite directory and on a new PostgreSQL database, each migrated up to the migration before it first.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { runMigrations } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations.generated.ts";
import { type FillFacts, reckonFills } from "../../src/domain/fill-links.ts";
import { rowsOf } from "../support/databases.ts";
import { ownPostgresDatabase } from "../support/own-postgres-database.ts";

const before = migrations.slice(
  0,
  migrations.findIndex((m) => m.tag.startsWith("0023_")),
);

const TX = `0x${"d4".repeat(32)}`;

async function storeBefore0023(database: Database): Promise<void> {
  await runMigrations(database.db, before);
  const row = (order: string, key: string, f: { trade?: string; tx?: string; log?: number; source: string; price: string; shares: number; usdc: number; covers?: string[] }) =>
    `('${order}', 'agt_m23', 'org_m23', '123', '0xc0', 'buy', '${key}', ${f.trade ? `'${f.trade}'` : "null"}, ${f.tx ? `'${f.tx}'` : "null"}, ${f.log ?? "null"},
      '${f.source}', '["${f.source}"]'::jsonb, '${f.price}', ${f.shares}, ${f.usdc}, 'matched', ${f.covers ? `'${JSON.stringify(f.covers)}'::jsonb` : "null"},
      now(), now(), now())`;
  await rowsOf(
    database,
    `insert into fills (order_id, agent_id, org_id, token_id, condition_id, side, fill_key, trade_id, tx_hash, log_index, source, sources, price, shares_units, usdc_units, status, covers, at, created_at, updated_at)
     values
     -- A: the answer (4 shares for 1.88, trades T1 and T2) after T1's report took 1 share; a later trade T9 it did not name.
     ${row("ord_a", "order:a:placement", { source: "rest", price: "0.47", shares: 3_000_000, usdc: 1_410_000, covers: ["trade:T1", "trade:T2"] })},
     ${row("ord_a", "trade:T1", { trade: "T1", source: "user_channel", price: "0.47", shares: 1_000_000, usdc: 470_000 })},
     ${row("ord_a", "trade:T9", { trade: "T9", source: "user_channel", price: "0.47", shares: 2_000_000, usdc: 940_000 })},
     -- B: the answer (4 shares, trade T1) wholly replaced by the chain's log of it (named T1 since).
     ${row("ord_b", "order:b:placement", { source: "rest", price: "0.47", shares: 0, usdc: 0, covers: ["trade:T1"] })},
     ${row("ord_b", `tx:${TX}:3`, { trade: "T1", tx: TX, log: 3, source: "chain", price: "0.47", shares: 4_000_000, usdc: 1_880_000 })}`,
  );
}

async function checkAfter0023(database: Database): Promise<void> {
  expect((await runMigrations(database.db)).map((tag) => tag.slice(0, 4))[0]).toBe("0023");
  const rows = await rowsOf(database, "select * from fills order by id");
  const placed = rows.filter((r) => r.covers !== null).map((r) => [r.order_id, String(r.placed_shares_units), String(r.placed_usdc_units), String(r.shares_units), String(r.usdc_units)]);
  expect(placed).toEqual([
    ["ord_a", "4000000", "1880000", "3000000", "1410000"],
    ["ord_b", "4000000", "1880000", "0", "0"],
  ]);
  expect(rows.every((r) => r.twin_of === null)).toBe(true);
  // Counting again from the rows leaves the answers' rows as they were.
  for (const order of ["ord_a", "ord_b"]) {
    const facts: FillFacts[] = rows
      .filter((r) => r.order_id === order)
      .map((r) => ({
        id: Number(r.id),
        tradeId: (r.trade_id as string | null) ?? null,
        txHash: (r.tx_hash as string | null) ?? null,
        logIndex: r.log_index === null ? null : Number(r.log_index),
        sharesUnits: BigInt(r.shares_units as string),
        usdcUnits: BigInt(r.usdc_units as string),
        status: "matched",
        covers: r.covers === null ? null : ((typeof r.covers === "string" ? JSON.parse(r.covers) : r.covers) as string[]),
        placedSharesUnits: r.placed_shares_units === null ? null : BigInt(r.placed_shares_units as string),
        placedUsdcUnits: r.placed_usdc_units === null ? null : BigInt(r.placed_usdc_units as string),
      }));
    const { placement, twinOf } = reckonFills(facts);
    for (const f of facts) {
      if (f.covers) expect(placement.get(f.id)).toEqual({ sharesUnits: f.sharesUnits, usdcUnits: f.usdcUnits });
      expect(twinOf.get(f.id)).toBeNull();
    }
  }
}

describe("migration 0023 on placement answers' rows stored before it [pglite]", () => {
  const dir = mkdtempSync(join(tmpdir(), "brokerage-m23-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  test("the answers' amounts are backfilled so that counting again changes nothing", async () => {
    const database = await openDatabase({ kind: "pglite-dir", dir: join(dir, "pg") }, false);
    try {
      await storeBefore0023(database);
      await checkAfter0023(database);
    } finally {
      await database.close();
    }
  });
});

if (process.env.TEST_DATABASE_URL) {
  describe("migration 0023 on placement answers' rows stored before it [postgres]", () => {
    test("the answers' amounts are backfilled so that counting again changes nothing", async () => {
      const url = await ownPostgresDatabase("m23");
      const database = await openDatabase({ kind: "postgres", url: url!, max: 2 }, false);
      try {
        await storeBefore0023(database);
        await checkAfter0023(database);
      } finally {
        await database.close();
      }
    });
  });
}
