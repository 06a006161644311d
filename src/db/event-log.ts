/**
 * The event log's reads and upkeep (docs/api.md#events), and the in-process wake-up. Events are written by
 * the stores in the same transaction as the change they report (order-repository.ts, agent-store.ts,
 * the kill service); after a commit the writer calls `wake()`, and every open stream reads the
 * table again. The table is the only source: a stream in another process, or one that missed a
 * wake-up, still finds every event on its next poll.
 */
import { and, asc, eq, gt, lt } from "drizzle-orm";
import type { Db } from "./database.ts";
import { type EventType, events } from "./schema.ts";

export type EventRow = typeof events.$inferSelect;
export type NewEvent = { orgId: string; agentId: string; type: EventType; data: Record<string, unknown>; createdAt: Date };

export class EventLog {
  private waiters = new Set<() => void>();

  constructor(private readonly db: Db) {}

  /** Events of an organization (one agent's when `agentId` is given) after `afterId`, oldest first. */
  async after(scope: { orgId: string; agentId?: string }, afterId: number, limit = 200): Promise<EventRow[]> {
    return this.db
      .select()
      .from(events)
      .where(and(eq(events.orgId, scope.orgId), scope.agentId ? eq(events.agentId, scope.agentId) : undefined, gt(events.id, afterId)))
      .orderBy(asc(events.id))
      .limit(limit);
  }

  /** Deletes events older than `before`; returns how many. */
  async prune(before: Date): Promise<number> {
    const gone = await this.db.delete(events).where(lt(events.createdAt, before)).returning({ id: events.id });
    return gone.length;
  }

  /** Tells the open streams that new events were committed. */
  wake(): void {
    const waiting = this.waiters;
    this.waiters = new Set();
    for (const w of waiting) w();
  }

  /** Resolves on the next wake-up, or after `ms` (a poll), or when `signal` aborts. */
  waitForMore(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }
}
