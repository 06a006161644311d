/**
 * Open payload orders with nothing filled whose GTD expiration has passed (docs/api.md, "GTD expiry of
 * payload orders"): what the GTD expiry job (src/venues/gtd-expiry.ts) hands to the sink as `expired`.
 */
import { and, asc, eq, ne, sql } from "drizzle-orm";
import type { Db } from "./database.ts";
import { ORDER_WATCH, orders } from "./schema.ts";

export interface DueGtdOrder {
  id: string;
  agentId: string;
  orderHash: string | null;
  venueOrderId: string | null;
  /** Unix seconds. */
  expiration: number;
}

export async function dueGtdPayloadOrders(db: Db, nowSec: number, limit = 500): Promise<DueGtdOrder[]> {
  const rows = await db
    .select({ id: orders.id, agentId: orders.agentId, orderHash: orders.orderHash, venueOrderId: orders.venueOrderId, expiration: orders.expiration })
    .from(orders)
    .where(
      and(
        // The orders at the venue (orders_watch_idx).
        sql`${ORDER_WATCH} = 'venue'`,
        eq(orders.status, "open"),
        eq(orders.mode, "payload"),
        eq(orders.orderType, "GTD"),
        eq(orders.filledUnits, 0n),
        ne(orders.expiration, "0"),
        sql`${orders.expiration} ~ '^[0-9]{1,15}$' and cast(${orders.expiration} as bigint) <= ${nowSec}`,
      ),
    )
    .orderBy(asc(orders.expiration), asc(orders.id))
    .limit(limit);
  return rows.map((r) => ({ ...r, expiration: Number(r.expiration) }));
}
