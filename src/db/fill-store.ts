/**
 * Fills in the database (the `fills` table): one row per fill of one order whoever reports it and
 * however often. The order's row changes with it in the same transaction (its filled amount, its
 * status as the actor's lifecycle table decides, its `order` event reporting the fill).
 */
import { and, asc, eq, inArray, isNull, ne, sql } from "drizzle-orm";
import type { OrderStatus } from "../domain/order-status.ts";
import type { FillRecord as FillInput, FillTotals } from "../domain/fill.ts";
import { coveredBy, reckonFills } from "../domain/fill-links.ts";
import type { Db } from "./database.ts";
import { events, type FillRowStatus, fills, ORDER_VENUE_REF, type OrderHistoryEntry, orders } from "./schema.ts";
import type { Fence } from "../../actors/lease-port.ts";
import { fenceCheck, fenced } from "./lease-fence.ts";

export type FillRow = typeof fills.$inferSelect;
type OrderRow = typeof orders.$inferSelect;

export type { FillRecord as FillInput } from "../domain/fill.ts";


/**
 * The actor's decision, from the order's status and its totals after the change (and before it): the
 * next status and the reason, or null when the lifecycle table does not allow it (nothing is then written).
 */
export type FillDecision = (order: OrderRow, totals: FillTotals, beforeTotals: FillTotals) => { to: OrderStatus; reason: string } | null;

export type FillOutcome =
  /** Applied: the order before and after, the fill as stored; `changed` false when nothing new was learned (a repeat). */
  | { kind: "applied"; before: OrderRow; row: OrderRow; fill: FillRow; changed: boolean; totals: FillTotals; beforeTotals: FillTotals }
  | { kind: "refused"; status: OrderStatus }
  | { kind: "not_found" };

const RANK: Record<FillRowStatus, number> = { matched: 1, retrying: 1, mined: 2, confirmed: 3, failed: 4 };

class Refused extends Error {
  constructor(readonly status: OrderStatus) {
    super("refused by the order lifecycle");
  }
}

type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

export class FillStore {
  /** The agent lease this view's writes are fenced on (`fenced`); none: unfenced (one process, tests). */
  protected fence: Fence | undefined;

  constructor(
    private readonly db: Db,
    private readonly orderEvent: (row: OrderRow) => Record<string, unknown>,
    private readonly now: () => Date,
  ) {}

  /**
   * This store with its writes (applyFill, revertFill) fenced on `fence`, the lease the agent's actor
   * runs under: the fence's check is the first statement of the write's own transaction, so a writer
   * whose epoch is stale changes nothing (LeaseLostError).
   */
  fenced(fence: Fence): this {
    const view = Object.create(this) as this;
    view.fence = fence;
    return view;
  }

  /** `write` in a transaction that first checks the fence (when this view has one). */
  private tx<T>(write: (tx: Tx) => Promise<T>): Promise<T> {
    const fence = this.fence;
    if (!fence) return this.db.transaction((tx) => write(tx));
    return fenced(fence, () =>
      this.db.transaction(async (tx) => {
        await tx.execute(fenceCheck(fence));
        return write(tx);
      }),
    );
  }

  /** The order a source names, by its EIP-712 hash or the venue's id. */
  async findOrder(ref: { orderHash?: string; venueOrderId?: string }): Promise<{ id: string; agentId: string } | null> {
    const pick = { id: orders.id, agentId: orders.agentId };
    const keys = [ref.orderHash?.toLowerCase(), ref.venueOrderId].filter((k): k is string => !!k);
    for (const k of new Set(keys)) {
      const [byHash] = await this.db.select(pick).from(orders).where(eq(orders.orderHash, k)).limit(1);
      if (byHash) return byHash;
    }
    if (ref.venueOrderId) {
      // An id that is not the order's hash (one that is was found above): orders_venue_ref_idx.
      const [byVenue] = await this.db.select(pick).from(orders).where(sql`${ORDER_VENUE_REF} = ${ref.venueOrderId}`).limit(1);
      if (byVenue) return byVenue;
    }
    return null;
  }

