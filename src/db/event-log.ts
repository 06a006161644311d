/**
 * The event log's reads and upkeep (docs/events.md), and the in-process wake-up. Events are written by
 * the stores in the same transaction as the change they report (order-repository.ts, agent-store.ts,
 * the kill service); after a commit the writer calls `wake()`, and every open stream reads the
 * table again. The table is the only source: a stream in another process, or one that missed a
 * wake-up, still finds every event on its next poll.
 */
import { and, asc, eq, gt, lt, max } from "drizzle-orm";
import type { Db } from "./database.ts";
import { jsonbOrdered } from "./jsonb-order.ts";
import { asCreated, asPlaced } from "./order-repository.ts";
import { type EventType, events, orders } from "./schema.ts";

type StoredEvent = typeof events.$inferSelect;
type OrderRow = typeof orders.$inferSelect;
/** An event as the stream serves it: with its data, rendered for a new order's or a placement's `order` event. */
export type EventRow = Omit<StoredEvent, "data" | "orderId" | "orderStep" | "orderVenueId" | "orderFilledUnits"> & { data: Record<string, unknown> };
/** An event to store: its data, or (a new order's `order` event) the order's id. */
export type NewEvent = { orgId: string; agentId: string; type: EventType; createdAt: Date } & (
  | { data: Record<string, unknown>; orderId?: undefined }
  | { data: null; orderId: string }
);

export class EventLog {
  private waiters = new Set<() => void>();

  /** `orderEvent`: the data of an `order` event for an order row (the API's order view, as the order repository stores it). */
  constructor(
    private readonly db: Db,
    private readonly orderEvent: (row: OrderRow) => Record<string, unknown>,
  ) {}

  /**
   * Events of an organization (one agent's when `agentId` is given) after `afterId`, oldest first. A new
   * order's `order` event gets its data from the order row, as the order was created, and a delegated
   * placement's (with `orderStep`) as the placement left it (asPlaced), in jsonb's key order (as every
   * stored event's data reads back); one whose order was removed (an unpaid x402 request's, which
   * removes its events too) is left out.
   */
  async after(scope: { orgId: string; agentId?: string }, afterId: number, limit = 200): Promise<EventRow[]> {
    const rows = await this.db
      .select({ event: events, order: orders })
      .from(events)
      .leftJoin(orders, eq(orders.id, events.orderId))
      .where(and(eq(events.orgId, scope.orgId), scope.agentId ? eq(events.agentId, scope.agentId) : undefined, gt(events.id, afterId)))
      .orderBy(asc(events.id))
      .limit(limit);
    const out: EventRow[] = [];
    for (const { event, order } of rows) {
      const { orderId, data, orderStep, orderVenueId, orderFilledUnits, ...rest } = event;
      if (data !== null) out.push({ ...rest, data });
      else if (orderId !== null && order !== null) {
        const then = orderStep === null ? asCreated(order) : asPlaced(order, orderStep, orderVenueId, orderFilledUnits ?? 0n);
        out.push({ ...rest, data: jsonbOrdered(this.orderEvent(then)) as Record<string, unknown> });
      }
    }
    return out;
  }

  /** The id of the newest event of an organization (one agent's when `agentId` is given), or 0. */
  async latestId(scope: { orgId: string; agentId?: string }): Promise<number> {
    const [row] = await this.db
      .select({ id: max(events.id) })
      .from(events)
      .where(and(eq(events.orgId, scope.orgId), scope.agentId ? eq(events.agentId, scope.agentId) : undefined));
    return row?.id ?? 0;
  }

  /** Deletes events older than `before`; returns how many. */
  async prune(before: Date): Promise<number> {
    const gone = await this.db.delete(events).where(lt(events.createdAt, before)).returning({ id: events.id });
    return gone.length;
  }

  /** How many wake-ups there have been: a reader notes it before it reads, and waits only if none came since. */
  private wakes = 0;

  /** The wake-up count to pass to `waitForMore` (taken before reading the table). */
  get wakeCount(): number {
    return this.wakes;
  }

  /** Tells the open streams that new events were committed. */
  wake(): void {
    this.wakes++;
    const waiting = this.waiters;
    this.waiters = new Set();
    for (const w of waiting) w();
  }

  /**
   * Resolves on the next wake-up, or after `ms` (a poll), or when `signal` aborts; at once when a wake-up
   * came after `since` (a `wakeCount` taken before the caller read the table): a commit that woke no one,
   * because its reader was still reading, is not left to the poll.
   */
  waitForMore(ms: number, signal?: AbortSignal, since?: number): Promise<void> {
    if (since !== undefined && since !== this.wakes) return Promise.resolve();
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
