/**
 * Orders and risk decisions in the database. New orders and decisions go
 * through group-commit writers; status changes are conditional updates that
 * also append to the order's history.
 */
import type { StatusPatch } from "../domain/order-status.ts";
import { and, asc, desc, eq, inArray, isNotNull, lt, lte, notInArray, or, sql } from "drizzle-orm";
import type { Db, QueryStatement, RunStatement } from "./database.ts";
import { jsonbOrdered } from "./jsonb-order.ts";
import { events, ORDER_WATCH, type OrderHistoryEntry, type OrderStatus, orders, riskDecisions } from "./schema.ts";
import { decodeCursor, pageOf } from "../http/pagination.ts";
import { BatchWriter } from "./batch-writer.ts";
import type { NewEvent } from "./event-log.ts";
import { type Clock, systemClock } from "../domain/clock.ts";
import { fromStatuses, placementEvent } from "../domain/order-lifecycle.ts";

/** The lifecycle event of a placement answer leading to `to`. */
function placementEventOf(to: OrderStatus) {
  return placementEvent(to === "filled" ? "filled" : to === "cancelled" ? "cancelled" : "open");
}
import type { Fence } from "../../actors/lease-port.ts";
import { fenceCheck, fenced } from "./lease-fence.ts";
import { pgTextArray } from "./pg-text-array.ts";

export type OrderRow = typeof orders.$inferSelect;
export type NewOrderRow = typeof orders.$inferInsert;
export type NewDecisionRow = typeof riskDecisions.$inferInsert;
/** A new order as the group-commit writer carries it: with the epoch of the lease its writer holds, when fenced. */
type PendingOrderRow = NewOrderRow & { leaseEpoch?: number };
/** A rejected decision as its group-commit writer carries it (the same, for its fence). */
type PendingDecisionRow = NewDecisionRow & { leaseEpoch?: number };
/** A write of orderWriter: a new order, or (with `query`) a delegated placement's status write. */
type PendingWrite =
  | { order: PendingOrderRow; placement?: undefined; read?: undefined }
  | { order?: undefined; placement: FastPlacement; read?: undefined }
  | { order?: undefined; placement?: undefined; read: SealedRead };
/** A read of an agent's sealed credentials (readSealed) carried by orderWriter: `hex` is set by its batch (null: none). */
interface SealedRead {
  agentId: string;
  hex?: string | null;
}
/** What restoring an order that rests at the venue needs of its row (OrderRepository.restingAtVenue). */
export type RestingOrderRow = Pick<OrderRow, "id" | "mode" | "orderType" | "expiration" | "venueOrderId" | "orderHash" | "typedData" | "filledUnits" | "createdAt">;


export class OrderRepository {
  /**
   * Approved orders, each with its approving decision; with `query`, delegated placements' status
   * writes too (transitionPlaced), in the same statements (writeBatch).
   */
  private readonly orderWriter: BatchWriter<PendingWrite>;
  /** Rejected decisions (no order). */
  private readonly rejectionWriter: BatchWriter<PendingDecisionRow>;
  /** Placements the venue answered (submitting → open/filled/cancelled), group-committed (transitionPlaced). */
  private readonly placedWriter: BatchWriter<PlacedTransition>;
  /** Each placed order's row as its batch left it (null: no longer submitting), until its caller reads it. */
  private readonly placedRows = new Map<string, OrderRow | null>();
  /**
   * Delegated orders written as `submitting` whose placement has not been recorded yet, as inserted
   * (transitionPlaced's one-statement write predicts the row from it); at most MAX_PLACING.
   */
  private readonly placing = new Map<string, { row: NewOrderRow; history: string }>();
  /** Whether delegated placements' status writes are one statement per batch (transitionPlaced): with `query`. */
  private readonly placesFast: boolean;
  /** Orders the last batches of orderWriter's placements moved, until their callers read it. */
  private readonly placedFast = new Set<string>();
  private readonly query: QueryStatement | null;
  /** Orders this process placed, by the venue's order id and by their hash: their id and agent (placedOrder); at most MAX_PLACED_REFS. */
  private readonly placedRefs = new Map<string, { id: string; agentId: string }>();

  private readonly run: RunStatement;
  private readonly clock: Clock;
  private readonly orderEvent: (row: OrderRow) => Record<string, unknown>;
  private readonly onEvents: () => void;
  /** The agent lease this view's writes are fenced on (`fenced`); none: unfenced (one process, tests). */
  protected fence: Fence | undefined;

  /**
   * `maxInFlight`: batches committing at once per writer (one connection each).
   * `run`: the database's prepared-statement runner (Database.run), for the batch inserts.
   */
  constructor(
    private readonly db: Db,
    opts: {
      maxInFlight: number;
      maxBatch?: number;
      onBatch?: (n: number) => void;
      run: RunStatement;
      /**
       * The database's runner with rows (Database.query): a delegated placement's status write is then
       * one statement per batch (transitionPlaced). Without it, the drizzle transaction.
       */
      query?: QueryStatement;
      clock?: Clock;
      /** The order as an `order` event reports it (the API's order view). */
      orderEvent?: (row: OrderRow) => Record<string, unknown>;
      /** Called after events were committed, so open streams read the table again. */
      onEvents?: () => void;
    },
  ) {
    this.run = opts.run;
    this.clock = opts.clock ?? systemClock;
    this.orderEvent = opts.orderEvent ?? ((row) => ({ order: { id: row.id, status: row.status } }));
    this.onEvents = opts.onEvents ?? (() => {});
    const writerOpts = { maxInFlight: opts.maxInFlight, maxBatch: Math.min(opts.maxBatch ?? MAX_BATCH, MAX_BATCH), onBatch: opts.onBatch };
    this.orderWriter = new BatchWriter<PendingWrite>((items) => this.writeBatch(items), writerOpts);
    this.rejectionWriter = new BatchWriter<PendingDecisionRow>((items) => this.insertRejections(items), writerOpts);
    this.placedWriter = new BatchWriter<PlacedTransition>((items) => this.flushPlaced(items), writerOpts);
    this.query = opts.query ?? null;
    this.placesFast = this.query !== null;
  }

