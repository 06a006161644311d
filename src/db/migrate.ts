/**
 * Applies the inlined drizzle-kit migrations in order, each in a transaction,
 * under an advisory lock so two processes starting together cannot race.
 */
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { migrations } from "./migrations.generated.ts";

const LOCK_ID = 7_214_993_001;

/** `list`: the migrations to apply, in order (all of them; a test of one migration applies those before it first). */
export async function runMigrations(db: PgDatabase<PgQueryResultHKT, any>, list: readonly { tag: string; sql: string }[] = migrations): Promise<string[]> {
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_ID})`);
    await tx.execute(sql`create table if not exists _migrations (tag text primary key, applied_at timestamptz not null default now())`);
    const rows = (await tx.execute(sql`select tag from _migrations`)) as unknown as { rows?: { tag: string }[] } & { tag: string }[];
    const done = new Set((rows.rows ?? rows).map((r) => r.tag));
    for (const m of list) {
      if (done.has(m.tag)) continue;
      for (const statement of m.sql.split("--> statement-breakpoint")) {
        if (statement.trim()) await tx.execute(sql.raw(statement));
      }
      await tx.execute(sql`insert into _migrations (tag) values (${m.tag})`);
      applied.push(m.tag);
    }
  });
  return applied;
}
