/**
 * Risk decisions as an API user sees them: the stored approvals and rejections of the caller's
 * organization (newest first), and a summary for charts (intents per hour, daily volume per agent).
 */
import { type Clock, systemClock } from "../../domain/clock.ts";
import { and, desc, eq, gte, lt, or, sql } from "drizzle-orm";
import type { Db } from "../../db/database.ts";
import { orders, riskDecisions } from "../../db/schema.ts";
import type { Caller } from "../../http/caller.ts";
import { decodeCursor, pageOf } from "../../http/pagination.ts";
import { unitsToNumber } from "../../domain/units.ts";
import { COUNTED } from "../agents/agent-store.ts";
import type { DecisionModel, ListDecisionsQuery, SummaryModel, SummaryQuery } from "./model.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export class DecisionService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
  ) {}

  async list(caller: Caller, query: ListDecisionsQuery): Promise<{ data: DecisionModel[]; next_cursor: string | null }> {
    const limit = query.limit ?? 50;
    const cursor = decodeCursor(query.cursor);
    const rows = await this.db
      .select()
      .from(riskDecisions)
      .where(
        and(
          eq(riskDecisions.orgId, caller.orgId),
          agentFilter(caller, query.agent_id),
          query.approved === undefined ? undefined : eq(riskDecisions.approved, query.approved),
          cursor
            ? or(lt(riskDecisions.createdAt, cursor.at), and(eq(riskDecisions.createdAt, cursor.at), lt(riskDecisions.id, cursor.id)))
            : undefined,
        ),
      )
      .orderBy(desc(riskDecisions.createdAt), desc(riskDecisions.id))
      .limit(limit + 1);
    return pageOf(rows, limit, (r) => ({
      id: r.id,
      agent_id: r.agentId,
      approved: r.approved,
      intent: r.intent,
      failures: r.failures as DecisionModel["failures"],
      checks: r.checks as DecisionModel["checks"],
      order_id: r.orderId,
      created_at: r.createdAt.toISOString(),
    }));
  }

  async summary(caller: Caller, query: SummaryQuery, now = this.clock.now()): Promise<SummaryModel> {
    const hours = query.hours ?? 24;
    const days = query.days ?? 7;
    const to = new Date(now);
    const from = new Date(Math.floor(now / HOUR_MS) * HOUR_MS - (hours - 1) * HOUR_MS);
    const firstDay = new Date(Math.floor(now / DAY_MS) * DAY_MS - (days - 1) * DAY_MS).toISOString().slice(0, 10);
    const agentId = caller.agentId ?? query.agent_id;
    const hour = sql<string>`to_char(date_trunc('hour', ${riskDecisions.createdAt} at time zone 'UTC'), 'YYYY-MM-DD"T"HH24:00:00.000"Z"')`;
    const [counts, volume] = await Promise.all([
      this.db
        .select({ at: hour, approved: riskDecisions.approved, n: sql<string>`count(*)` })
        .from(riskDecisions)
        .where(and(eq(riskDecisions.orgId, caller.orgId), agentFilter(caller, query.agent_id), gte(riskDecisions.createdAt, from)))
        .groupBy(hour, riskDecisions.approved),
      this.db
        .select({ agentId: orders.agentId, day: orders.tradingDay, units: sql<string>`coalesce(sum(${COUNTED}), 0)` })
        .from(orders)
        .where(and(eq(orders.orgId, caller.orgId), agentId ? eq(orders.agentId, agentId) : undefined, gte(orders.tradingDay, firstDay)))
        .groupBy(orders.agentId, orders.tradingDay)
        .orderBy(orders.tradingDay, orders.agentId),
    ]);
    const buckets = new Map<string, { at: string; approved: number; rejected: number }>();
    for (let i = 0; i < hours; i++) {
      const at = new Date(from.getTime() + i * HOUR_MS).toISOString();
      buckets.set(at, { at, approved: 0, rejected: 0 });
    }
    for (const c of counts) {
      const bucket = buckets.get(c.at);
      if (bucket) bucket[c.approved ? "approved" : "rejected"] += Number(c.n);
    }
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      intents: [...buckets.values()],
      daily_volume: volume
        .map((v) => ({ agent_id: v.agentId, day: v.day, used_usdc: unitsToNumber(BigInt(v.units)) }))
        .filter((v) => v.used_usdc > 0),
    };
  }
}

/** An agent-scoped key sees its own agent only, whatever it asks for. */
function agentFilter(caller: Caller, agentId: string | undefined) {
  if (caller.agentId) return agentId && agentId !== caller.agentId ? sql`false` : eq(riskDecisions.agentId, caller.agentId);
  return agentId ? eq(riskDecisions.agentId, agentId) : undefined;
}