  /**
   * Records one fill of `orderId` (a new one, or a repeat that may add a trade id, a transaction or a
   * later status) and moves the order as `decide` says, in one transaction. Which of the order's rows
   * count is then worked out again from all of them (src/domain/fill-links.ts), so that a trade
   * reported by several sources counts once whatever the order of their reports.
   */
  async applyFill(orderId: string, f: FillInput, decide: FillDecision): Promise<FillOutcome> {
    const now = this.now();
    try {
      return await this.tx(async (tx) => {
        const [before] = await tx.select().from(orders).where(eq(orders.id, orderId)).for("update");
        if (!before) return { kind: "not_found" as const };
        const rows = await rowsOfOrder(tx, orderId);
        const beforeTotals = totalsOfRows(rows);
        const primary = rows.filter((r) => sameFill(r, f));
        const partner = primary[0]?.status === "failed" ? undefined : partnerInTx(rows, f, primary);
        const [existing, ...twins] = [...primary, ...(partner ? [partner] : [])].sort((a, b) => a.id - b.id);
        let fillId: number;
        let changed = false;
        if (existing) {
          fillId = existing.id;
          const set: Partial<FillRow> = {};
          if (twins.length) {
            // Rows this report shows to be one fill (the user channel's trade and the chain's log of it,
            // or the trade's two names met apart): the younger are folded into the older.
            await tx.delete(fills).where(inArray(fills.id, twins.map((t) => t.id)));
            for (const t of twins) {
              if (!existing.tradeId && !set.tradeId && t.tradeId) set.tradeId = t.tradeId;
              if (t.logIndex !== null && existing.logIndex === null && set.logIndex === undefined) {
                set.txHash = t.txHash;
                set.logIndex = t.logIndex;
                if (t.blockNumber !== null) set.blockNumber = t.blockNumber;
              } else if (!existing.txHash && !set.txHash && t.txHash) {
                set.txHash = t.txHash;
                set.logIndex = t.logIndex;
              }
              if (existing.status !== "failed" && t.status !== "failed" && RANK[t.status] > RANK[set.status ?? existing.status]) set.status = t.status;
              const sources = set.sources ?? existing.sources;
              const more = t.sources.filter((x) => !sources.includes(x));
              if (more.length) set.sources = [...sources, ...more];
            }
          }
          const txHash = set.txHash !== undefined ? set.txHash : existing.txHash;
          const logIndex = set.logIndex !== undefined ? set.logIndex : existing.logIndex;
          if (!existing.tradeId && !set.tradeId && f.tradeId) set.tradeId = f.tradeId;
          if (!txHash && f.txHash) {
            set.txHash = f.txHash;
            set.logIndex = f.logIndex ?? null;
          } else if (txHash === f.txHash && logIndex === null && f.logIndex !== undefined) {
            set.logIndex = f.logIndex;
          } else if (txHash && f.txHash && txHash !== f.txHash && logIndex === null && f.logIndex === undefined && existing.status !== "failed") {
            // The trade now names another transaction (mined again after a reorganisation): the latest one is its.
            set.txHash = f.txHash;
          }
          if (f.blockNumber !== undefined && existing.blockNumber !== f.blockNumber) set.blockNumber = f.blockNumber;
          if (existing.status === "failed") {
            // The chain shows again a log it had taken back (its transaction mined again, same place): it counts again.
            const back = f.source === "chain" && f.logIndex !== undefined && existing.txHash === f.txHash && existing.logIndex === f.logIndex;
            if (back) set.status = f.status;
          } else if (RANK[f.status] > RANK[set.status ?? existing.status]) {
            set.status = f.status;
          }
          const sources = set.sources ?? existing.sources;
          if (!sources.includes(f.source)) set.sources = [...sources, f.source];
          if (Object.keys(set).length) {
            await tx.update(fills).set({ ...set, updatedAt: now }).where(eq(fills.id, existing.id));
            changed = twins.length > 0 || set.status !== undefined || set.tradeId !== undefined || set.txHash !== undefined || set.logIndex !== undefined;
          }
        } else {
          if (f.covers) await this.nameCovered(tx, rows, f.covers, f.sharesUnits, now);
          const named = f.covers ? {} : nameFromPlacement(rows, f);
          const [inserted] = await tx
            .insert(fills)
            .values({
              orderId,
              agentId: before.agentId,
              orgId: before.orgId,
              tokenId: before.marketId,
              conditionId: before.conditionId,
              side: before.side,
              fillKey: f.fillKey,
              tradeId: f.tradeId ?? named.tradeId ?? null,
              txHash: f.txHash ?? named.txHash ?? null,
              logIndex: f.logIndex ?? null,
              blockNumber: f.blockNumber ?? null,
              source: f.source,
              sources: [f.source],
              price: f.price,
              sharesUnits: f.sharesUnits,
              usdcUnits: f.usdcUnits,
              feeUnits: f.feeUnits,
              status: f.status,
              covers: f.covers ?? null,
              placedSharesUnits: f.covers ? f.sharesUnits : null,
              placedUsdcUnits: f.covers ? f.usdcUnits : null,
              at: f.at,
              createdAt: now,
              updatedAt: now,
            })
            .returning({ id: fills.id });
          fillId = inserted.id;
        }
        const after = await this.relink(tx, orderId, now);
        const fill = after.find((r) => r.id === fillId)!;
        const totals = totalsOfRows(after);
        // A new row counts unless it is another source's report of a counted trade; any other row
        // starting or ceasing to count, or a placement answer's part changing, is news too.
        if (!existing && fill.twinOf === null) changed = true;
        if (linksMoved(rows, after, fillId)) changed = true;
        if (totals.sharesUnits !== beforeTotals.sharesUnits || totals.usdcUnits !== beforeTotals.usdcUnits) changed = true;
        const decision = decide(before, totals, beforeTotals);
        if (!decision) throw new Refused(before.status);
        if (!changed) return { kind: "applied" as const, before, row: before, fill, changed, totals, beforeTotals };
        // The event shows the fill as listed: the counted one, with its twins' sources.
        const shown = listedFills(after).find((r) => r.id === (fill.twinOf ?? fill.id)) ?? fill;
        const row = await this.moveOrder(tx, before, decision, filledAfter(totals, beforeTotals), shown, now);
        return { kind: "applied" as const, before, row, fill, changed, totals, beforeTotals };
      });
    } catch (error) {
      if (error instanceof Refused) return { kind: "refused", status: error.status };
      throw error;
    }
  }