  /**
   * Durably writes a new order and its approving decision; resolves after commit. The decision is
   * kept on the order row (decision_id, decision_intent), not as a risk_decisions row of its own;
   * its time is the order's creation time. A new order is updated when it is created: its
   * `updatedAt` is stored as its `createdAt`.
   */
  async insert(order: NewOrderRow, decision: NewDecisionRow): Promise<void> {
    const fence = this.fence;
    const row = { ...order, decisionId: decision.id, decisionIntent: decision.intent, leaseEpoch: fence?.epoch };
    // A delegated order's placement is written next (transitionPlaced): its row as stored, to predict.
    const placing = this.placesFast && order.status === "submitting";
    if (placing) {
      if (this.placing.size >= MAX_PLACING) this.placing.delete(this.placing.keys().next().value as string);
      this.placing.set(order.id, { row, history: json(row.history)! });
      // The venue's report of the placement may come before its answer: it names the order by its hash.
      if (order.orderHash) this.rememberRef(order.orderHash.toLowerCase(), order.id, order.agentId);
    }
    const written = this.orderWriter.write({ order: row });
    try {
      await (fence ? fenced(fence, () => written) : written);
    } catch (error) {
      if (placing) this.placing.delete(order.id);
      throw error;
    }
    this.onEvents();
  }

  /**
   * This repository with every write for one agent fenced on `fence` (the lease its actor runs under):
   * the same writers and connections, one more condition per write. A refused write throws
   * LeaseLostError and changes nothing.
   */
  fenced(fence: Fence): this {
    const view = Object.create(this) as this;
    view.fence = fence;
    return view;
  }

  /** Durably writes a rejected decision (and its `risk_rejected` event), fenced as insert() is. */
  async insertDecision(decision: NewDecisionRow): Promise<void> {
    const fence = this.fence;
    const written = this.rejectionWriter.write(fence ? { ...decision, leaseEpoch: fence.epoch } : decision);
    await (fence ? fenced(fence, () => written) : written);
    this.onEvents();
  }

  /**
   * One statement per batch: a multi-row INSERT … VALUES of the orders and, through a data-modifying
   * WITH, of their `order` events; atomic and durable on its own (one round trip, one commit). Each
   * value is its own parameter, read by its column type's input function: no JSON document for the
   * server to parse (json_to_recordset spent more than half of the server's time parsing one). A new
   * order's event takes its organization, agent, order id and time from the order's own parameters
   * (and stores no data: it is rendered when read, EventLog), and the order's `updated_at` is its
   * `created_at` parameter again, so each value is sent once. The text depends only on the number of
   * rows, so `run` prepares each size once per connection; MAX_BATCH bounds the sizes.
   */
  /**
   * One batch of orderWriter: its new orders and its placements' status writes. Either kind alone is
   * its own statement (insertApproved, flushPlacedFast); both are one statement (writtenStatement):
   * the placements' UPDATE and their events beside the orders' INSERTs, one fence check for all, one
   * round trip and one commit where two were (docs/benchmarks.md, "PostgreSQL's CPU per delegated
   * intent"). A placement is always of an order a batch before committed (its venue call waited for
   * that), so no statement both inserts an order and places it. Should the statement fail, BatchWriter
   * writes each item again alone: one bad write fails no other.
   */
  private async writeBatch(items: PendingWrite[]): Promise<void> {
    const orders: PendingOrderRow[] = [];
    const placements: FastPlacement[] = [];
    const reads: SealedRead[] = [];
    for (const w of items) {
      if (w.order) orders.push(w.order);
      else if (w.placement) placements.push(w.placement);
      else reads.push(w.read);
    }
    if (!reads.length && !placements.length) return this.insertApproved(orders);
    if (!reads.length && !orders.length) return this.flushPlacedFast(placements);
    const params: (string | null)[] = [];
    for (const o of orders) pushValues(params, ORDER_COLUMNS, o);
    for (const p of placements) pushValues(params, FAST_PLACEMENT_COLUMNS, p);
    // Padded to a power of two with rows that match no order (a null id): the statement sizes stay few.
    const padded = placements.length ? placedRowsFor(placements.length) : 0;
    for (let i = placements.length; i < padded; i++) for (let c = 0; c < FAST_PLACEMENT_COLUMNS.length; c++) params.push(null);
    if (reads.length) params.push(pgTextArray([...new Set(reads.map((r) => r.agentId))]));
    const fenced = pushFencePairs(params, [...orders, ...placements]);
    const rows = await this.query!(writtenStatement(orders.length, padded, reads.length > 0, fenced), params, { byIndex: true });
    const sealed = new Map<string, string | null>();
    for (const [kind, key, hex] of rows) {
      if (kind === "u" && key !== null) this.placedFast.add(key);
      else if (kind === "c" && key !== null) sealed.set(key, hex);
    }
    for (const r of reads) r.hex = sealed.get(r.agentId) ?? null;
  }

  /**
   * The agent's sealed credentials as stored when the statement reading them runs (null: none), for a
   * delegated placement about to be sent (CredentialsService.readSealed). The read goes in orderWriter's
   * next batch, with the new orders and placements written at that moment (a placement asks for it
   * just after its order's insert): one statement for both, where a read of its own was one more round
   * trip. Only with `query`; a batch without writes reads alone. The statement runs after the read was
   * asked for, never one already under way. Its order's insert failing, the read is made again alone.
   */
  async readSealed(agentId: string): Promise<Uint8Array | null> {
    if (!this.query) throw new Error("readSealed needs the database's query runner");
    const read: SealedRead = { agentId };
    await this.orderWriter.write({ read });
    return read.hex ? new Uint8Array(Buffer.from(read.hex, "hex")) : null;
  }

