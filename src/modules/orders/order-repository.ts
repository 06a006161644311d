/**
 * Orders and risk decisions in the database. New orders and decisions go
 * through a group-commit writer; status changes are conditional updates that
 * also append to the order's history.
 */
import { and, desc, eq, inArray, lt, or, sql } from "drizzle-orm";
import type { Db, RunStatement } from "../../db/database.ts";
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

  private readonly run: RunStatement | undefined;

  /**
   * `maxInFlight`: batches committing at once (one connection each).
   * `run`: the database's prepared-statement runner (Database.run), for the batch insert.
   */
  constructor(
    private readonly db: Db,
    opts: { maxInFlight: number; maxBatch?: number; onBatch?: (n: number) => void; run?: RunStatement },
  ) {
    this.run = opts.run;
    this.writer = new BatchWriter<Write>((items) => this.insertBatch(items), { maxInFlight: opts.maxInFlight, maxBatch: opts.maxBatch ?? 256, onBatch: opts.onBatch });
  }

  /** Durably writes a new order (and its approving decision); resolves after commit. */
  insert(order: NewOrderRow, decision?: NewDecisionRow): Promise<void> {
    return this.writer.write({ order, decision });
  }

  /** Durably writes a rejected decision. */
  insertDecision(decision: NewDecisionRow): Promise<void> {
    return this.writer.write({ decision });
  }

  /**
   * One statement per batch, whatever its size: the orders and the decisions
   * travel as two JSON documents and one INSERT … WITH inserts both, atomic and
   * durable on its own (one round trip, one commit). Its text never changes, so
   * with `run` the server parses and plans it once per connection.
   */
  private async insertBatch(items: Write[]): Promise<void> {
    let os = "[";
    let ds = "[";
    for (const i of items) {
      if (i.order) os += (os.length > 1 ? "," : "") + orderJson(i.order);
      if (i.decision) ds += (ds.length > 1 ? "," : "") + decisionJson(i.decision);
    }
    os += "]";
    ds += "]";
    if (this.run) await this.run(INSERT_BATCH, [os, ds]);
    else await this.db.execute(sql`${sql.raw(INSERT_PARTS[0])}${os}${sql.raw(INSERT_PARTS[1])}${ds}${sql.raw(INSERT_PARTS[2])}`);
  }

  async get(id: string): Promise<OrderRow | null> {
    const [row] = await this.db.select().from(orders).where(eq(orders.id, id));
    return row ?? null;
  }

  async getMany(ids: string[]): Promise<OrderRow[]> {
    return ids.length ? this.db.select().from(orders).where(inArray(orders.id, ids)) : [];
  }

  /** Records a larger filled amount learned from the venue, without changing the status. */
  async setFilled(id: string, status: OrderStatus, filledUnits: bigint): Promise<boolean> {
    const rows = await this.db
      .update(orders)
      .set({ filledUnits, updatedAt: new Date() })
      .where(and(eq(orders.id, id), eq(orders.status, status), lt(orders.filledUnits, filledUnits)))
      .returning({ id: orders.id });
    return rows.length > 0;
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

// ---------------------------------------------------------------- batch insert records

/* Columns of the batch insert, and their types in the JSON records (the table's column types). */
const ORDER_FIELDS = [
  ["id", "text"],
  ["org_id", "text"],
  ["agent_id", "text"],
  ["mode", "text"],
  ["market_id", "text"],
  ["condition_id", "text"],
  ["side", "text"],
  ["size_units", "int8"],
  ["price", "text"],
  ["notional_units", "int8"],
  ["order_type", "text"],
  ["expiration", "text"],
  ["status", "text"],
  ["order_hash", "text"],
  ["typed_data", "jsonb"],
  ["signature_deadline", "timestamptz"],
  ["venue_order_id", "text"],
  ["filled_units", "int8"],
  ["flagged_for_review", "bool"],
  ["client_order_id", "text"],
  ["decision_id", "text"],
  ["trading_day", "text"],
  ["history", "jsonb"],
  ["created_at", "timestamptz"],
  ["updated_at", "timestamptz"],
] as const;
const DECISION_FIELDS = [
  ["id", "text"],
  ["org_id", "text"],
  ["agent_id", "text"],
  ["approved", "bool"],
  ["intent", "jsonb"],
  ["failures", "jsonb"],
  ["checks", "jsonb"],
  ["order_id", "text"],
  ["created_at", "timestamptz"],
] as const;
const ORDER_COLUMNS = ORDER_FIELDS.map(([c]) => c).join(", ");
const DECISION_COLUMNS = DECISION_FIELDS.map(([c]) => c).join(", ");
const DECISION_RECORD = DECISION_FIELDS.map(([c, t]) => `${c} ${t}`).join(", ");
const ORDER_RECORD = ORDER_FIELDS.map(([c, t]) => `${c} ${t}`).join(", ");
/**
 * The batch insert around its two parameters ($1 the orders, $2 the decisions, JSON arrays as text).
 * json_to_recordset reads the text once and makes jsonb only of the jsonb columns, where
 * jsonb_to_recordset would first build one jsonb document of the whole batch.
 */
const INSERT_PARTS = [
  `with o as (insert into orders (${ORDER_COLUMNS}) select ${ORDER_COLUMNS} from json_to_recordset(`,
  `::text::json) as x(${ORDER_RECORD})) insert into risk_decisions (${DECISION_COLUMNS}) select ${DECISION_COLUMNS} from json_to_recordset(`,
  `::text::json) as x(${DECISION_RECORD})`,
] as const;
const INSERT_BATCH = `${INSERT_PARTS[0]}$1${INSERT_PARTS[1]}$2${INSERT_PARTS[2]}`;

const str = (v: string | null | undefined): string => (v === null || v === undefined ? "null" : JSON.stringify(v));
const json = (v: unknown): string => (v === null || v === undefined ? "null" : JSON.stringify(v));
const time = (v: Date | null | undefined): string => (v ? `"${v.toISOString()}"` : "null");

/**
 * One order as a JSON record, with the values the drizzle insert would send:
 * bigints as decimal text, times as ISO text, jsonb columns as JSON, and the
 * columns' defaults where the row leaves a defaulted column out.
 */
function orderJson(o: NewOrderRow): string {
  return (
    `{"id":${str(o.id)},"org_id":${str(o.orgId)},"agent_id":${str(o.agentId)},"mode":${str(o.mode)},"market_id":${str(o.marketId)},` +
    `"condition_id":${str(o.conditionId)},"side":${str(o.side)},"size_units":"${o.sizeUnits}","price":${str(o.price)},` +
    `"notional_units":"${o.notionalUnits}","order_type":${str(o.orderType)},"expiration":${str(o.expiration ?? "0")},` +
    `"status":${str(o.status)},"order_hash":${str(o.orderHash)},"typed_data":${json(o.typedData)},` +
    `"signature_deadline":${time(o.signatureDeadline)},"venue_order_id":${str(o.venueOrderId)},"filled_units":"${o.filledUnits ?? 0n}",` +
    `"flagged_for_review":${o.flaggedForReview === true},"client_order_id":${str(o.clientOrderId)},"decision_id":${str(o.decisionId)},` +
    `"trading_day":${str(o.tradingDay)},"history":${json(o.history)},"created_at":${time(o.createdAt)},"updated_at":${time(o.updatedAt)}}`
  );
}

function decisionJson(d: NewDecisionRow): string {
  return (
    `{"id":${str(d.id)},"org_id":${str(d.orgId)},"agent_id":${str(d.agentId)},"approved":${d.approved === true},` +
    `"intent":${json(d.intent)},"failures":${json(d.failures)},"checks":${json(d.checks)},"order_id":${str(d.orderId)},"created_at":${time(d.createdAt)}}`
  );
}
