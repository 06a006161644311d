/**
 * Idempotency-Key records: the first request with a key claims it; when it
 * finishes its status and body are stored, and the same key with the same
 * request replays them for 24 hours. A different request with the key is a 409.
 *
 * A claim also reserves the id body its new resources take (`reservedId`). A record still in
 * progress when the process died is marked interrupted at the next start (`interruptInFlight`);
 * its retry is then resolved by idempotency-recovery.ts: the original outcome when the request
 * created its resource, otherwise the request runs again (`resume`), with the same reserved id.
 */
import { and, eq, isNull, lt, notInArray, or, sql } from "drizzle-orm";
import type { Db } from "../db/database.ts";
import { idempotencyKeys, serviceInstances } from "../db/schema.ts";
import { newId } from "../domain/ids.ts";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const IN_PROGRESS = 0;
/** In progress when the process that ran it stopped (crash, kill -9). */
const INTERRUPTED = -1;

export type Claim =
  | { kind: "claimed"; reservedId: string }
  | { kind: "interrupted"; reservedId: string | null }
  | { kind: "replay"; status: number; body: string; contentType: string }
  | { kind: "conflict" }
  | { kind: "in_progress" };

export class IdempotencyStore {
  private lastSweep = 0;
  /** `owner`: this instance's id (INSTANCE_ID), stored on the records it claims. */
  constructor(
    private readonly db: Db,
    private readonly owner: string | null = null,
  ) {}

  async claim(scope: string, key: string, requestHash: string, now = new Date()): Promise<Claim> {
    await this.sweep(now);
    const reservedId = newId("ord", now.getTime()).slice(4);
    const inserted = await this.db
      .insert(idempotencyKeys)
      .values({ scope, key, requestHash, status: IN_PROGRESS, body: "", contentType: "", createdAt: now, reservedId, owner: this.owner })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    if (inserted.length) return { kind: "claimed", reservedId };
    const [row] = await this.db.select().from(idempotencyKeys).where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
    if (!row) return this.claim(scope, key, requestHash, now);
    if (now.getTime() - row.createdAt.getTime() > IDEMPOTENCY_TTL_MS) {
      await this.release(scope, key);
      return this.claim(scope, key, requestHash, now);
    }
    if (row.requestHash !== requestHash) return { kind: "conflict" };
    if (row.status === IN_PROGRESS) return { kind: "in_progress" };
    if (row.status === INTERRUPTED) return { kind: "interrupted", reservedId: row.reservedId };
    return { kind: "replay", status: row.status, body: row.body, contentType: row.contentType };
  }

  /** Whether the answer to this very request is stored under the key (completed, not expired); claims nothing. */
  async hasAnswer(scope: string, key: string, requestHash: string, now = new Date()): Promise<boolean> {
    const [row] = await this.db
      .select({ requestHash: idempotencyKeys.requestHash, status: idempotencyKeys.status, createdAt: idempotencyKeys.createdAt })
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
    return !!row && row.requestHash === requestHash && row.status > 0 && now.getTime() - row.createdAt.getTime() <= IDEMPOTENCY_TTL_MS;
  }

  async complete(scope: string, key: string, status: number, body: string, contentType: string): Promise<void> {
    await this.db
      .update(idempotencyKeys)
      .set({ status, body, contentType })
      .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
  }

  /**
   * Records in progress whose process is gone are marked interrupted: at start-up (before requests
   * are served) and then periodically (src/jobs.ts), so a retry of a request a dead instance was
   * running resolves instead of answering 409. Gone: claimed by this instance's id (an earlier run of
   * it), by no instance (before leases), or by one whose `service_instances` row lapsed. Records of
   * instances alive are left alone. Returns how many were marked.
   */
  async interruptInFlight(opts: { startup: boolean; sole?: boolean } = { startup: true }): Promise<number> {
    // The only process on its database (PGlite's data-directory lock): every record in progress at
    // start-up is a dead process's, whatever instance name it ran under (the default name has the pid).
    if (opts.startup && opts.sole) {
      const rows = await this.db.update(idempotencyKeys).set({ status: INTERRUPTED }).where(eq(idempotencyKeys.status, IN_PROGRESS)).returning({ key: idempotencyKeys.key });
      return rows.length;
    }
    const alive = this.db.select({ id: serviceInstances.id }).from(serviceInstances).where(sql`${serviceInstances.expiresAt} > clock_timestamp()`);
    const rows = await this.db
      .update(idempotencyKeys)
      .set({ status: INTERRUPTED })
      .where(
        and(
          eq(idempotencyKeys.status, IN_PROGRESS),
          or(
            isNull(idempotencyKeys.owner),
            opts.startup && this.owner ? eq(idempotencyKeys.owner, this.owner) : undefined,
            and(this.owner ? sql`${idempotencyKeys.owner} <> ${this.owner}` : undefined, notInArray(idempotencyKeys.owner, alive)),
          ),
        ),
      )
      .returning({ key: idempotencyKeys.key });
    return rows.length;
  }

  /** Takes an interrupted record over to run its request again; false when another retry took it first. */
  async resume(scope: string, key: string): Promise<boolean> {
    const rows = await this.db
      .update(idempotencyKeys)
      .set({ status: IN_PROGRESS })
      .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key), eq(idempotencyKeys.status, INTERRUPTED)))
      .returning({ key: idempotencyKeys.key });
    return rows.length > 0;
  }

  /** Forgets a claim whose request did not finish in a way worth replaying. */
  async release(scope: string, key: string): Promise<void> {
    await this.db.delete(idempotencyKeys).where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
  }

  private async sweep(now: Date): Promise<void> {
    if (now.getTime() - this.lastSweep < 60_000) return;
    this.lastSweep = now.getTime();
    await this.db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, new Date(now.getTime() - IDEMPOTENCY_TTL_MS)));
  }
}
