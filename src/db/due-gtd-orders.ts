/**
 * Open payload orders with nothing filled whose GTD expiration has passed (docs/api.md, "GTD expiry of
 * payload orders"): what the GTD expiry job (src/venues/gtd-expiry.ts) hands to the sink as `expired`.
 *
 * Read through orders_gtd_due_idx (migration 0025), whose predicate holds only payload GTD orders at
 * the venue (`watch`, migration 0024): the conditions on watch, mode and order type are written as
 * literals, so that every plan of the statement (a prepared statement's generic plan too) can use that
 * partial index.
 */
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "./database.ts";

export interface DueGtdOrder {
  id: string;
  agentId: string;
  orderHash: string | null;
  venueOrderId: string | null;
  /** Unix seconds. */
  expiration: number;
}

const EXPIRATION = sql.raw(`(CASE WHEN "expiration" ~ '^[0-9]{1,15}$' THEN "expiration"::bigint END)`);

/** The statement, with its two parameters (tests read its plan). */
export function dueGtdStatement(nowSec: SQL, limit: SQL): SQL {
  return sql`select "id", "agent_id", "order_hash", "venue_order_id", "expiration" from "orders"
    where "watch" = 'venue' and "mode" = 'payload' and "order_type" = 'GTD'
      and ${EXPIRATION} <= ${nowSec} and "status" = 'open' and "filled_units" = 0
    order by ${EXPIRATION}, "id"
    limit ${limit}`;
}

export async function dueGtdPayloadOrders(db: Db, nowSec: number, limit = 500): Promise<DueGtdOrder[]> {
  const rows = (await db.execute(dueGtdStatement(sql`${nowSec}`, sql`${limit}`))) as unknown as { rows?: Record<string, unknown>[] } | Record<string, unknown>[];
  const list = Array.isArray(rows) ? rows : (rows.rows ?? []);
  return list.map((r) => ({
    id: String(r.id),
    agentId: String(r.agent_id),
    orderHash: (r.order_hash as string | null) ?? null,
    venueOrderId: (r.venue_order_id as string | null) ?? null,
    expiration: Number(r.expiration),
  }));
}
