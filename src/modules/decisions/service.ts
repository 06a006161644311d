/**
 * Risk decisions as an API user sees them: the stored approvals and rejections of the caller's
 * organization (newest first), and a summary for charts (intents per hour, daily volume per agent).
 *
 * Approvals are kept on their order rows (orders.decision_id, orders.decision_intent; see schema.ts),
 * rejections (and approvals stored before that column) as rows of risk_decisions: every read here
 * merges the two.
 */
import { type Clock, systemClock } from "../../domain/clock.ts";
import { and, desc, eq, gte, isNotNull, lt, or, sql } from "drizzle-orm";
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
    const [stored, approvals] = await Promise.all([
      this.db
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
        .limit(limit + 1),
      query.approved === false
        ? []
        : this.db
            .select({ id: orders.decisionId, agentId: orders.agentId, intent: orders.decisionIntent, orderId: orders.id, createdAt: orders.createdAt })
            .from(orders)
            .where(
              and(
                eq(orders.orgId, caller.orgId),
                orderAgentFilter(caller, query.agent_id),
                isNotNull(orders.decisionIntent),
                cursor
                  ? or(lt(orders.createdAt, cursor.at), and(eq(orders.createdAt, cursor.at), lt(orders.decisionId, cursor.id)))
                  : undefined,
              ),
            )
            .orderBy(desc(orders.createdAt), desc(orders.decisionId))
            .limit(limit + 1),
    ]);
    const rows: DecisionRow[] = stored.map((r) => ({
      id: r.id,
      agentId: r.agentId,
      approved: r.approved,
      intent: r.intent,
      failures: r.failures as DecisionModel["failures"],
      checks: r.checks as DecisionModel["checks"],
      orderId: r.orderId,
      createdAt: r.createdAt,
    }));
    for (const a of approvals) {
      rows.push({ id: a.id!, agentId: a.agentId, approved: true, intent: a.intent!, failures: [], checks: [], orderId: a.orderId, createdAt: a.createdAt });
    }
    // Newest first, as one keyset over (created_at, id) (ids are text: compared as PostgreSQL's C-like order of these ASCII ids).
    rows.sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : x.id > y.id ? -1 : 0));
    return pageOf(rows.slice(0, limit + 1), limit, (r) => ({
      id: r.id,
      agent_id: r.agentId,
      approved: r.approved,
      intent: r.intent,
      failures: r.failures,
      checks: r.checks,
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
    const orderHour = sql<string>`to_char(date_trunc('hour', ${orders.createdAt} at time zone 'UTC'), 'YYYY-MM-DD"T"HH24:00:00.000"Z"')`;
    const [counts, approvals, volume] = await Promise.all([
      this.db
        .select({ at: hour, approved: riskDecisions.approved, n: sql<string>`count(*)` })
        .from(riskDecisions)
        .where(and(eq(riskDecisions.orgId, caller.orgId), agentFilter(caller, query.agent_id), gte(riskDecisions.createdAt, from)))
        .groupBy(hour, riskDecisions.approved),
      this.db
        .select({ at: orderHour, n: sql<string>`count(*)` })
        .from(orders)
        .where(and(eq(orders.orgId, caller.orgId), orderAgentFilter(caller, query.agent_id), isNotNull(orders.decisionIntent), gte(orders.createdAt, from)))
        .groupBy(orderHour),
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
    for (const a of approvals) {
      const bucket = buckets.get(a.at);
      if (bucket) bucket.approved += Number(a.n);
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

type DecisionRow = {
  id: string;
  agentId: string;
  approved: boolean;
  intent: Record<string, unknown>;
  failures: DecisionModel["failures"];
  checks: DecisionModel["checks"];
  orderId: string | null;
  createdAt: Date;
};

/** The same filter over the approvals kept on order rows. */
function orderAgentFilter(caller: Caller, agentId: string | undefined) {
  if (caller.agentId) return agentId && agentId !== caller.agentId ? sql`false` : eq(orders.agentId, caller.agentId);
  return agentId ? eq(orders.agentId, agentId) : undefined;
}

/** An agent-scoped key sees its own agent only, whatever it asks for. */
function agentFilter(caller: Caller, agentId: string | undefined) {
  if (caller.agentId) return agentId && agentId !== caller.agentId ? sql`false` : eq(riskDecisions.agentId, caller.agentId);
  return agentId ? eq(riskDecisions.agentId, agentId) : undefined;
}