  private insertApproved(items: PendingOrderRow[]): Promise<void> {
    const params: (string | null)[] = [];
    for (const o of items) pushValues(params, ORDER_COLUMNS, o);
    if (!pushFencePairs(params, items)) return this.run(approvedStatement(items.length), params);
    return this.run(fencedApprovedStatement(items.length), params);
  }

  private insertRejections(items: PendingDecisionRow[]): Promise<void> {
    const params: (string | null)[] = [];
    for (const d of items) pushValues(params, DECISION_COLUMNS, d);
    for (const d of items) pushValues(params, EVENT_COLUMNS, rejectionEvent(d));
    if (!pushFencePairs(params, items)) return this.run(rejectionStatement(items.length), params);
    return this.run(fencedRejectionStatement(items.length), params);
  }

  /** Stores `order` events for rows a statement changed, in the statement's transaction. */
  private async orderEvents(tx: Pick<Db, "insert">, rows: OrderRow[], at: Date): Promise<void> {
    if (!rows.length) return;
    await tx.insert(events).values(rows.map((r) => ({ orgId: r.orgId, agentId: r.agentId, type: "order" as const, data: this.orderEvent(r), createdAt: at })));
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
    const now = new Date(this.clock.now());
    const fence = this.fence;
    const changed = await fenced(fence, () => this.db.transaction(async (tx) => {
      if (fence) await tx.execute(fenceCheck(fence));
      const rows = await tx
        .update(orders)
        .set({ filledUnits, updatedAt: now })
        .where(and(eq(orders.id, id), eq(orders.status, status), lt(orders.filledUnits, filledUnits)))
        .returning();
      await this.orderEvents(tx, rows, now);
      return rows.length > 0;
    }));
    if (changed) this.onEvents();
    return changed;
  }

  /** Marks a client cancel as sent (before the venue call); the marker's time, or null when the order is not in one of `from`. */
  async markCancelRequested(id: string, from: OrderStatus[]): Promise<Date | null> {
    const at = new Date(this.clock.now());
    const rows = await this.fencedWrite((db) =>
      db
        .update(orders)
        .set({ cancelRequestedAt: at })
        .where(and(eq(orders.id, id), inArray(orders.status, from)))
        .returning({ id: orders.id }),
    );
    return rows.length ? at : null;
  }

  /** Clears the marker written at `at`: a later client cancel's marker stays. */
  async clearCancelRequested(id: string, at: Date): Promise<boolean> {
    const rows = await this.fencedWrite((db) =>
      db
        .update(orders)
        .set({ cancelRequestedAt: null })
        .where(and(eq(orders.id, id), eq(orders.cancelRequestedAt, at)))
        .returning({ id: orders.id }),
    );
    return rows.length > 0;
  }

  /** One write, in a transaction behind the fence's check when this view is fenced. */
  private fencedWrite<T>(write: (db: Db) => Promise<T>): Promise<T> {
    const fence = this.fence;
    if (!fence) return write(this.db);
    return fenced(fence, () =>
      this.db.transaction(async (tx) => {
        await tx.execute(fenceCheck(fence));
        return write(tx as unknown as Db);
      }),
    );
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
    this.placing.delete(id);
    const now = new Date(this.clock.now());
    const entry: OrderHistoryEntry[] = [{ status: to, at: now.toISOString(), reason, ...(patch.by ? { by: patch.by } : {}) }];
    const fence = this.fence;
    const row = await fenced(fence, () => this.db.transaction(async (tx) => {
      if (fence) await tx.execute(fenceCheck(fence));
      const [changed] = await tx
        .update(orders)
        .set({
          status: to,
          updatedAt: now,
          history: appendHistory(entry),
          ...(patch.venueOrderId !== undefined ? { venueOrderId: patch.venueOrderId } : {}),
          // What filled never shrinks through a status change: fills the sources reported are kept
          // (only a fill taken back lowers it, src/db/fill-store.ts).
          ...(patch.filledUnits !== undefined ? { filledUnits: sql`greatest(${orders.filledUnits}, ${patch.filledUnits.toString()}::bigint)` as unknown as bigint } : {}),
          ...(patch.flaggedForReview !== undefined ? { flaggedForReview: patch.flaggedForReview } : {}),
          ...(patch.signatureDeadline !== undefined ? { signatureDeadline: patch.signatureDeadline } : {}),
        })
        .where(and(eq(orders.id, id), inArray(orders.status, from)))
        .returning();
      if (changed) await this.orderEvents(tx, [changed], now);
      return changed ?? null;
    }));
    if (row) this.onEvents();
    return row;
  }

  /**
   * transition(id, ["submitting"], to, reason, {venueOrderId, filledUnits}) for an order the venue has
   * just answered, group-committed with the other placements answered at the same moment (as inserts
   * are, BatchWriter): per batch one UPDATE … FROM (VALUES …) … RETURNING and one multi-row insert
   * of their `order` events, in one transaction. A delegated intent's status write
   * was one transaction of two statements of its own, most of such an intent's CPU on PGlite
   * (docs/benchmarks.md, "Delegated intents"). Answers the row, or null when it was not `submitting`.
   */
  async transitionPlaced(id: string, to: OrderStatus, reason: string, patch: { venueOrderId: string; filledUnits: bigint }): Promise<OrderRow | null> {
    const before = this.placing.get(id);
    this.placing.delete(id);
    if (before && this.placesFast) {
      const row = await this.placeFast(storedRow(before.row), before.history, to, reason, patch);
      // The row changed since it was inserted (a kill, a fill reported first): the general write decides.
      return this.rememberPlaced(row ?? (await this.transition(id, fromStatuses(placementEventOf(to)), to, reason, patch)));
    }
    // A write under a lease (several instances on PostgreSQL) is fenced one by one, as transition() is.
    if (this.fence) return this.rememberPlaced(await this.transition(id, fromStatuses(placementEventOf(to)), to, reason, patch));
    await this.placedWriter.write({ id, to, reason, venueOrderId: patch.venueOrderId, filledUnits: patch.filledUnits, at: new Date(this.clock.now()) });
    const row = this.placedRows.get(id) ?? null;
    this.placedRows.delete(id);
    if (row) this.onEvents();
    return this.rememberPlaced(row);
  }

