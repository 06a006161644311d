/**
 * Test databases. PGlite takes seconds and ~1 GB to initialise, so one migrated
 * template data directory is made per migration set (cached under .test-cache/)
 * and copied for suites that need their own directory; most suites share one
 * PGlite instance and isolate themselves by creating their own organization.
 * When TEST_DATABASE_URL is set the same suites also run against PostgreSQL.
 */
import { describe } from "bun:test";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type SQL, sql } from "drizzle-orm";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { migrations } from "../../src/db/migrations.generated.ts";

const CACHE = resolve(import.meta.dir, "../../.test-cache");
const g = globalThis as unknown as { __testDbs?: Map<string, Promise<unknown>> };
const once = <T>(key: string, make: () => Promise<T>): Promise<T> => {
  g.__testDbs ??= new Map();
  if (!g.__testDbs.has(key)) g.__testDbs.set(key, make());
  return g.__testDbs.get(key) as Promise<T>;
};

/** A migrated PGlite data directory to copy; made once per migration set. */
export function templateDir(): Promise<string> {
  return once("template", async () => {
    const hash = createHash("sha256").update(migrations.map((m) => m.sql).join("\n")).digest("hex").slice(0, 12);
    const dir = join(CACHE, `pglite-template-${hash}`);
    if (existsSync(join(dir, "PG_VERSION"))) return dir;
    const building = `${dir}.building-${process.pid}`;
    rmSync(building, { recursive: true, force: true });
    const db = await openDatabase({ kind: "pglite-dir", dir: building });
    await db.close();
    rmSync(dir, { recursive: true, force: true });
    renameSync(building, dir);
    return dir;
  });
}

/** A new directory holding a copy of the migrated template (for restart tests). */
export async function copyOfTemplate(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), "brokerage-test-"));
  cpSync(await templateDir(), join(dataDir, "pg"), { recursive: true });
  return dataDir;
}

/** The PGlite database most suites share. */
export function sharedPglite(): Promise<Database> {
  return once("pglite", async () => openDatabase({ kind: "pglite", dataDir: await copyOfTemplate() }));
}

export const postgresUrl = process.env.TEST_DATABASE_URL || null;

/** The PostgreSQL test database, emptied and migrated once per run. */
export function sharedPostgres(): Promise<Database> {
  return once("postgres", async () => {
    const db = await openDatabase({ kind: "postgres", url: postgresUrl!, max: 20 }, false);
    await db.db.execute(sql.raw("drop schema if exists public cascade; create schema public;"));
    await db.db.execute(sql.raw("drop table if exists _migrations"));
    await (await import("../../src/db/migrate.ts")).runMigrations(db.db);
    return db;
  });
}

export type DbKind = "pglite" | "postgres";

/** Runs `suite` once on PGlite and, when TEST_DATABASE_URL is set, once on PostgreSQL. */
export function describeEachDatabase(name: string, suite: (kind: DbKind, database: () => Promise<Database>) => void): void {
  describe(`${name} [pglite]`, () => suite("pglite", sharedPglite));
  if (postgresUrl) describe(`${name} [postgres]`, () => suite("postgres", sharedPostgres));
}

/** The rows of a query on either database: drizzle's execute gives postgres-js's as an array and PGlite's under `rows`. */
export async function rowsOf(database: Database, query: SQL | string): Promise<Record<string, unknown>[]> {
  const result = (await database.db.execute(typeof query === "string" ? sql.raw(query) : query)) as unknown as
    | Record<string, unknown>[]
    | { rows: Record<string, unknown>[] };
  return Array.isArray(result) ? [...result] : result.rows;
}