  /** Takes back one fill (trade FAILED, block reorganised away): it counts for nothing from now on. */
  async revertFill(orderId: string, ref: { fillKey: string; tradeId?: string; txHash?: string; logIndex?: number }, decide: FillDecision): Promise<FillOutcome> {
    const now = this.now();
    try {
      return await this.tx(async (tx) => {
        const [before] = await tx.select().from(orders).where(eq(orders.id, orderId)).for("update");
        if (!before) return { kind: "not_found" as const };
        const rows = await rowsOfOrder(tx, orderId);
        const beforeTotals = totalsOfRows(rows);
        // By any of its names: a fill reported first by one source and merged with another's report
        // keeps the first one's key, so a key names a trade id or a log too (`trade:<id>`, `tx:<hash>:<index>`).
        const byKey = namesOfKey(ref.fillKey);
        const tradeId = ref.tradeId ?? byKey.tradeId;
        const txHash = ref.txHash ?? byKey.txHash;
        const logIndex = ref.logIndex ?? byKey.logIndex;
        const existing = rows.find(
          (r) => r.fillKey === ref.fillKey || (!!tradeId && r.tradeId === tradeId) || (!!txHash && logIndex !== undefined && r.txHash === txHash && r.logIndex === logIndex),
        );
        if (!existing || existing.status === "failed") {
          // Nothing counted to take back (never seen, or already taken back).
          return existing ? { kind: "applied" as const, before, row: before, fill: existing, changed: false, totals: beforeTotals, beforeTotals } : { kind: "not_found" as const };
        }
        await tx.update(fills).set({ status: "failed", updatedAt: now }).where(eq(fills.id, existing.id));
        // Its twins (other sources' reports linked to it) count on their own again, or pair anew.
        const after = await this.relink(tx, orderId, now);
        const fill = after.find((r) => r.id === existing.id)!;
        const totals = totalsOfRows(after);
        const decision = decide(before, totals, beforeTotals);
        if (!decision) throw new Refused(before.status);
        const row = await this.moveOrder(tx, before, decision, filledAfter(totals, beforeTotals), fill, now);
        return { kind: "applied" as const, before, row, fill, changed: true, totals, beforeTotals };
      });
    } catch (error) {
      if (error instanceof Refused) return { kind: "refused", status: error.status };
      throw error;
    }
  }