  /**
   * The order (its id and agent) this process placed under the venue order id or hash `ref` names,
   * from memory: a placement's own report from the venue's user channel then needs no read (the
   * venue report sink). These never change once placed; null: not known here (read the database).
   */
  placedOrder(ref: { orderHash?: string; venueOrderId?: string }): { id: string; agentId: string } | null {
    return (ref.venueOrderId !== undefined ? this.placedRefs.get(ref.venueOrderId) : undefined) ?? (ref.orderHash !== undefined ? this.placedRefs.get(ref.orderHash) : undefined) ?? null;
  }

  /** Notes a placed row for placedOrder; answers it. */
  private rememberPlaced(row: OrderRow | null): OrderRow | null {
    if (row?.venueOrderId) this.rememberRef(row.venueOrderId, row.id, row.agentId);
    return row;
  }

  /** Notes what `key` (a venue order id or an order hash) names for placedOrder; the oldest forgotten past MAX_PLACED_REFS. */
  private rememberRef(key: string, id: string, agentId: string): void {
    if (this.placedRefs.has(key)) return;
    if (this.placedRefs.size >= MAX_PLACED_REFS) this.placedRefs.delete(this.placedRefs.keys().next().value as string);
    this.placedRefs.set(key, { id, agentId });
  }

  private async flushPlaced(items: PlacedTransition[]): Promise<void> {
    for (const i of items) this.placedRows.set(i.id, null);
    const values = sql.join(
      items.map(
        (i) =>
          sql`(${i.id}::text, ${i.to}::text, ${i.at.toISOString()}::timestamptz, ${JSON.stringify([{ status: i.to, at: i.at.toISOString(), reason: i.reason }])}::jsonb, ${i.venueOrderId}::text, ${i.filledUnits.toString()}::int8)`,
      ),
      sql`, `,
    );
    await this.db.transaction(async (tx) => {
      const rows = (await tx
        .update(orders)
        .set({
          status: sql`v.status`,
          updatedAt: sql`v.at`,
          history: sql`(${orders.history}::jsonb || v.entry)::text`,
          venueOrderId: sql`v.vid`,
          // Never below what fills reported meanwhile (a status change does not shrink filled_units).
          filledUnits: sql`greatest(${orders.filledUnits}, v.filled)`,
        })
        .from(sql`(values ${values}) as v(id, status, at, entry, vid, filled)`)
        .where(and(sql`${orders.id} = v.id`, inArray(orders.status, fromStatuses("venue_open"))))
        .returning()) as unknown as OrderRow[];
      for (const r of rows) this.placedRows.set(r.id, r);
      await this.orderEvents(tx, rows, items[items.length - 1].at);
    });
  }

  /**
   * transitionPlaced's write when the order's row as inserted is known (`before`): the row it leaves is
   * `before` with the placement applied (`history`: its history column's text as inserted). Its `order`
   * event stores no data, only what asPlaced needs to render it from the order's row when read (the
   * history's length, the venue's id, what filled), and the UPDATE, the
   * event's INSERT and (under a lease) the fence are one statement per batch, through Database.query,
   * on a row that is still exactly as inserted (its status, history, fills, venue id, flag and cancel
   * marker: what any other write of an order changes). Answers that row, or null when the row had
   * changed meanwhile (nothing written: the caller falls back to transition()).
   */
  private async placeFast(before: OrderRow, history: string, to: OrderStatus, reason: string, patch: { venueOrderId: string; filledUnits: bigint }): Promise<OrderRow | null> {
    const at = new Date(this.clock.now());
    const entry: OrderHistoryEntry = { status: to, at: at.toISOString(), reason };
    const after: OrderRow = {
      ...before,
      status: to,
      updatedAt: at,
      history: [...before.history, jsonbOrdered(entry) as OrderHistoryEntry],
      venueOrderId: patch.venueOrderId,
      filledUnits: patch.filledUnits > before.filledUnits ? patch.filledUnits : before.filledUnits,
    };
    const fence = this.fence;
    const written = this.orderWriter.write({ placement: {
      id: before.id,
      orgId: before.orgId,
      agentId: before.agentId,
      leaseEpoch: fence?.epoch,
      to,
      at,
      // The history as inserted with the entry appended, as JSON text: the server parses neither.
      newHistory: history === "[]" ? `[${JSON.stringify(entry)}]` : `${history.slice(0, -1)},${JSON.stringify(entry)}]`,
      venueOrderId: patch.venueOrderId,
      filledUnits: patch.filledUnits,
      history,
      step: after.history.length,
    } });
    await (fence ? fenced(fence, () => written) : written);
    if (!this.placedFast.delete(before.id)) return null;
    this.onEvents();
    return after;
  }

  private async flushPlacedFast(items: FastPlacement[]): Promise<void> {
    const params: (string | null)[] = [];
    for (const i of items) pushValues(params, FAST_PLACEMENT_COLUMNS, i);
    const pairs = fencePairs(items);
    // It finds the rows by their id in a table that grows (Database.query, QueryOptions.byIndex).
    const rows = pairs
      ? await this.query!(fencedPlacedStatement(items.length), [...params, ...pairs], { byIndex: true })
      : await this.query!(placedStatement(items.length), params, { byIndex: true });
    for (const [id] of rows) if (id !== null) this.placedFast.add(id);
  }

