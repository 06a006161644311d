/**
 * Risk decisions as stored, in the shape of a risk_decisions row: rejections are rows of that
 * table, approvals are kept on their order rows (orders.decision_id and decision_intent; the
 * decision's time is the order's, its failures and checks are empty, its order is the row).
 */
import { and, eq, isNotNull, type SQL } from "drizzle-orm";
import type { Db } from "../../src/db/database.ts";
import { orders, riskDecisions } from "../../src/db/schema.ts";

export type StoredDecision = typeof riskDecisions.$inferSelect;

export async function storedDecisions(db: Db, by: { id?: string; agentId?: string }): Promise<StoredDecision[]> {
  const table = await db
    .select()
    .from(riskDecisions)
    .where(and(by.id ? eq(riskDecisions.id, by.id) : undefined, by.agentId ? eq(riskDecisions.agentId, by.agentId) : undefined) as SQL);
  const onOrders = await db
    .select()
    .from(orders)
    .where(and(isNotNull(orders.decisionIntent), by.id ? eq(orders.decisionId, by.id) : undefined, by.agentId ? eq(orders.agentId, by.agentId) : undefined));
  return [
    ...table,
    ...onOrders.map((o) => ({
      id: o.decisionId!,
      orgId: o.orgId,
      agentId: o.agentId,
      approved: true,
      intent: o.decisionIntent!,
      failures: [],
      checks: [],
      orderId: o.id,
      createdAt: o.createdAt,
    })),
  ];
}