  /**
   * Works out again which of the order's rows count (src/domain/fill-links.ts) and writes what
   * changed (a row's twin, a placement answer's part); answers the rows as they are now.
   */
  private async relink(tx: Tx, orderId: string, now: Date): Promise<FillRow[]> {
    const rows = await rowsOfOrder(tx, orderId);
    const { twinOf, placement } = reckonFills(rows);
    const out: FillRow[] = [];
    for (const r of rows) {
      const set: Partial<FillRow> = {};
      const twin = twinOf.get(r.id) ?? null;
      if (twin !== r.twinOf) set.twinOf = twin;
      const part = placement.get(r.id);
      if (part && (part.sharesUnits !== r.sharesUnits || part.usdcUnits !== r.usdcUnits)) {
        set.sharesUnits = part.sharesUnits;
        set.usdcUnits = part.usdcUnits;
      }
      if (Object.keys(set).length) await tx.update(fills).set({ ...set, updatedAt: now }).where(eq(fills.id, r.id));
      out.push({ ...r, ...set });
    }
    return out;
  }

  /**
   * A placement's answer arriving after the sources' reports: the counted rows it covers (in the order
   * reported, as far as its shares go) take the answer's one trade id or transaction when they lack
   * it, so that the other source's later report of that trade merges into them.
   */
  private async nameCovered(tx: Tx, rows: FillRow[], covers: string[], shares: bigint, now: Date): Promise<void> {
    const trade = single(covers, "trade:");
    const txName = single(covers, "tx:");
    let left = shares;
    for (const r of rows) {
      if (left <= 0n) break;
      if (r.covers !== null || r.status === "failed" || r.twinOf !== null || !coveredBy(covers, r)) continue;
      left -= r.sharesUnits < left ? r.sharesUnits : left;
      const set: Partial<FillRow> = {};
      if (!r.tradeId && trade && !rows.some((x) => x.tradeId === trade)) set.tradeId = trade;
      if (!r.txHash && txName) set.txHash = txName;
      if (Object.keys(set).length) {
        await tx.update(fills).set({ ...set, updatedAt: now }).where(eq(fills.id, r.id));
        Object.assign(r, set);
      }
    }
  }

  /** An order's fills as listed, oldest first (`listedFills`). */
  async fillsOf(orderId: string): Promise<FillRow[]> {
    return listedFills(await this.db.select().from(fills).where(eq(fills.orderId, orderId)).orderBy(asc(fills.at), asc(fills.id)));
  }