  /** Many orders to one status in one statement (the kill switch's outcomes). */
  async transitionMany(ids: string[], from: OrderStatus[], to: OrderStatus, reason: string, patch: StatusPatch = {}): Promise<string[]> {
    if (!ids.length) return [];
    const now = new Date(this.clock.now());
    const entry: OrderHistoryEntry[] = [{ status: to, at: now.toISOString(), reason }];
    const fence = this.fence;
    const rows = await fenced(fence, () => this.db.transaction(async (tx) => {
      if (fence) await tx.execute(fenceCheck(fence));
      const changed = await tx
        .update(orders)
        .set({
          status: to,
          updatedAt: now,
          history: appendHistory(entry),
          ...(patch.flaggedForReview !== undefined ? { flaggedForReview: patch.flaggedForReview } : {}),
        })
        .where(and(inArray(orders.id, ids), inArray(orders.status, from)))
        .returning();
      await this.orderEvents(tx, changed, now);
      return changed;
    }));
    if (rows.length) this.onEvents();
    return rows.map((r) => r.id);
  }

  /** Orders awaiting a signature whose deadline has passed. */
  async dueForExpiry(now: Date, limit = 500, exceptAgents?: ReadonlySet<string>): Promise<{ id: string; agentId: string }[]> {
    return this.db
      .select({ id: orders.id, agentId: orders.agentId })
      .from(orders)
      .where(and(sql`${ORDER_WATCH} = 'sign'`, eq(orders.status, "awaiting_signature"), lt(orders.signatureDeadline, now), exceptAgentsOf(exceptAgents)))
      .limit(limit);
  }

  /**
   * Orders pending approval whose approval deadline has come (at the deadline itself too: an approval
   * at that same instant races the expiry in the agent's actor, and exactly one of them wins).
   */
  async dueForApprovalExpiry(now: Date, limit = 500, exceptAgents?: ReadonlySet<string>): Promise<{ id: string; agentId: string }[]> {
    return this.db
      .select({ id: orders.id, agentId: orders.agentId })
      .from(orders)
      .where(and(sql`${ORDER_WATCH} = 'approve'`, eq(orders.status, "pending_approval"), lte(orders.approvalDeadline, now), exceptAgentsOf(exceptAgents)))
      .limit(limit);
  }

  /**
   * Orders that rest at the venue as far as this database knows: `open` GTC and GTD orders (partly
   * filled ones too) with their stored message, oldest first. The composition root hands them back to
   * the paper venue at start-up (docs/decisions.md, "The paper venue restores its resting orders").
   */
  async restingAtVenue(): Promise<RestingOrderRow[]> {
    return this.db
      .select({
        id: orders.id,
        mode: orders.mode,
        orderType: orders.orderType,
        expiration: orders.expiration,
        venueOrderId: orders.venueOrderId,
        orderHash: orders.orderHash,
        typedData: orders.typedData,
        filledUnits: orders.filledUnits,
        createdAt: orders.createdAt,
      })
      .from(orders)
      .where(and(sql`${ORDER_WATCH} = 'venue'`, eq(orders.status, "open"), inArray(orders.orderType, ["GTC", "GTD"]), isNotNull(orders.typedData)))
      .orderBy(asc(orders.createdAt), asc(orders.id));
  }

  /**
   * Orders whose venue state is not settled: `submitting` (crash before or during the call), `unknown`
   * (timeout), and `open` ones whose client cancel was sent to the venue and not settled (a crash
   * after the venue call, or a call that was not answered).
   */
  async unsettled(limit = 500): Promise<OrderRow[]> {
    return this.db
      .select()
      .from(orders)
      // Every order at the venue is read (orders_watch_idx): a placement must leave the index as it is.
      .where(and(sql`${ORDER_WATCH} = 'venue'`, or(inArray(orders.status, ["submitting", "unknown"]), and(eq(orders.status, "open"), isNotNull(orders.cancelRequestedAt)))))
      .limit(limit);
  }
}

/**
 * An order row as it was inserted (the data of its creation event): the first status of its history,
 * nothing filled, no venue order id, not flagged, updated when created. Everything else on the row never
 * changes after the insert.
 */
export function asCreated(row: OrderRow): OrderRow {
  const first = row.history[0];
  if (!first) return row;
  return { ...row, status: first.status, history: [first], updatedAt: row.createdAt, venueOrderId: null, filledUnits: 0n, flaggedForReview: false };
}

/**
 * An order row as a delegated placement left it (the data of that placement's `order` event, stored
 * without data: placedWrites): the first `step` entries of its history (the placement's is the last:
 * the status and the time it set), the venue's id and the filled amount it wrote, not flagged (a
 * placement writes only a row that is not). The row's other columns in the order view never change
 * after its insert, and its history only grows.
 */
export function asPlaced(row: OrderRow, step: number, venueOrderId: string | null, filledUnits: bigint): OrderRow {
  const last = row.history[step - 1];
  if (!last) return row;
  const history = row.history.length === step ? row.history : row.history.slice(0, step);
  return { ...row, status: last.status, history, updatedAt: new Date(last.at), venueOrderId, filledUnits, flaggedForReview: false };
}

/** A delegated placement's status write as placedWriter carries it (transitionPlaced without `query`). */
interface PlacedTransition {
  id: string;
  to: OrderStatus;
  reason: string;
  venueOrderId: string;
  filledUnits: bigint;
  at: Date;
}

/** The history column with `entry` appended (the column is JSON text, see schema.ts). */
const appendHistory = (entry: OrderHistoryEntry[]) => sql`(${orders.history}::jsonb || ${JSON.stringify(entry)}::jsonb)::text`;

// ---------------------------------------------------------------- batch inserts

/** The most rows of one kind in one statement: bounds the statement sizes each connection prepares. */
const MAX_BATCH = 64;

/** A column of a batch insert: its name, its type, and its value in a row as the parameter's text. */
type Column<R> = readonly [name: string, type: "text" | "int8" | "bool" | "jsonb" | "timestamptz", value: (row: R) => string | null];

