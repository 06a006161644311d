/**
 * Orders and risk decisions in the database. New orders and decisions go
 * through a group-commit writer; status changes are conditional updates that
 * also append to the order's history.
 */
import { and, desc, eq, inArray, lt, or, sql } from "drizzle-orm";
import type { Db } from "../../db/database.ts";
import { type OrderHistoryEntry, type OrderStatus, orders, riskDecisions } from "../../db/schema.ts";
import { decodeCursor, pageOf } from "../../http/pagination.ts";
import { BatchWriter } from "./batch-writer.ts";

export type OrderRow = typeof orders.$inferSelect;
export type NewOrderRow = typeof orders.$inferInsert;
export type NewDecisionRow = typeof riskDecisions.$inferInsert;

type Write = { order?: NewOrderRow; decision?: NewDecisionRow };

export interface StatusPatch {
  venueOrderId?: string | null;
  filledUnits?: bigint;
  flaggedForReview?: boolean;
}

export class OrderRepository {
  private readonly writer: BatchWriter<Write>;

  constructor(
    private readonly db: Db,
    opts: { maxInFlight: number; onBatch?: (n: number) => void },
  ) {
    this.writer = new BatchWriter<Write>((items) => this.insertBatch(items), { maxInFlight: opts.maxInFlight, maxBatch: 256, onBatch: opts.onBatch });
  }

  /** Durably writes a new order (and its approving decision); resolves after commit. */
  insert(order: NewOrderRow, decision?: NewDecisionRow): Promise<void> {
    return this.writer.write({ order, decision });
  }

  /** Durably writes a rejected decision. */
  insertDecision(decision: NewDecisionRow): Promise<void> {
    return this.writer.write({ decision });
  }

  private async insertBatch(items: Write[]): Promise<void> {
    const os = items.flatMap((i) => (i.order ? [i.order] : []));
    const ds = items.flatMap((i) => (i.decision ? [i.decision] : []));
    await this.db.transaction(async (tx) => {
      if (os.length) await tx.insert(orders).values(os);
      if (ds.length) await tx.insert(riskDecisions).values(ds);
    });
  }

  async get(id: string): Promise<OrderRow | null> {
    const [row] = await this.db.select().from(orders).where(eq(orders.id, id));
    return row ?? null;
  }

  async list(opts: { orgId: string; agentId?: string; status?: OrderStatus; limit: number; cursor?: string }) {
    const cursor = decodeCursor(opts.cursor);
    const rows = await this.db
      .select()
      .from(orders)
      .where(
        and(
          eq(orders.orgId, opts.orgId),
          opts.agentId ? eq(orders.agentId, opts.agentId) : undefined,
          opts.status ? eq(orders.status, opts.status) : undefined,
          cursor ? or(lt(orders.createdAt, cursor.at), and(eq(orders.createdAt, cursor.at), lt(orders.id, cursor.id))) : undefined,
        ),
      )
      .orderBy(desc(orders.createdAt), desc(orders.id))
      .limit(opts.limit + 1);
    return pageOf(rows, opts.limit, (r) => r);
  }

  /**
   * Moves an order to `to` if it is in one of `from`; appends the change to
   * its history. Returns the updated row, or null when the order was not in
   * one of `from` (someone else moved it first).
   */
  async transition(id: string, from: OrderStatus[], to: OrderStatus, reason: string | null, patch: StatusPatch = {}): Promise<OrderRow | null> {
    const now = new Date();
    const entry: OrderHistoryEntry[] = [{ status: to, at: now.toISOString(), reason }];
    const [row] = await this.db
      .update(orders)
      .set({
        status: to,
        updatedAt: now,
        history: sql`${orders.history} || ${JSON.stringify(entry)}::jsonb`,
        ...(patch.venueOrderId !== undefined ? { venueOrderId: patch.venueOrderId } : {}),
        ...(patch.filledUnits !== undefined ? { filledUnits: patch.filledUnits } : {}),
        ...(patch.flaggedForReview !== undefined ? { flaggedForReview: patch.flaggedForReview } : {}),
      })
      .where(and(eq(orders.id, id), inArray(orders.status, from)))
      .returning();
    return row ?? null;
  }

  /** Many orders to one status in one statement (the kill switch's outcomes). */
  async transitionMany(ids: string[], from: OrderStatus[], to: OrderStatus, reason: string, patch: StatusPatch = {}): Promise<string[]> {
    if (!ids.length) return [];
    const now = new Date();
    const entry: OrderHistoryEntry[] = [{ status: to, at: now.toISOString(), reason }];
    const rows = await this.db
      .update(orders)
      .set({
        status: to,
        updatedAt: now,
        history: sql`${orders.history} || ${JSON.stringify(entry)}::jsonb`,
        ...(patch.flaggedForReview !== undefined ? { flaggedForReview: patch.flaggedForReview } : {}),
      })
      .where(and(inArray(orders.id, ids), inArray(orders.status, from)))
      .returning({ id: orders.id });
    return rows.map((r) => r.id);
  }

  /** Orders awaiting a signature whose deadline has passed. */
  async dueForExpiry(now: Date, limit = 500): Promise<{ id: string; agentId: string }[]> {
    return this.db
      .select({ id: orders.id, agentId: orders.agentId })
      .from(orders)
      .where(and(eq(orders.status, "awaiting_signature"), lt(orders.signatureDeadline, now)))
      .limit(limit);
  }

  /** Orders whose venue state is not settled: `submitting` (crash before or during the call) and `unknown` (timeout). */
  async unsettled(limit = 500): Promise<OrderRow[]> {
    return this.db.select().from(orders).where(inArray(orders.status, ["submitting", "unknown"])).limit(limit);
  }
}