  /**
   * An order's row and its fills, oldest first, read in one snapshot (repeatable read), so that what
   * the row says filled and the fills listed agree: read one after the other, a fill committed between
   * the two reads showed in the list while the row did not count it yet (GET /v1/orders/{id}).
   */
  async orderWithFills(orderId: string): Promise<{ order: OrderRow; fills: FillRow[] } | null> {
    return this.db.transaction(
      async (tx) => {
        const [order] = await tx.select().from(orders).where(eq(orders.id, orderId));
        if (!order) return null;
        const rows = await tx.select().from(fills).where(eq(fills.orderId, orderId)).orderBy(asc(fills.at), asc(fills.id));
        return { order, fills: listedFills(rows) };
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  }

  /** An agent's counted fills (not taken back, no twins), oldest first: its positions are made of them. */
  async countedFillsOfAgent(agentId: string): Promise<FillRow[]> {
    return this.db
      .select()
      .from(fills)
      .where(and(eq(fills.agentId, agentId), COUNTED_FILL))
      .orderBy(asc(fills.at), asc(fills.id));
  }

  /** Shares held per outcome token from an agent's counted fills (buys less sells). */
  async heldShares(agentId: string): Promise<Record<string, bigint>> {
    const rows = await this.db
      .select({
        token: fills.tokenId,
        shares: sql<string>`coalesce(sum(case when ${fills.side} = 'buy' then ${fills.sharesUnits} else -${fills.sharesUnits} end), 0)`,
      })
      .from(fills)
      .where(and(eq(fills.agentId, agentId), COUNTED_FILL))
      .groupBy(fills.tokenId);
    return Object.fromEntries(rows.map((r) => [r.token, BigInt(r.shares)]));
  }

  /** The filled shares of each order (counted fills). */
  async filledShares(orderIds: string[]): Promise<Map<string, bigint>> {
    if (!orderIds.length) return new Map();
    const rows = await this.db
      .select({ id: fills.orderId, shares: sql<string>`coalesce(sum(${fills.sharesUnits}), 0)` })
      .from(fills)
      .where(and(inArray(fills.orderId, orderIds), COUNTED_FILL))
      .groupBy(fills.orderId);
    return new Map(rows.map((r) => [r.id, BigInt(r.shares)]));
  }

  private async moveOrder(
    tx: Pick<Db, "update" | "insert">,
    before: OrderRow,
    decision: { to: OrderStatus; reason: string },
    filled: ReturnType<typeof sql>,
    fill: FillRow,
    now: Date,
  ): Promise<OrderRow> {
    const statusChanged = decision.to !== before.status;
    const entry: OrderHistoryEntry[] = [{ status: decision.to, at: now.toISOString(), reason: decision.reason }];
    const [row] = await tx
      .update(orders)
      .set({
        status: decision.to,
        filledUnits: filled as unknown as bigint,
        updatedAt: now,
        ...(statusChanged ? { history: sql`(${orders.history}::jsonb || ${JSON.stringify(entry)}::jsonb)::text` as unknown as OrderHistoryEntry[] } : {}),
      })
      .where(eq(orders.id, before.id))
      .returning();
    await tx.insert(events).values({ orgId: row.orgId, agentId: row.agentId, type: "order", data: { ...this.orderEvent(row), fill: fillView(fill) }, createdAt: now });
    return row;
  }
}

/** A fill row that counts: not taken back, and not another source's report of a row that counts (a twin). */
export const COUNTED_FILL = and(ne(fills.status, "failed"), isNull(fills.twinOf))!;

function rowsOfOrder(tx: Pick<Db, "select">, orderId: string): Promise<FillRow[]> {
  return tx.select().from(fills).where(eq(fills.orderId, orderId)).orderBy(asc(fills.id));
}

/** What the counted rows add up to. */
function totalsOfRows(rows: readonly FillRow[]): FillTotals {
  let sharesUnits = 0n;
  let usdcUnits = 0n;
  for (const r of rows) {
    if (r.status === "failed" || r.twinOf !== null) continue;
    sharesUnits += r.sharesUnits;
    usdcUnits += r.usdcUnits;
  }
  return { sharesUnits, usdcUnits };
}

/** The names a fill key gives: `trade:<id>` a trade id, `tx:<hash>:<log index>` a log. */
function namesOfKey(fillKey: string): { tradeId?: string; txHash?: string; logIndex?: number } {
  if (fillKey.startsWith("trade:")) return { tradeId: fillKey.slice("trade:".length) };
  const log = /^tx:(0x[0-9a-f]+):([0-9]+)$/.exec(fillKey);
  return log ? { txHash: log[1], logIndex: Number(log[2]) } : {};
}

/** A row that is the reported fill by one of its own names: its key, its trade id, its log. */
function sameFill(r: FillRow, f: FillInput): boolean {
  if (r.fillKey === f.fillKey) return true;
  if (f.tradeId && r.tradeId === f.tradeId) return true;
  return !!f.txHash && f.logIndex !== undefined && r.txHash === f.txHash && r.logIndex === f.logIndex;
}

/**
 * The other name of the same fill, in the same transaction: for a trade report naming its transaction
 * (no log index), the chain's log of this order in that transaction with no trade id and the same
 * shares; for the chain's log, a trade report naming that transaction with no log yet and the same
 * shares. Never a row taken back, nor a row already holding both names.
 */
function partnerInTx(rows: readonly FillRow[], f: FillInput, primary: readonly FillRow[]): FillRow | undefined {
  if (!f.txHash) return undefined;
  const self = primary[0];
  const isLog = f.logIndex !== undefined;
  if (self && (isLog ? self.tradeId !== null : self.logIndex !== null)) return undefined;
  return rows.find(
    (r) =>
      !primary.includes(r) &&
      r.status !== "failed" &&
      r.covers === null &&
      r.txHash === f.txHash &&
      r.sharesUnits === f.sharesUnits &&
      (isLog ? r.logIndex === null && r.tradeId !== null : r.logIndex !== null && r.tradeId === null),
  );
}

/**
 * A source's new fill that is one of a placement answer's matches (the answer still counting some of
 * them) takes the answer's one trade id or transaction when it lacks that name, so that the other
 * source's report of that trade merges into it. A trade id another row holds already is not taken.
 */
function nameFromPlacement(rows: readonly FillRow[], f: FillInput): { tradeId?: string; txHash?: string } {
  const named: { tradeId?: string; txHash?: string } = {};
  for (const p of rows) {
    if (p.covers === null || p.status === "failed" || p.sharesUnits <= 0n) continue;
    if (!coveredBy(p.covers, { tradeId: f.tradeId ?? null, txHash: f.txHash ?? null })) continue;
    const trade = single(p.covers, "trade:");
    const txName = single(p.covers, "tx:");
    if (!f.tradeId && trade && !rows.some((r) => r.tradeId === trade)) named.tradeId = trade;
    if (!f.txHash && txName) named.txHash = txName;
  }
  return named;
}

/** The one name of a kind a placement's answer gave (`trade:` or `tx:`), or null. */
function single(covers: readonly string[], kind: "trade:" | "tx:"): string | null {
  const names = covers.filter((c) => c.startsWith(kind));
  return names.length === 1 ? names[0].slice(kind.length) : null;
}

/** Whether a row other than `fillId` started or ceased to count, or a placement answer's part moved. */
function linksMoved(before: readonly FillRow[], after: readonly FillRow[], fillId: number): boolean {
  const was = new Map(before.map((r) => [r.id, r]));
  return after.some((r) => {
    const b = was.get(r.id);
    return r.id !== fillId && !!b && (b.twinOf !== r.twinOf || b.sharesUnits !== r.sharesUnits || b.usdcUnits !== r.usdcUnits);
  });
}

/**
 * The order's filled USDC after a change of its fills: it never shrinks below what it was through a
 * fill that adds (a venue's read or the placement's answer may know more than the fills); when the
 * counted fills shrink (a fill taken back, a trade found counted twice), it loses what they lost.
 */
function filledAfter(totals: FillTotals, beforeTotals: FillTotals) {
  if (totals.usdcUnits >= beforeTotals.usdcUnits) return sql`greatest(${orders.filledUnits}, ${totals.usdcUnits.toString()}::bigint)`;
  const lost = beforeTotals.usdcUnits - totals.usdcUnits;
  return sql`greatest(${totals.usdcUnits.toString()}::bigint, ${orders.filledUnits} - ${lost.toString()}::bigint)`;
}

/**
 * An order's fills as GET /v1/orders/{id} and the `fills` of its events show them: a twin (another
 * source's report of a counted fill) is shown as that fill's, which then lists its sources and, when it
 * has none, its trade id; a placement answer's fill that the sources' reports have wholly replaced is
 * left out.
 */
export function listedFills(rows: readonly FillRow[]): FillRow[] {
  const twinsOf = new Map<number, FillRow[]>();
  for (const r of rows) if (r.twinOf !== null) twinsOf.set(r.twinOf, [...(twinsOf.get(r.twinOf) ?? []), r]);
  const out: FillRow[] = [];
  for (const r of rows) {
    if (r.twinOf !== null || (r.covers && r.sharesUnits === 0n)) continue;
    const twins = twinsOf.get(r.id);
    if (!twins) {
      out.push(r);
      continue;
    }
    const sources = [...r.sources];
    for (const t of twins) for (const s of t.sources) if (!sources.includes(s)) sources.push(s);
    const trades = twins.filter((t) => t.tradeId !== null);
    out.push({ ...r, sources, tradeId: r.tradeId ?? (trades.length === 1 ? trades[0].tradeId : null) });
  }
  return out;
}

/** A fill as the API shows it (GET /v1/orders/{id} `fills`, and the `fill` of an `order` event). */
export function fillView(f: FillRow) {
  return {
    price: f.price,
    shares: unitsText(f.sharesUnits),
    usdc: unitsText(f.usdcUnits),
    fee: unitsText(f.feeUnits),
    source: f.source,
    sources: f.sources,
    trade_id: f.tradeId,
    tx_hash: f.txHash,
    log_index: f.logIndex,
    status: f.status,
    at: f.at.toISOString(),
  };
}

/** 6-decimal units as exact decimal text (trailing zeros dropped). */
export function unitsText(units: bigint): string {
  const neg = units < 0n;
  const abs = neg ? -units : units;
  const whole = abs / 1_000_000n;
  const frac = (abs % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}