const text = (v: string | null | undefined): string | null => v ?? null;
const json = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));
const time = (v: Date | null | undefined): string | null => (v ? v.toISOString() : null);

/** The orders' columns, with the values the drizzle insert would send, and the column defaults where the row leaves them out. */
const ORDER_COLUMNS: readonly Column<NewOrderRow>[] = [
  ["id", "text", (o) => o.id],
  ["org_id", "text", (o) => o.orgId],
  ["agent_id", "text", (o) => o.agentId],
  ["mode", "text", (o) => o.mode],
  ["market_id", "text", (o) => o.marketId],
  ["condition_id", "text", (o) => o.conditionId],
  ["side", "text", (o) => o.side],
  ["size_units", "int8", (o) => o.sizeUnits.toString()],
  ["price", "text", (o) => o.price],
  ["notional_units", "int8", (o) => o.notionalUnits.toString()],
  ["order_type", "text", (o) => o.orderType],
  ["expiration", "text", (o) => o.expiration ?? "0"],
  ["status", "text", (o) => o.status],
  ["order_hash", "text", (o) => text(o.orderHash)],
  ["typed_data", "text", (o) => json(o.typedData)],
  ["signature_deadline", "timestamptz", (o) => time(o.signatureDeadline)],
  ["approval_deadline", "timestamptz", (o) => time(o.approvalDeadline)],
  ["venue_order_id", "text", (o) => text(o.venueOrderId)],
  ["filled_units", "int8", (o) => (o.filledUnits ?? 0n).toString()],
  ["flagged_for_review", "bool", (o) => (o.flaggedForReview === true ? "true" : "false")],
  ["client_order_id", "text", (o) => text(o.clientOrderId)],
  ["decision_id", "text", (o) => text(o.decisionId)],
  ["decision_intent", "text", (o) => json(o.decisionIntent)],
  ["trading_day", "text", (o) => o.tradingDay],
  ["history", "text", (o) => json(o.history)],
  ["created_at", "timestamptz", (o) => time(o.createdAt)],
];

/** A rejected decision as its `risk_rejected` event reports it. */
function rejectionEvent(d: NewDecisionRow): NewEvent {
  return {
    orgId: d.orgId,
    agentId: d.agentId,
    type: "risk_rejected",
    data: { decision_id: d.id, intent: d.intent, failures: d.failures, checks: d.checks },
    createdAt: d.createdAt,
  };
}

const EVENT_COLUMNS: readonly Column<NewEvent>[] = [
  ["org_id", "text", (e) => e.orgId],
  ["agent_id", "text", (e) => e.agentId],
  ["type", "text", (e) => e.type],
  ["data", "jsonb", (e) => json(e.data)],
  ["order_id", "text", (e) => text(e.orderId)],
  ["created_at", "timestamptz", (e) => time(e.createdAt)],
];

const DECISION_COLUMNS: readonly Column<NewDecisionRow>[] = [
  ["id", "text", (d) => d.id],
  ["org_id", "text", (d) => d.orgId],
  ["agent_id", "text", (d) => d.agentId],
  ["approved", "bool", (d) => (d.approved ? "true" : "false")],
  ["intent", "jsonb", (d) => json(d.intent)],
  ["failures", "jsonb", (d) => json(d.failures)],
  ["checks", "jsonb", (d) => json(d.checks)],
  ["order_id", "text", (d) => text(d.orderId)],
  ["created_at", "timestamptz", (d) => time(d.createdAt)],
];

function pushValues<R>(params: (string | null)[], columns: readonly Column<R>[], row: R): void {
  for (const c of columns) params.push(c[2](row));
}

/**
 * A text parameter's cast to its column's type. Numbers and times are declared as their own type, so
 * the server reads the text with that type's input function at once; a jsonb or bool parameter is
 * declared text and cast from it (see valuesInsert). Declaring int8 and timestamptz directly took
 * about a tenth off PostgreSQL's CPU per order against `::text::type` (docs/benchmarks.md).
 */
const cast = (type: Column<unknown>[1]) => (type === "text" ? "::text" : type === "int8" || type === "timestamptz" ? `::${type}` : `::text::${type}`);

/**
 * `insert into <table> (<columns>) values ($n::type, …), …` for `rows` rows, numbering
 * parameters from `first`. Every value is sent as text; jsonb and bool parameters are declared text
 * and cast on the server (Bun's client would JSON-encode a string again for a jsonb parameter, and
 * read "false" as true for a bool one), int8 and timestamptz ones are declared as such (`cast`).
 */
function valuesInsert<R>(table: string, columns: readonly Column<R>[], rows: number, first: number): string {
  let n = first;
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) tuples.push(`(${columns.map(([, type]) => `$${n++}${cast(type)}`).join(", ")})`);
  return `insert into ${table} (${columns.map(([name]) => name).join(", ")}) values ${tuples.join(", ")}`;
}

/** Statement texts by row count, made once each. */
function memoBySize(make: (rows: number) => string): (rows: number) => string {
  const made = new Map<number, string>();
  return (rows) => {
    let text = made.get(rows);
    if (text === undefined) made.set(rows, (text = make(rows)));
    return text;
  };
}

