/**
 * The database side of the agent actor: loading an agent's snapshot on
 * activation, and the small writes the actor makes itself (AgentStore port).
 */
import { and, asc, eq, gt, inArray, lt, max, sql } from "drizzle-orm";
import { positionsFrom } from "../../domain/positions.ts";
import { orderSharesUnits } from "../../domain/order-lifecycle.ts";
import { ACTIVE_STATUS_LIST } from "../../domain/order-status.ts";
import {
  type ActorLimits,
  type AgentSnapshot,
  type AgentStore,
  type BreakerState,
  type CredentialsInfo,
  type HeartbeatState,
  type HeldPosition,
  type TrackedOrder,
} from "../../../actors/ports.ts";
import type { Db, QueryStatement } from "../../db/database.ts";
import { COUNTED_FILL } from "../../db/fill-store.ts";
import { type Clock, systemClock } from "../../domain/clock.ts";
import { agents, credentials, events, fills, orders } from "../../db/schema.ts";
import { DEFAULT_LIMITS, type Limits } from "../../risk/limits.ts";
import type { Fence } from "../../../actors/lease-port.ts";
import { fenceCheck, fenced } from "../../db/lease-fence.ts";

/** Statuses whose whole notional counts; others count what filled (see countedNotional in the actor). */
export const COUNTED = sql`case when ${orders.status} in ('pending_approval','awaiting_signature','submitting','open','unknown','filled','failed') then ${orders.notionalUnits} else ${orders.filledUnits} end`;

/** What an order's counted fills paid or received (USDC units): they are in the positions. */
const FILLS_USDC = sql`coalesce((select sum(${fills.usdcUnits}) from ${fills} where ${fills.orderId} = ${orders.id} and ${fills.status} <> 'failed' and ${fills.twinOf} is null), 0)`;

/**
 * An order's share of its market's exposure besides the positions, as the actor counts it
 * (actors/order-counts.ts exposureOf): a buy reserved, open, unresolved or failed counts its notional
 * less what its fills paid; one that ended counts what it is known to have filled beyond its fills (a
 * `filled` one at least its notional); a sell counts nothing.
 */
export const ORDER_EXPOSURE = sql`case when ${orders.side} <> 'buy' then 0
  when ${orders.status} in ('pending_approval','awaiting_signature','submitting','open','unknown','failed') then greatest(${orders.notionalUnits} - ${FILLS_USDC}, 0)
  when ${orders.status} = 'filled' then greatest(greatest(${orders.notionalUnits}, ${orders.filledUnits}) - ${FILLS_USDC}, 0)
  else greatest(${orders.filledUnits} - ${FILLS_USDC}, 0) end`;

export type AgentLimits = Limits & ActorLimits;

export class DbAgentStore implements AgentStore<AgentLimits> {
  /** The agent lease this view's writes are fenced on (`fenced`); none: unfenced. */
  protected fence: Fence | undefined;

