/**
 * The database side of the agent actor: loading an agent's snapshot on
 * activation, and the small writes the actor makes itself (AgentStore port).
 */
import { and, eq, inArray, max, sql } from "drizzle-orm";
import type { ActorLimits, AgentSnapshot, AgentStore, BreakerState, CredentialsInfo, TrackedOrder } from "../../../actors/ports.ts";
import type { Db } from "../../db/database.ts";
import { agents, credentials, orders } from "../../db/schema.ts";
import { DEFAULT_LIMITS, type Limits } from "../../risk/limits.ts";

const ACTIVE = ["awaiting_signature", "submitting", "open", "unknown"] as const;
/** Statuses whose whole notional counts; others count what filled (see countedNotional in the actor). */
const COUNTED = sql`case when ${orders.status} in ('awaiting_signature','submitting','open','unknown','filled','failed') then ${orders.notionalUnits} else ${orders.filledUnits} end`;

export type AgentLimits = Limits & ActorLimits;

export class DbAgentStore implements AgentStore<AgentLimits> {
  constructor(private readonly db: Db) {}

  async load(agentId: string, now = Date.now()): Promise<AgentSnapshot<AgentLimits> | null> {
    const [row] = await this.db
      .select({ agent: agents, creds: { scopes: credentials.scopes, keyHint: credentials.keyHint, createdAt: credentials.createdAt } })
      .from(agents)
      .leftJoin(credentials, eq(credentials.agentId, agents.id))
      .where(eq(agents.id, agentId));
    if (!row) return null;
    const today = new Date(now).toISOString().slice(0, 10);
    const [active, daily, exposure, last] = await Promise.all([
      this.db
        .select()
        .from(orders)
        .where(and(eq(orders.agentId, agentId), inArray(orders.status, [...ACTIVE]))),
      this.db
        .select({ day: orders.tradingDay, units: sql<string>`coalesce(sum(${COUNTED}), 0)` })
        .from(orders)
        .where(and(eq(orders.agentId, agentId), eq(orders.tradingDay, today)))
        .groupBy(orders.tradingDay),
      this.db
        .select({
          condition: orders.conditionId,
          units: sql<string>`coalesce(sum(case when ${orders.side} = 'buy' then ${COUNTED} else -${orders.filledUnits} end), 0)`,
        })
        .from(orders)
        .where(eq(orders.agentId, agentId))
        .groupBy(orders.conditionId),
      this.db.select({ at: max(orders.createdAt) }).from(orders).where(eq(orders.agentId, agentId)),
    ]);
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
        createdAt: a.createdAt,
      },
      limits: { ...DEFAULT_LIMITS, ...(a.limits as Partial<Limits>) } as AgentLimits,
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
          filledUnits: o.filledUnits,
        }),
      ),
      dailyUsedUnits: Object.fromEntries(daily.map((d) => [d.day, BigInt(d.units)])),
      exposureUnits: Object.fromEntries(exposure.map((e) => [e.condition, BigInt(e.units)])),
      lastOrderTimestampMs: last[0]?.at ? new Date(last[0].at).getTime() : 0,
    };
  }

  async saveLimits(agentId: string, limits: AgentLimits): Promise<void> {
    await this.db.update(agents).set({ limits: { ...limits }, updatedAt: new Date() }).where(eq(agents.id, agentId));
  }

  async saveBreaker(agentId: string, breaker: BreakerState, venueErrorStreak: number): Promise<void> {
    await this.db
      .update(agents)
      .set({ breakerState: breaker.state, breakerReason: breaker.reason, breakerSince: breaker.since, venueErrorStreak, updatedAt: new Date() })
      .where(eq(agents.id, agentId));
  }

  async saveCredentials(agentId: string, sealed: Uint8Array, info: CredentialsInfo): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx
        .insert(credentials)
        .values({ agentId, ciphertext: sealed, scopes: info.scopes, keyHint: info.keyHint, createdAt: info.createdAt })
        .onConflictDoUpdate({
          target: credentials.agentId,
          set: { ciphertext: sealed, scopes: info.scopes, keyHint: info.keyHint, createdAt: info.createdAt },
        });
      await tx.update(agents).set({ mode: "delegated", updatedAt: new Date() }).where(eq(agents.id, agentId));
    });
  }

  async deleteCredentials(agentId: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const gone = await tx.delete(credentials).where(eq(credentials.agentId, agentId)).returning({ id: credentials.agentId });
      await tx.update(agents).set({ mode: "payload", updatedAt: new Date() }).where(eq(agents.id, agentId));
      return gone.length > 0;
    });
  }

  /** The sealed credential bytes, read only for the moment of a venue call. */
  async sealedCredentials(agentId: string): Promise<Uint8Array | null> {
    const [row] = await this.db.select({ c: credentials.ciphertext }).from(credentials).where(eq(credentials.agentId, agentId));
    return row?.c ?? null;
  }
}