// The orders (each with its approving decision) and their `order` events in one statement: one commit for both.
const approvedStatement = memoBySize((rows) => {
  // The parameter of an order's column, for row r (0-based).
  const at = (r: number, name: string) => `$${r * ORDER_COLUMNS.length + ORDER_COLUMNS.findIndex(([n]) => n === name) + 1}`;
  const orderTuples: string[] = [];
  const eventTuples: string[] = [];
  for (let r = 0; r < rows; r++) {
    const values = ORDER_COLUMNS.map(([name, type]) => `${at(r, name)}${cast(type)}`);
    orderTuples.push(`(${values.join(", ")}, ${at(r, "created_at")}${cast("timestamptz")})`);
    eventTuples.push(`(${at(r, "org_id")}::text, ${at(r, "agent_id")}::text, 'order', ${at(r, "id")}::text, ${at(r, "created_at")}${cast("timestamptz")})`);
  }
  return (
    `with o as (insert into orders (${ORDER_COLUMNS.map(([name]) => name).join(", ")}, updated_at) values ${orderTuples.join(", ")}) ` +
    `insert into events (org_id, agent_id, type, order_id, created_at) values ${eventTuples.join(", ")}`
  );
});
/**
 * approvedStatement behind the fence: the same two inserts as data-modifying WITH queries, and the
 * statement's own result the check of the batch's (agent, epoch) pairs (the two array parameters after
 * the columns): a stale one raises and the whole statement inserts nothing. One call per statement,
 * one shared advisory lock and one index lookup per agent in it.
 */
const fencedApprovedStatement = memoBySize((rows) => {
  const plain = approvedStatement(rows);
  const first = rows * ORDER_COLUMNS.length;
  // "with o as (insert orders) insert into events …" becomes "with o as (…), e as (insert into events …) select fence".
  const split = plain.indexOf(") insert into events ");
  return `${plain.slice(0, split)}), e as (${plain.slice(split + 2)}) select agent_lease_fence($${first + 1}::text[], $${first + 2}::int8[])`;
});

/**
 * The distinct (agent, epoch) pairs of a batch's fenced rows as the two array parameters of
 * agent_lease_fence (text[] and int8[] text); null when no row is fenced.
 */
function fencePairs(items: readonly { agentId: string; leaseEpoch?: number }[]): [string, string] | null {
  const agentIds: string[] = [];
  const epochs: string[] = [];
  const seen = new Set<string>();
  for (const o of items) {
    if (o.leaseEpoch === undefined) continue;
    const pair = `${o.agentId} ${o.leaseEpoch}`;
    if (seen.has(pair)) continue;
    seen.add(pair);
    agentIds.push(o.agentId);
    epochs.push(String(o.leaseEpoch));
  }
  return agentIds.length ? [pgTextArray(agentIds), `{${epochs.join(",")}}`] : null;
}

/** Pushes a batch's fence pairs (fencePairs) after its columns; false, and nothing pushed, when no row of the batch is fenced. */
function pushFencePairs(params: (string | null)[], items: readonly { agentId: string; leaseEpoch?: number }[]): boolean {
  const pairs = fencePairs(items);
  if (!pairs) return false;
  params.push(...pairs);
  return true;
}

/** A delegated placement's status write as transitionPlaced's one statement carries it. */
interface FastPlacement {
  id: string;
  orgId: string;
  agentId: string;
  leaseEpoch?: number;
  to: OrderStatus;
  at: Date;
  /**
   * The history column the write leaves: `history` (a JSON array's text, as inserted) with the entry
   * appended. Any other history write appends through jsonb (appendHistory), which reads this text as
   * it reads its own; readers parse it (schema.ts, jsonText).
   */
  newHistory: string;
  venueOrderId: string;
  filledUnits: bigint;
  /** The history column as inserted: the row is written only while it still holds exactly that. */
  history: string;
  /**
   * How many entries the history the write leaves has: its `order` event stores this (and the venue's id
   * and what filled) instead of the order's view, rendered when read (asPlaced).
   */
  step: number;
}

const FAST_PLACEMENT_COLUMNS: readonly Column<FastPlacement>[] = [
  ["id", "text", (p) => p.id],
  ["status", "text", (p) => p.to],
  ["at", "timestamptz", (p) => time(p.at)],
  ["new_history", "text", (p) => p.newHistory],
  ["vid", "text", (p) => p.venueOrderId],
  ["filled", "int8", (p) => p.filledUnits.toString()],
  ["history", "text", (p) => p.history],
  ["org", "text", (p) => p.orgId],
  ["agent", "text", (p) => p.agentId],
  ["step", "int8", (p) => String(p.step)],
];

/**
 * Placements (submitting → open/filled/cancelled) and their `order` events in one statement, for rows
 * still exactly as inserted (see OrderRepository.placeFast); answers the ids it moved, as text. The
 * history as inserted stands for the status too (every change of an order's status appends to its
 * history, here and in the fill store): a `status = 'submitting'` condition would only offer the
 * planner the status index, whose entries for every order ever placed PGlite never vacuums away.
 */
const placedStatement = memoBySize((rows) => `with ${placedWrites(rows, 1)} select id from u`);

/**
 * placedStatement's two data-modifying WITH queries, `u` (the UPDATE, answering the rows it moved)
 * and `e` (their events), for `rows` rows of parameters numbered from `first`. An event stores its
 * order's id, the history's length, the venue's id and the filled amount (the new filled_units), no
 * data: the order's view (about 850 bytes of jsonb, parsed by the server) is rendered when read
 * (EventLog, asPlaced), as a new order's is.
 */
function placedWrites(rows: number, first: number): string {
  let n = first;
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) tuples.push(`(${FAST_PLACEMENT_COLUMNS.map(([, type]) => `$${n++}${cast(type)}`).join(", ")})`);
  return (
    "u as (update orders o set status = v.status, updated_at = v.at, history = v.new_history, " +
    `venue_order_id = v.vid, filled_units = greatest(o.filled_units, v.filled) from (values ${tuples.join(", ")}) as v (${FAST_PLACEMENT_COLUMNS.map(([name]) => name).join(", ")}) ` +
    "where o.id = v.id and o.history = v.history and o.filled_units = 0 and o.venue_order_id is null " +
    "and not o.flagged_for_review and o.cancel_requested_at is null returning o.id, v.org, v.agent, v.at, v.step, v.vid, o.filled_units), " +
    "e as (insert into events (org_id, agent_id, type, order_id, created_at, order_step, order_venue_id, order_filled_units) " +
    "select org, agent, 'order', id, at, step, vid, filled_units from u)"
  );
}

