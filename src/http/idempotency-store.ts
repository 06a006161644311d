/**
 * Idempotency-Key records: the first request with a key claims it; when it
 * finishes its status and body are stored, and the same key with the same
 * request replays them for 24 hours. A different request with the key is a 409.
 */
import { and, eq, lt } from "drizzle-orm";
import type { Db } from "../db/database.ts";
import { idempotencyKeys } from "../db/schema.ts";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const IN_PROGRESS = 0;

export type Claim =
  | { kind: "claimed" }
  | { kind: "replay"; status: number; body: string; contentType: string }
  | { kind: "conflict" }
  | { kind: "in_progress" };

export class IdempotencyStore {
  private lastSweep = 0;
  constructor(private readonly db: Db) {}

  async claim(scope: string, key: string, requestHash: string, now = new Date()): Promise<Claim> {
    await this.sweep(now);
    const inserted = await this.db
      .insert(idempotencyKeys)
      .values({ scope, key, requestHash, status: IN_PROGRESS, body: "", contentType: "", createdAt: now })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    if (inserted.length) return { kind: "claimed" };
    const [row] = await this.db.select().from(idempotencyKeys).where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
    if (!row) return this.claim(scope, key, requestHash, now);
    if (now.getTime() - row.createdAt.getTime() > IDEMPOTENCY_TTL_MS) {
      await this.release(scope, key);
      return this.claim(scope, key, requestHash, now);
    }
    if (row.requestHash !== requestHash) return { kind: "conflict" };
    if (row.status === IN_PROGRESS) return { kind: "in_progress" };
    return { kind: "replay", status: row.status, body: row.body, contentType: row.contentType };
  }

  /** Whether the answer to this very request is stored under the key (completed, not expired); claims nothing. */
  async hasAnswer(scope: string, key: string, requestHash: string, now = new Date()): Promise<boolean> {
    const [row] = await this.db
      .select({ requestHash: idempotencyKeys.requestHash, status: idempotencyKeys.status, createdAt: idempotencyKeys.createdAt })
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
    return !!row && row.requestHash === requestHash && row.status !== IN_PROGRESS && now.getTime() - row.createdAt.getTime() <= IDEMPOTENCY_TTL_MS;
  }

  async complete(scope: string, key: string, status: number, body: string, contentType: string): Promise<void> {
    await this.db
      .update(idempotencyKeys)
      .set({ status, body, contentType })
      .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
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