  /** This store with every write fenced on `fence` (the lease the agent's actor runs under). */
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

  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
    /** Called after events were committed (the event log's wake-up). */
    private readonly onEvents: () => void = () => {},
    /** The database's prepared-statement runner (Database.query), for the credential read of every delegated placement. */
    private readonly query?: QueryStatement,
  ) {}

  async load(agentId: string, now = this.clock.now()): Promise<AgentSnapshot<AgentLimits> | null> {
    const [row] = await this.db
      .select({ agent: agents, creds: { scopes: credentials.scopes, keyHint: credentials.keyHint, createdAt: credentials.createdAt } })
      .from(agents)
      .leftJoin(credentials, eq(credentials.agentId, agents.id))
      .where(eq(agents.id, agentId));
    if (!row) return null;
    const today = new Date(now).toISOString().slice(0, 10);
    const limits = { ...DEFAULT_LIMITS, ...(row.agent.limits as Partial<Limits>) } as AgentLimits;
    // The runaway guards remember approvals for a minute, or for the duplicate window if longer.
    const rememberMs = Math.max(60_000, limits.duplicate_window_s * 1000);
    const [active, daily, exposure, last, recent, held] = await Promise.all([
      this.db
        .select()
        .from(orders)
        .where(and(eq(orders.agentId, agentId), inArray(orders.status, [...ACTIVE_STATUS_LIST]))),
      this.db
        .select({ day: orders.tradingDay, units: sql<string>`coalesce(sum(${COUNTED}), 0)` })
        .from(orders)
        .where(and(eq(orders.agentId, agentId), eq(orders.tradingDay, today)))
        .groupBy(orders.tradingDay),
      this.db
        .select({
          condition: orders.conditionId,
          units: sql<string>`coalesce(sum(${ORDER_EXPOSURE}), 0)`,
        })
        .from(orders)
        .where(eq(orders.agentId, agentId))
        .groupBy(orders.conditionId),
      this.db.select({ at: max(orders.createdAt) }).from(orders).where(eq(orders.agentId, agentId)),
      this.db
        .select({ at: orders.createdAt, marketId: orders.marketId, side: orders.side, sizeUnits: orders.sizeUnits, price: orders.price })
        .from(orders)
        .where(and(eq(orders.agentId, agentId), gt(orders.createdAt, new Date(now - rememberMs)))),
      this.db
        .select({
          tokenId: fills.tokenId,
          conditionId: fills.conditionId,
          order: fills.orderId,
          side: fills.side,
          sharesUnits: fills.sharesUnits,
          usdcUnits: fills.usdcUnits,
        })
        .from(fills)
        .where(and(eq(fills.agentId, agentId), COUNTED_FILL))
        .orderBy(asc(fills.at), asc(fills.id)),
    ]);
    const heldShares: Record<string, bigint> = {};
    const filledShares = new Map<string, bigint>();
    const filledUsdc = new Map<string, bigint>();
    const conditionOf = new Map<string, string>();
    for (const h of held) {
      heldShares[h.tokenId] = (heldShares[h.tokenId] ?? 0n) + (h.side === "buy" ? h.sharesUnits : -h.sharesUnits);
      filledShares.set(h.order, (filledShares.get(h.order) ?? 0n) + h.sharesUnits);
      filledUsdc.set(h.order, (filledUsdc.get(h.order) ?? 0n) + h.usdcUnits);
      conditionOf.set(h.tokenId, h.conditionId);
    }
    const positions: Record<string, HeldPosition> = {};
    for (const p of positionsFrom(held)) {
      if (p.sharesUnits !== 0n || p.costUnits !== 0n) positions[p.tokenId] = { conditionId: conditionOf.get(p.tokenId) ?? "", sharesUnits: p.sharesUnits, costUnits: p.costUnits };
    }
    const a = row.agent;
    return {
      profile: {
        id: a.id,
        orgId: a.orgId,
        name: a.name,
        mode: a.mode,
        walletAddress: a.walletAddress,
        signerAddress: a.signerAddress,
        signatureType: a.signatureType,
        ownerAddress: a.ownerAddress ?? null,
        createdAt: a.createdAt,
      },
      limits,
      breaker: { state: a.breakerState, reason: a.breakerReason, since: a.breakerSince },
      venueErrorStreak: a.venueErrorStreak,
      credentials: row.creds?.keyHint ? { scopes: row.creds.scopes, keyHint: row.creds.keyHint, createdAt: row.creds.createdAt } : null,
      activeOrders: active.map(
        (o): TrackedOrder => ({
          id: o.id,
          mode: o.mode,
          marketId: o.marketId,
          conditionId: o.conditionId,
          side: o.side,
          notionalUnits: o.notionalUnits,
          status: o.status,
          tradingDay: o.tradingDay,
          venueOrderId: o.venueOrderId,
          signatureDeadline: o.signatureDeadline,
          approvalDeadline: o.approvalDeadline,
          filledUnits: o.filledUnits,
          tokenId: o.marketId,
          sharesUnits: o.typedData ? orderSharesUnits(o.typedData.message) : undefined,
          filledSharesUnits: filledShares.get(o.id) ?? 0n,
          fillsUsdcUnits: filledUsdc.get(o.id) ?? 0n,
        }),
      ),
      heldShares,
      positions,
      dailyUsedUnits: Object.fromEntries(daily.map((d) => [d.day, BigInt(d.units)])),
      exposureUnits: Object.fromEntries(exposure.map((e) => [e.condition, BigInt(e.units)])),
      lastOrderTimestampMs: last[0]?.at ? new Date(last[0].at).getTime() : 0,
      heartbeat:
        a.heartbeatIntervalS !== null && a.heartbeatLastAt && a.heartbeatDeadlineAt
          ? { intervalS: a.heartbeatIntervalS, lastAt: a.heartbeatLastAt, deadlineAt: a.heartbeatDeadlineAt }
          : null,
      // The same key the actor builds for an intent (market, side, size units, price text).
      recentApprovals: recent
        .map((r) => ({ at: r.at.getTime(), fingerprint: `${r.marketId}|${r.side}|${r.sizeUnits}|${r.price}` }))
        .sort((x, y) => x.at - y.at),
    };
  }

  async saveLimits(agentId: string, limits: AgentLimits): Promise<void> {
    await this.tx((db) => db.update(agents).set({ limits: { ...limits }, updatedAt: new Date(this.clock.now()) }).where(eq(agents.id, agentId)));
  }

  /** Saves the breaker; a trip or a reset (state or reason changed) is a `breaker` event in the same transaction. */
  async saveBreaker(agentId: string, breaker: BreakerState, venueErrorStreak: number): Promise<void> {
    const now = new Date(this.clock.now());
    const changed = await this.tx(async (tx) => {
      const [before] = await tx
        .select({ orgId: agents.orgId, state: agents.breakerState, reason: agents.breakerReason })
        .from(agents)
        .where(eq(agents.id, agentId))
        .for("update");
      await tx
        .update(agents)
        .set({ breakerState: breaker.state, breakerReason: breaker.reason, breakerSince: breaker.since, venueErrorStreak, updatedAt: now })
        .where(eq(agents.id, agentId));
      if (!before || (before.state === breaker.state && before.reason === breaker.reason)) return false;
      await tx.insert(events).values({
        orgId: before.orgId,
        agentId,
        type: "breaker",
        data: {
          state: breaker.state,
          reason: breaker.reason,
          since: breaker.since?.toISOString() ?? null,
          previous: { state: before.state, reason: before.reason },
        },
        createdAt: now,
      });
      return true;
    });
    if (changed) this.onEvents();
  }

  async saveHeartbeat(agentId: string, heartbeat: HeartbeatState | null): Promise<void> {
    await this.tx((db) =>
      db
        .update(agents)
        .set({
          heartbeatIntervalS: heartbeat?.intervalS ?? null,
          heartbeatLastAt: heartbeat?.lastAt ?? null,
          heartbeatDeadlineAt: heartbeat?.deadlineAt ?? null,
          updatedAt: new Date(this.clock.now()),
        })
        .where(eq(agents.id, agentId)),
    );
  }

  /** Agents whose heartbeat deadline has passed (`now` > deadline), for the sweep. */
  async overdueHeartbeats(now: Date, limit = 500): Promise<string[]> {
    const rows = await this.db
      .select({ id: agents.id })
      .from(agents)
      .where(lt(agents.heartbeatDeadlineAt, now))
      .limit(limit);
    return rows.map((r) => r.id);
  }

  async saveCredentials(agentId: string, sealed: Uint8Array, info: CredentialsInfo): Promise<void> {
    await this.tx(async (tx) => {
      await tx
        .insert(credentials)
        .values({ agentId, ciphertext: sealed, scopes: info.scopes, keyHint: info.keyHint, createdAt: info.createdAt })
        .onConflictDoUpdate({
          target: credentials.agentId,
          set: { ciphertext: sealed, scopes: info.scopes, keyHint: info.keyHint, createdAt: info.createdAt },
        });
      await tx.update(agents).set({ mode: "delegated", updatedAt: new Date(this.clock.now()) }).where(eq(agents.id, agentId));
    });
  }

  /**
   * Deletes the sealed credentials and returns the agent to payload mode (DELETE /creds, kill switch).
   * After the commit, a best-effort `VACUUM credentials` (see vacuumCredentials) removes the deleted
   * row's dead tuple so its ciphertext does not linger in the table; it never throws and is awaited
   * for at most VACUUM_WAIT_MS, so a slow VACUUM cannot hold up a kill.
   */
  async deleteCredentials(agentId: string): Promise<boolean> {
    const deleted = await this.tx(async (tx) => {
      const gone = await tx.delete(credentials).where(eq(credentials.agentId, agentId)).returning({ id: credentials.agentId });
      await tx.update(agents).set({ mode: "payload", updatedAt: new Date(this.clock.now()) }).where(eq(agents.id, agentId));
      return gone.length > 0;
    });
    if (deleted) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([vacuumCredentials(this.db), new Promise<void>((r) => (timer = setTimeout(r, VACUUM_WAIT_MS)))]);
      clearTimeout(timer);
    }
    return deleted;
  }

  /**
   * The sealed credential bytes, read only for the moment of a venue call (from the database every
   * time: it is their one source). A prepared statement when the database gives one (Database.query).
   */
  async sealedCredentials(agentId: string): Promise<Uint8Array | null> {
    if (this.query) {
      const [row] = await this.query(SEALED_CREDENTIALS, [agentId]);
      return row?.[0] ? new Uint8Array(Buffer.from(row[0], "hex")) : null;
    }
    const [row] = await this.db.select({ c: credentials.ciphertext }).from(credentials).where(eq(credentials.agentId, agentId));
    return row?.c ?? null;
  }
}

