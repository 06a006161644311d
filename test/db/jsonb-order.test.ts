/**
 * jsonbOrdered puts object keys in the order PostgreSQL's jsonb prints them: checked against a real jsonb
 * round trip, for ASCII keys (the fast path) and keys with multi-byte characters (the byte comparison).
 */
import { expect, test } from "bun:test";
import type { Database } from "../../src/db/database.ts";
import { jsonbOrdered } from "../../src/db/jsonb-order.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";

describeEachDatabase("jsonb key order", (_kind, open) => {
  test("jsonbOrdered's key order is jsonb's, nested objects and arrays included", async () => {
    const database: Database = await open();
    const value = {
      zz: 1, b: 2, a: 3, aa: 4, Z: 5, ab: 6, é: 7, "é1": 8, "€": 9, e1: 10, "": 11, "a€": 12, ä: 13,
      nested: { signatureType: 0, side: 1, salt: "s", maker: "m", tokenId: "t", ü: true },
      list: [{ y: 1, x: 2, "x€": 3 }, 4],
    };
    const [row] = await rowsOf(database, `select (${literal(JSON.stringify(value))}::jsonb)::text as t`);
    expect(JSON.stringify(jsonbOrdered(value))).toBe(JSON.stringify(JSON.parse(row!.t as string)));
  });
});

const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;
