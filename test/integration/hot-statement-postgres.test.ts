/**
 * The hot statement on PostgreSQL (Database.run) goes through Bun's SQL client, the rest through
 * postgres-js. Both must reach the same database, and a database error from either must keep its
 * SQLSTATE for the problem mapping. Runs only with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { toProblemError } from "../../src/http/error-handler.ts";
import { postgresUrl } from "../support/databases.ts";

describe.skipIf(!postgresUrl)("hot statement on PostgreSQL", () => {
  let database: Database;
  const table = `hot_statement_${process.pid}_${Date.now()}`;
  const saved = process.env.PGDATABASE;
  const insert = `insert into ${table} (id, v) select x.id, x.v from json_to_recordset($1::text::json) as x(id text, v jsonb)`;

  beforeAll(async () => {
    // Bun's client lets PGDATABASE override the database named in a URL; postgres-js does not.
    process.env.PGDATABASE = "no_such_database_for_the_hot_statement";
    database = await openDatabase({ kind: "postgres", url: postgresUrl!, max: 2 }, false);
    await database.db.execute(sql.raw(`create table ${table} (id text primary key, v jsonb not null)`));
  });

  afterAll(async () => {
    if (saved === undefined) delete process.env.PGDATABASE;
    else process.env.PGDATABASE = saved;
    await database?.db.execute(sql.raw(`drop table if exists ${table}`));
    await database?.close();
  });

  test("writes through run() land in the URL's database, whatever PGDATABASE says", async () => {
    await database.run!(insert, [
      JSON.stringify([
        { id: "a", v: { n: 1 } },
        { id: "b", v: { s: "it's \"quoted\" \\ here" } },
      ]),
    ]);
    const rows = (await database.db.execute(sql.raw(`select id, v from ${table} order by id`))) as unknown as { id: string; v: unknown }[];
    expect(rows.map((r) => r.id)).toEqual(["a", "b"]);
    expect(rows[1].v).toEqual({ s: "it's \"quoted\" \\ here" });
  });

  test("a failed run() keeps the SQLSTATE the problem mapping reads", async () => {
    let caught: unknown;
    try {
      // A NUL cannot be stored in jsonb: SQLSTATE 22P05, which the API answers as a 400.
      await database.run!(insert, [
        JSON.stringify([{ id: "nul", v: { s: "a\u0000b" } }]),
      ]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeDefined();
    const problem = toProblemError("UNKNOWN", caught);
    expect(problem?.status).toBe(400);
    const rows = (await database.db.execute(sql.raw(`select id from ${table} where id = 'nul'`))) as unknown as unknown[];
    expect(rows.length).toBe(0);
  });

  test("a duplicate key through run() fails and leaves the first row alone", async () => {
    await expect(database.run!(insert, [JSON.stringify([{ id: "a", v: { n: 2 } }])])).rejects.toBeDefined();
    const rows = (await database.db.execute(sql.raw(`select v from ${table} where id = 'a'`))) as unknown as { v: unknown }[];
    expect(rows[0].v).toEqual({ n: 1 });
  });
});
