/**
 * Fills in the database (the `fills` table): one row per fill of one order whoever reports it and
 * however often. The order's row changes with it in the same transaction (its filled amount, its
 * status as the actor's lifecycle table decides, its `order` event reporting the fill).
 */
import { and, asc, eq, inArray, isNotNull, isNull, ne, or, sql } from "drizzle-orm";
import type { OrderStatus } from "../domain/order-status.ts";
import type { FillRecord as FillInput, FillTotals } from "../domain/fill.ts";
import type { Db } from "./database.ts";
import { events, type FillRowStatus, fills, type OrderHistoryEntry, orders } from "./schema.ts";
import type { Fence } from "../../actors/lease-port.ts";
import { fenceCheck, fenced } from "./lease-fence.ts";

export type FillRow = typeof fills.$inferSelect;
type OrderRow = typeof orders.$inferSelect;

export type { FillRecord as FillInput } from "../domain/fill.ts";


/**
 * The actor's decision, from the order's status and its totals after the change: the next status
 * and the reason, or null when the lifecycle table does not allow it (nothing is then written).
 */
export type FillDecision = (order: OrderRow, totals: FillTotals) => { to: OrderStatus; reason: string } | null;

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
  private tx<T>(write: (tx: Db) => Promise<T>): Promise<T> {
    const fence = this.fence;
    if (!fence) return this.db.transaction((tx) => write(tx as unknown as Db));
    return fenced(fence, () =>
      this.db.transaction(async (tx) => {
        await tx.execute(fenceCheck(fence));
        return write(tx as unknown as Db);
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
      const [byVenue] = await this.db.select(pick).from(orders).where(eq(orders.venueOrderId, ref.venueOrderId)).limit(1);
      if (byVenue) return byVenue;
    }
    return null;
  }

  /**
   * Records one fill of `orderId` (a new one, or a repeat that may add a trade id, a transaction or a
   * later status) and moves the order as `decide` says, in one transaction.
   */
  async applyFill(orderId: string, f: FillInput, decide: FillDecision): Promise<FillOutcome> {
    const now = this.now();
    try {
      return await this.tx(async (tx) => {
        const [before] = await tx.select().from(orders).where(eq(orders.id, orderId)).for("update");
        if (!before) return { kind: "not_found" as const };
        const beforeTotals = await totalsOf(tx, orderId);
        const match = [eq(fills.fillKey, f.fillKey)];
        if (f.tradeId) match.push(eq(fills.tradeId, f.tradeId));
        if (f.txHash && f.logIndex !== undefined) match.push(and(eq(fills.txHash, f.txHash), eq(fills.logIndex, f.logIndex))!);
        // A source that names the transaction but not the log (the user channel's trade) and one that
        // names both (the chain) report the same fill when the shares agree: one row.
        if (f.txHash) {
          const oneLacksLog = f.logIndex === undefined ? sql`true` : isNull(fills.logIndex);
          match.push(and(eq(fills.txHash, f.txHash), oneLacksLog, eq(fills.sharesUnits, f.sharesUnits))!);
        }
        const [existing, ...twins] = await tx
          .select()
          .from(fills)
          .where(and(eq(fills.orderId, orderId), or(...match)))
          .orderBy(asc(fills.id));
        let fill: FillRow;
        let changed = false;
        if (existing) {
          const set: Partial<FillRow> = {};
          if (twins.length) {
            // Two rows this report shows to be one fill (the user channel's trade before it named its
            // transaction, and the chain's log of it): the younger is folded into the older.
            await tx.delete(fills).where(inArray(fills.id, twins.map((t) => t.id)));
            for (const t of twins) {
              if (!existing.tradeId && !set.tradeId && t.tradeId) set.tradeId = t.tradeId;
              if (!existing.txHash && !set.txHash && t.txHash) {
                set.txHash = t.txHash;
                set.logIndex = t.logIndex;
              }
              if (existing.status !== "failed" && t.status !== "failed" && RANK[t.status] > RANK[set.status ?? existing.status]) set.status = t.status;
              const sources = set.sources ?? existing.sources;
              const more = t.sources.filter((x) => !sources.includes(x));
              if (more.length) set.sources = [...sources, ...more];
            }
          }
          if (!existing.tradeId && !set.tradeId && f.tradeId) set.tradeId = f.tradeId;
          if (!existing.txHash && !set.txHash && f.txHash) {
            set.txHash = f.txHash;
            set.logIndex = f.logIndex ?? null;
          } else if (existing.txHash && existing.logIndex === null && f.logIndex !== undefined) {
            set.logIndex = f.logIndex;
          }
          if (f.blockNumber !== undefined && existing.blockNumber !== f.blockNumber) set.blockNumber = f.blockNumber;
          if (existing.status !== "failed" && RANK[f.status] > RANK[set.status ?? existing.status]) set.status = f.status;
          const sources = set.sources ?? existing.sources;
          if (!sources.includes(f.source)) set.sources = [...sources, f.source];
          if (Object.keys(set).length) {
            [fill] = await tx.update(fills).set({ ...set, updatedAt: now }).where(eq(fills.id, existing.id)).returning();
            changed = twins.length > 0 || set.status !== undefined || set.tradeId !== undefined || set.txHash !== undefined || set.logIndex !== undefined;
          } else {
            fill = existing;
          }
        } else {
          let shares = f.sharesUnits;
          let usdc = f.usdcUnits;
          const named: { tradeId?: string; txHash?: string } = {};
          if (f.covers) {
            // A placement's answer: what the sources already reported of the trades it names is not counted again.
            const known = await tx.select().from(fills).where(and(eq(fills.orderId, orderId), isNull(fills.covers), ne(fills.status, "failed")));
            const trades = f.covers.filter((c) => c.startsWith("trade:"));
            const txs = f.covers.filter((c) => c.startsWith("tx:"));
            for (const k of known) {
              const covered = shares > 0n ? coveredBy(f.covers, k) : false;
              if (!covered) continue;
              [shares, usdc] = absorb(shares, usdc, k.sharesUnits);
              // As below: a fill that is one of the answer's matches carries the answer's one trade or transaction name.
              const set: Partial<FillRow> = {};
              if (!k.tradeId && trades.length === 1) set.tradeId = trades[0].slice("trade:".length);
              if (!k.txHash && txs.length === 1) set.txHash = txs[0].slice("tx:".length);
              if (Object.keys(set).length) await tx.update(fills).set({ ...set, updatedAt: now }).where(eq(fills.id, k.id));
            }
          } else {
            // A source's own report of a trade a placement's answer counted: taken out of that answer's fill.
            const placed = await tx
              .select()
              .from(fills)
              .where(and(eq(fills.orderId, orderId), isNotNull(fills.covers), ne(fills.status, "failed"), sql`${fills.sharesUnits} > 0`))
              .for("update");
            for (const p of placed) {
              const covered = coveredBy(p.covers ?? [], { tradeId: f.tradeId ?? null, txHash: f.txHash ?? null });
              if (!covered) continue;
              const [s2, u2] = absorb(p.sharesUnits, p.usdcUnits, f.sharesUnits);
              await tx.update(fills).set({ sharesUnits: s2, usdcUnits: u2, updatedAt: now }).where(eq(fills.id, p.id));
              // One of the answer's matches: when the answer named one trade (or one transaction), that is
              // this fill's too, so the other source's report of it (by that name) is this row, not another fill.
              const trades = (p.covers ?? []).filter((k) => k.startsWith("trade:"));
              const txs = (p.covers ?? []).filter((k) => k.startsWith("tx:"));
              if (!f.tradeId && trades.length === 1) named.tradeId = trades[0].slice("trade:".length);
              if (!f.txHash && txs.length === 1) named.txHash = txs[0].slice("tx:".length);
            }
          }
          [fill] = await tx
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
              sharesUnits: shares,
              usdcUnits: usdc,
              feeUnits: f.feeUnits,
              status: f.status,
              covers: f.covers ?? null,
              at: f.at,
              createdAt: now,
              updatedAt: now,
            })
            .returning();
          changed = true;
        }
        const totals = await totalsOf(tx, orderId);
        const decision = decide(before, totals);
        if (!decision) throw new Refused(before.status);
        if (!changed) return { kind: "applied" as const, before, row: before, fill, changed, totals, beforeTotals };
        const row = await this.moveOrder(tx, before, decision, sql`greatest(${orders.filledUnits}, ${totals.usdcUnits.toString()}::bigint)`, fill, now);
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
        const beforeTotals = await totalsOf(tx, orderId);
        const match = [eq(fills.fillKey, ref.fillKey)];
        if (ref.tradeId) match.push(eq(fills.tradeId, ref.tradeId));
        if (ref.txHash && ref.logIndex !== undefined) match.push(and(eq(fills.txHash, ref.txHash), eq(fills.logIndex, ref.logIndex))!);
        const [existing] = await tx.select().from(fills).where(and(eq(fills.orderId, orderId), or(...match))).limit(1);
        if (!existing || existing.status === "failed") {
          // Nothing counted to take back (never seen, or already taken back).
          const totals = await totalsOf(tx, orderId);
          return existing ? { kind: "applied" as const, before, row: before, fill: existing, changed: false, totals, beforeTotals } : { kind: "not_found" as const };
        }
        const [fill] = await tx.update(fills).set({ status: "failed", updatedAt: now }).where(eq(fills.id, existing.id)).returning();
        const totals = await totalsOf(tx, orderId);
        const decision = decide(before, totals);
        if (!decision) throw new Refused(before.status);
        const filled = sql`greatest(${totals.usdcUnits.toString()}::bigint, ${orders.filledUnits} - ${existing.usdcUnits.toString()}::bigint)`;
        const row = await this.moveOrder(tx, before, decision, filled, fill, now);
        return { kind: "applied" as const, before, row, fill, changed: true, totals, beforeTotals };
      });
    } catch (error) {
      if (error instanceof Refused) return { kind: "refused", status: error.status };
      throw error;
    }
  }

  /** An order's fills, oldest first (a placement answer's fill that the sources' reports have wholly replaced is left out). */
  async fillsOf(orderId: string): Promise<FillRow[]> {
    const rows = await this.db.select().from(fills).where(eq(fills.orderId, orderId)).orderBy(asc(fills.at), asc(fills.id));
    return rows.filter((r) => !(r.covers && r.sharesUnits === 0n));
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
        // As fillsOf: a placement answer's fill wholly replaced by the sources' reports is left out.
        return { order, fills: rows.filter((r) => !(r.covers && r.sharesUnits === 0n)) };
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  }

  /** An agent's counted fills (not taken back), oldest first: its positions are made of them. */
  async countedFillsOfAgent(agentId: string): Promise<FillRow[]> {
    return this.db
      .select()
      .from(fills)
      .where(and(eq(fills.agentId, agentId), ne(fills.status, "failed")))
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
      .where(and(eq(fills.agentId, agentId), ne(fills.status, "failed")))
      .groupBy(fills.tokenId);
    return Object.fromEntries(rows.map((r) => [r.token, BigInt(r.shares)]));
  }

  /** The filled shares of each order (counted fills). */
  async filledShares(orderIds: string[]): Promise<Map<string, bigint>> {
    if (!orderIds.length) return new Map();
    const rows = await this.db
      .select({ id: fills.orderId, shares: sql<string>`coalesce(sum(${fills.sharesUnits}), 0)` })
      .from(fills)
      .where(and(inArray(fills.orderId, orderIds), ne(fills.status, "failed")))
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

/**
 * Whether a source's fill (`f`) is one of the trades a placement's answer named (`covers`). It is
 * when it shares a trade id or a transaction with them; it is not when it carries a kind of name the
 * answer gave and that name differs (another trade: a later fill of the resting order); otherwise
 * (nothing to compare: the chain's log against an answer that named trades only) it is taken as one
 * of them, in the order reported: the placement's matches are the order's first fills.
 */
export function coveredBy(covers: readonly string[], f: { tradeId: string | null; txHash: string | null }): "named" | "unnamed" | false {
  const trades = covers.filter((k) => k.startsWith("trade:"));
  const txs = covers.filter((k) => k.startsWith("tx:"));
  if (f.tradeId && trades.includes(`trade:${f.tradeId}`)) return "named";
  if (f.txHash && txs.includes(`tx:${f.txHash.toLowerCase()}`)) return "named";
  if (f.tradeId && trades.length) return false;
  if (f.txHash && txs.length) return false;
  return "unnamed";
}

/** A placement fill's shares and USDC after `taken` shares of it were reported by a source (USDC at its own price, rounded so what remains is never less). */
function absorb(shares: bigint, usdc: bigint, taken: bigint): [bigint, bigint] {
  if (shares <= 0n) return [0n, 0n];
  const take = taken < shares ? taken : shares;
  const left = shares - take;
  return left === 0n ? [0n, 0n] : [left, usdc - (usdc * take) / shares];
}

async function totalsOf(tx: Pick<Db, "select">, orderId: string): Promise<FillTotals> {
  const [t] = await tx
    .select({ shares: sql<string>`coalesce(sum(${fills.sharesUnits}), 0)`, usdc: sql<string>`coalesce(sum(${fills.usdcUnits}), 0)` })
    .from(fills)
    .where(and(eq(fills.orderId, orderId), ne(fills.status, "failed")));
  return { sharesUnits: BigInt(t?.shares ?? 0), usdcUnits: BigInt(t?.usdc ?? 0) };
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