/** The rows of placements a combined statement (writtenStatement) carries for `n` placements: the next power of two. */
function placedRowsFor(n: number): number {
  let rows = 1;
  while (rows < n) rows *= 2;
  return rows;
}

/**
 * New orders (approvedStatement's two INSERTs) and placements (placedWrites, `placed` rows of
 * parameters after the orders') in one statement, answering the ids the placements moved; behind the
 * fence when `fenced` (the pairs after both). The fence is the condition of the statement's own
 * SELECT: checked before the UPDATE runs (it is what that SELECT reads) and before the INSERTs (run
 * when the statement ends); a stale pair raises and nothing is written.
 */
const writtenStatements = new Map<string, string>();
function writtenStatement(orders: number, placed: number, reads: boolean, fenced: boolean): string {
  const key = `${orders} ${placed} ${reads} ${fenced}`;
  let text = writtenStatements.get(key);
  if (text !== undefined) return text;
  const ctes: string[] = [];
  if (orders) {
    const plain = approvedStatement(orders);
    // "with o as (insert into orders …) insert into events …" becomes "o as (…), oe as (insert into events …)".
    const split = plain.indexOf(") insert into events ");
    ctes.push(`${plain.slice(5, split)})`, `oe as (${plain.slice(split + 2)})`);
  }
  let n = orders * ORDER_COLUMNS.length + 1;
  if (placed) ctes.push(placedWrites(placed, n));
  n += placed * FAST_PLACEMENT_COLUMNS.length;
  const readAt = reads ? n++ : 0;
  const fence = fenced ? `(select agent_lease_fence($${n}::text[], $${n + 1}::int8[]))` : "";
  // What the statement answers: the placements it moved ('u', id) and the credentials read ('c', agent, hex).
  const selects: string[] = [];
  if (placed) selects.push(`select 'u', id, null from u${fence ? ` where ${fence}` : ""}`);
  if (reads) selects.push(`select 'c', agent_id, encode(ciphertext, 'hex') from credentials where agent_id = any($${readAt}::text[])${fence && !placed ? ` and ${fence}` : ""}`);
  text = `${ctes.length ? `with ${ctes.join(", ")} ` : ""}${selects.join(" union all ")}`;
  writtenStatements.set(key, text);
  return text;
}
/** placedStatement behind the fence (the batch's (agent, epoch) pairs after the columns), as fencedApprovedStatement. */
const fencedPlacedStatement = memoBySize((rows) => {
  const first = rows * FAST_PLACEMENT_COLUMNS.length;
  return `${placedStatement(rows)} where (select agent_lease_fence($${first + 1}::text[], $${first + 2}::int8[]))`;
});

/** Rows kept for transitionPlaced's prediction: placements in flight, far more than ever at once. */
const MAX_PLACING = 10_000;
/** Placed orders remembered for the venue's reports of them (placedOrder): those of the last minutes. */
const MAX_PLACED_REFS = 50_000;

/**
 * A new order's row as the database stores it: its history in jsonb's key order (as read back), its
 * other documents (typed data, the approving intent) the objects it was inserted with (their keys in
 * that order: the order view and the events show neither).
 */
function storedRow(o: NewOrderRow): OrderRow {
  return {
    id: o.id,
    orgId: o.orgId,
    agentId: o.agentId,
    mode: o.mode,
    marketId: o.marketId,
    conditionId: o.conditionId,
    side: o.side,
    sizeUnits: o.sizeUnits,
    price: o.price,
    notionalUnits: o.notionalUnits,
    orderType: o.orderType,
    expiration: o.expiration ?? "0",
    status: o.status,
    orderHash: o.orderHash ?? null,
    typedData: o.typedData ?? null,
    signatureDeadline: o.signatureDeadline ?? null,
    approvalDeadline: o.approvalDeadline ?? null,
    venueOrderId: o.venueOrderId ?? null,
    filledUnits: o.filledUnits ?? 0n,
    flaggedForReview: o.flaggedForReview ?? false,
    cancelRequestedAt: o.cancelRequestedAt ?? null,
    clientOrderId: o.clientOrderId ?? null,
    decisionId: o.decisionId ?? null,
    decisionIntent: o.decisionIntent ?? null,
    tradingDay: o.tradingDay,
    history: jsonbOrdered(o.history) as OrderHistoryEntry[],
    createdAt: o.createdAt!,
    updatedAt: o.createdAt!,
  };
}

// Rejected decisions and their `risk_rejected` events in one statement.
const rejectionStatement = memoBySize(
  (rows) => `with e as (${valuesInsert("events", EVENT_COLUMNS, rows, rows * DECISION_COLUMNS.length + 1)}) ${valuesInsert("risk_decisions", DECISION_COLUMNS, rows, 1)}`,
);
/**
 * rejectionStatement behind the fence, as fencedApprovedStatement: both inserts as data-modifying WITH
 * queries, the statement's result the check of the batch's (agent, epoch) pairs (the two array
 * parameters after the decisions' and the events' columns); a stale one raises and nothing is inserted.
 */
const fencedRejectionStatement = memoBySize((rows) => {
  const first = rows * (DECISION_COLUMNS.length + EVENT_COLUMNS.length);
  return (
    `with e as (${valuesInsert("events", EVENT_COLUMNS, rows, rows * DECISION_COLUMNS.length + 1)}), ` +
    `d as (${valuesInsert("risk_decisions", DECISION_COLUMNS, rows, 1)}) select agent_lease_fence($${first + 1}::text[], $${first + 2}::int8[])`
  );
});

/** `agent_id` not one of `agents` (none given: no condition). */
function exceptAgentsOf(agents?: ReadonlySet<string>) {
  return agents && agents.size > 0 ? notInArray(orders.agentId, [...agents]) : undefined;
}