/** An agent's sealed credentials as hex text (Database.query answers text). */
const SEALED_CREDENTIALS = "select encode(ciphertext, 'hex') from credentials where agent_id = $1::text";

/** How long deleteCredentials waits for its VACUUM; the VACUUM itself carries on in the background. */
const VACUUM_WAIT_MS = 250;
const vacuums = new WeakMap<Db, { running: Promise<void> | null; queued: Promise<void> | null }>();

/**
 * `VACUUM credentials`, best effort: never rejects. It runs as a statement of its own, outside any
 * transaction (VACUUM refuses to run inside one), which works on PGlite and on postgres-js alike.
 * Requests are coalesced per database: at most one VACUUM runs and at most one more is queued behind
 * it (one that started before a deletion committed may not see that row as dead yet), so a kill of
 * many agents at once does not queue one VACUUM per agent on the table's lock.
 *
 * What it does not do: VACUUM frees dead tuples for reuse but PostgreSQL does not zero the freed
 * page space, and the WAL (and any base backup) still holds the row as written, until those are
 * overwritten or recycled. The ciphertext is a sealed box that only this service's secret key opens.
 */
function vacuumCredentials(db: Db): Promise<void> {
  let state = vacuums.get(db);
  if (!state) {
    state = { running: null, queued: null };
    vacuums.set(db, state);
  }
  const s = state;
  const start = (): Promise<void> => {
    const run: Promise<void> = db
      .execute(sql`vacuum credentials`)
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        if (s.running === run) s.running = null;
      });
    s.running = run;
    return run;
  };
  if (!s.running) return start();
  s.queued ??= s.running.then(() => {
    s.queued = null;
    return start();
  });
  return s.queued;
}
