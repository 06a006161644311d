/**
 * The INSTANCE_ID lock (src/db/instance-id-lock.ts) is a session-level advisory lock: it goes with its
 * database session. A real service process on PostgreSQL whose lock session is ended from outside
 * (pg_terminate_backend, as a server restart or a cut connection would end it):
 * - takes the lock again when it is free, keeps serving, and a second process under the same
 *   INSTANCE_ID still refuses to start;
 * - stops at once (exit 2, saying why) when another session took the lock in between.
 * PostgreSQL only (TEST_DATABASE_URL): PGlite is one process by its data-directory lock.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ownPostgresDatabase } from "../support/own-postgres-database.ts";
import { type ServiceProcess, startService } from "../support/service-process.ts";

const SEAL = Buffer.alloc(32, 29).toString("base64");
const RENEW_MS = 300;

let url: string | null = null;
let admin: import("postgres").Sql | null = null;
const procs: ServiceProcess[] = [];
const dataDir = mkdtempSync(join(tmpdir(), "instance-lock-"));

const env = (id: string) => ({ DATA_DIR: dataDir, DATABASE_URL: url!, INSTANCE_ID: id, SEAL_SECRET_KEY: SEAL, LEASE_TTL_MS: "1500", LEASE_RENEW_MS: String(RENEW_MS), LOG_LEVEL: "info" });

/** The backend holding the INSTANCE_ID lock of `id` (the key lockForLife takes), or null. */
async function lockHolder(id: string): Promise<number | null> {
  const [row] = await admin!`
    with k as (select hashtextextended(${`brokerage instance ${id}`}, 0) as key)
    select l.pid from pg_locks l, k
    where l.locktype = 'advisory' and l.granted and l.objsubid = 1
      and l.classid::int8 = (k.key >> 32) & 4294967295 and l.objid::int8 = k.key & 4294967295`;
  return row ? Number(row.pid) : null;
}

async function until<T>(what: string, f: () => Promise<T | null | undefined | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

beforeAll(async () => {
  url = await ownPostgresDatabase("instance_lock");
  if (!url) return;
  const { default: postgres } = await import("postgres");
  admin = postgres(url, { max: 2, onnotice: () => {} });
});

afterAll(async () => {
  for (const p of procs) await p.stop().catch(() => undefined);
  await admin?.end();
  rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("the INSTANCE_ID lock after its session ends [postgres]", () => {
  test("free: taken again by a new session; the process keeps serving and a second one under the id still refuses", async () => {
    const p = await startService(env("lock-a"), 60_000);
    procs.push(p);
    const before = await until("the lock to be held", () => lockHolder("lock-a"));
    const [ended] = await admin!`select pg_terminate_backend(${before}, 5000) as ok`;
    expect(ended.ok).toBe(true);
    const after = await until("the lock to be taken again", async () => {
      const pid = await lockHolder("lock-a");
      return pid !== null && pid !== before ? pid : null;
    });
    expect(after).not.toBe(before);
    await until("the warning", async () => p.lines.some((l) => l.includes("the lock was taken again")));
    expect((await fetch(`${p.url}/healthz`)).status).toBe(200);
    const second = await startService(env("lock-a"), 30_000).then(
      async (q) => {
        await q.stop();
        return null;
      },
      (e: Error) => e.message,
    );
    expect(second).toContain("another process on this database is running as INSTANCE_ID=lock-a");
  }, 90_000);

  test("taken by another session meanwhile: the process stops at once with exit code 2 and says why", async () => {
    const p = await startService(env("lock-b"), 60_000);
    procs.push(p);
    const before = await until("the lock to be held", () => lockHolder("lock-b"));
    // Ended and taken in one statement: the process's next check (every LEASE_RENEW_MS) finds it held.
    const reserved = await admin!.reserve();
    try {
      const [row] = await reserved`select pg_terminate_backend(${before}, 5000) as ended, pg_try_advisory_lock(hashtextextended(${"brokerage instance lock-b"}, 0)) as got`;
      expect(row.ended).toBe(true);
      expect(row.got).toBe(true);
      const code = await Promise.race([p.exited, Bun.sleep(10_000).then(() => "still running")]);
      expect(code).toBe(2);
      expect(p.lines.some((l) => l.includes("another process took this INSTANCE_ID's lock"))).toBe(true);
    } finally {
      await reserved`select pg_advisory_unlock_all()`.catch(() => undefined);
      reserved.release();
    }
  }, 90_000);
});
