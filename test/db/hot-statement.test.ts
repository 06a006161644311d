/**
 * The hot statement (Database.run): on PostgreSQL it goes through Bun's SQL client and the rest through
 * postgres-js, so both must reach the same database; on PGlite it is a named prepared statement
 * bound with parameters through PGlite's protocol serializer (no literals in the text). On both, parameters must arrive exactly as given (NULL included), and a database
 * error must keep its SQLSTATE for the problem mapping.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { toProblemError } from "../../src/http/error-handler.ts";
import { describeEachDatabase, postgresUrl, rowsOf, sharedPglite } from "../support/databases.ts";

const tableName = (tag: string) => `hot_statement_${tag}_${process.pid}_${Date.now()}`;

describeEachDatabase("hot statement", (kind, open) => {
  let database: Database;
  const table = tableName(kind);
  // The shape of the batch inserts (order-repository.ts): every parameter text, cast on the server.
  const insert = (rows: number) =>
    `insert into ${table} (id, t, v, b) values ${Array.from({ length: rows }, (_, r) => `($${4 * r + 1}::text, $${4 * r + 2}::text, $${4 * r + 3}::text::jsonb, $${4 * r + 4}::text::bool)`).join(", ")}`;

  beforeAll(async () => {
    database = await open();
    await database.db.execute(sql.raw(`create table ${table} (id text primary key, t text, v jsonb, b bool)`));
  });

  afterAll(async () => {
    await database?.db.execute(sql.raw(`drop table if exists ${table}`));
  });

  test("parameters arrive exactly as given: quotes, backslashes, escapes, non-ASCII, JSON, booleans and NULL", async () => {
    const tricky = `it's "quoted" \\ here \\x41 $1 E'' ' ; -- €`;
    await database.run(insert(3), ["a", tricky, JSON.stringify({ s: tricky, n: [1, null] }), "false", "b", null, null, null, "c", "", "null", "true"]);
    const rows = await rowsOf(database, `select id, t, v, b from ${table} where id in ('a', 'b', 'c') order by id`);
    expect(rows).toEqual([
      { id: "a", t: tricky, v: { s: tricky, n: [1, null] }, b: false },
      { id: "b", t: null, v: null, b: null },
      { id: "c", t: "", v: null, b: true },
    ]);
  });

  for (const [where, params] of [
    ["a text parameter", ["nul-t", "a\u0000b", null]],
    ["a jsonb parameter", ["nul-v", null, JSON.stringify({ s: "a\u0000b" })]],
  ] as const) {
    test(`a NUL in ${where} fails with a SQLSTATE the API answers as 400, and writes nothing`, async () => {
      let caught: unknown;
      try {
        await database.run(insert(2), ["ok-beside-nul", "fine", null, null, ...params, null]);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeDefined();
      expect(toProblemError("UNKNOWN", caught)?.status).toBe(400);
      expect(await rowsOf(database, `select id from ${table} where id in ('ok-beside-nul', '${params[0]}')`)).toEqual([]);
    });
  }

  test("a statement sent while another caller's transaction is open is not part of it: that rollback leaves it written", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inside!: () => void;
    const begun = new Promise<void>((r) => (inside = r));
    const tx = database.db
      .transaction(async (t) => {
        await t.execute(sql.raw(`insert into ${table} (id, t) values ('in-tx', 'rolled back')`));
        inside();
        await held;
        throw new Error("roll back");
      })
      .catch(() => "rolled back");
    await begun;
    const written = database.run(insert(1), ["beside-tx", "kept", null, null]);
    await Bun.sleep(20);
    release();
    expect(await tx).toBe("rolled back");
    await written;
    expect(await rowsOf(database, `select id from ${table} where id in ('in-tx', 'beside-tx') order by id`)).toEqual([{ id: "beside-tx" }]);
  });

  test("a duplicate key fails the statement and leaves the first row alone", async () => {
    await database.run(insert(1), ["dup", "first", null, null]);
    await expect(database.run(insert(1), ["dup", "second", null, null])).rejects.toBeDefined();
    expect(await rowsOf(database, `select t from ${table} where id = 'dup'`)).toEqual([{ t: "first" }]);
  });

  test("query() answers the rows' text values in column order, NULL as null, for reads and for writes", async () => {
    await database.run(insert(2), ["q1", "it's \\ €", JSON.stringify({ a: 1 }), "true", "q2", null, null, null]);
    expect(await database.query(`select id, t, v::text, b::text from ${table} where id like 'q%' order by id`, [])).toEqual([
      ["q1", "it's \\ €", '{"a": 1}', "true"],
      ["q2", null, null, null],
    ]);
    expect(await database.query(`select t from ${table} where id = $1::text`, ["nobody"])).toEqual([]);
    const moved = await database.query(`update ${table} set t = $2::text where id = $1::text returning id, t`, ["q2", "set"], { byIndex: true });
    expect(moved).toEqual([["q2", "set"]]);
  });

  test("query() with byIndex finds rows by their key however small the table was when it was first planned, and leaves the session's settings as they were, even when it fails", async () => {
    const keyed = `${table}_keyed`;
    await database.db.execute(sql.raw(`create table ${keyed} (id text primary key, n int8 not null check (n >= 0))`));
    try {
      // The shape of the placements' status write (order-repository.ts): rows found by a join on the key.
      const ROWS = 16;
      const values = Array.from({ length: ROWS }, (_, r) => `($${2 * r + 1}::text, $${2 * r + 2}::int8)`).join(", ");
      const bump = `update ${keyed} k set n = k.n + v.d from (values ${values}) as v (id, d) where k.id = v.id returning k.id, k.n::text`;
      // ids k0 plus fifteen that may not exist, each bumped by `by`.
      const params = (first: string, by: string, rest = "none") => [first, by, ...Array.from({ length: ROWS - 1 }, (_, r) => [`${rest}${r}`, "0"]).flat()];
      // Planned (and used more than five times) while the table holds one row.
      await database.run(`insert into ${keyed} (id, n) values ($1::text, 0)`, ["k0"]);
      for (let i = 0; i < 8; i++) expect(await database.query(bump, params("k0", "1"), { byIndex: true })).toEqual([["k0", String(i + 1)]]);
      await database.db.execute(sql.raw(`insert into ${keyed} (id, n) select 'k' || g, 0 from generate_series(1, 20000) g`));
      if (kind === "pglite") {
        // The plan kept for the statement is the key's index, not a scan of the small table it first saw.
        const [stmt] = await rowsOf(database, `select name from pg_prepared_statements where statement = '${bump.replaceAll("'", "''")}'`);
        await database.db.execute(sql.raw("set plan_cache_mode = force_generic_plan"));
        try {
          const args = params("k5", "1").map((v) => `'${v}'`).join(", ");
          const plan = (await rowsOf(database, `explain execute ${stmt!.name}(${args})`)).map((r) => String(r["QUERY PLAN"])).join("\n");
          expect(plan).toContain(`Index Scan using ${keyed}_pkey`);
          expect(plan).not.toContain("Seq Scan");
        } finally {
          await database.db.execute(sql.raw("reset plan_cache_mode"));
        }
      }
      expect(await database.query(bump, params("k20000", "5"), { byIndex: true })).toEqual([["k20000", "5"]]);
      // A failing call (the check, on the first row) changes nothing and leaves the settings as they were.
      const failing = params("k20000", "-10", "k");
      failing[3] = "1"; // k0, also in the batch, would be bumped
      await expect(database.query(bump, failing, { byIndex: true })).rejects.toBeDefined();
      expect(await rowsOf(database, `select id, n::text from ${keyed} where id in ('k0', 'k20000') order by id`)).toEqual([
        { id: "k0", n: "8" },
        { id: "k20000", n: "5" },
      ]);
      expect(await rowsOf(database, `select n::text from ${keyed} where id = 'k20000'`)).toEqual([{ n: "5" }]);
      expect(await rowsOf(database, "select current_setting('enable_seqscan') as s, current_setting('plan_cache_mode') as m")).toEqual([{ s: "on", m: "auto" }]);
    } finally {
      await database.db.execute(sql.raw(`drop table if exists ${keyed}`));
    }
  });
});

describe.skipIf(!postgresUrl)("hot statement on PostgreSQL: the URL's database", () => {
  let database: Database;
  const table = tableName("url");
  const saved = process.env.PGDATABASE;

  beforeAll(async () => {
    // Bun's client lets PGDATABASE override the database named in a URL; postgres-js does not.
    process.env.PGDATABASE = "no_such_database_for_the_hot_statement";
    database = await openDatabase({ kind: "postgres", url: postgresUrl!, max: 2 }, false);
    await database.db.execute(sql.raw(`create table ${table} (id text primary key)`));
  });

  afterAll(async () => {
    if (saved === undefined) delete process.env.PGDATABASE;
    else process.env.PGDATABASE = saved;
    await database?.db.execute(sql.raw(`drop table if exists ${table}`));
    await database?.close();
  });

  test("writes through run() land in the URL's database, whatever PGDATABASE says", async () => {
    await database.run(`insert into ${table} (id) values ($1::text)`, ["a"]);
    expect(await rowsOf(database, `select id from ${table}`)).toEqual([{ id: "a" }]);
  });
});

describe("PGlite's WAL segments", () => {
  test("are not zero-filled when created (PGlite never syncs; the zeroes doubled the bytes written per intent)", async () => {
    const database = await sharedPglite();
    const [row] = await rowsOf(database, "show wal_init_zero");
    expect(row?.wal_init_zero).toBe("off");
  });
});
