-- The GTD expiry job's read (src/db/due-gtd-orders.ts, every second): open payload GTD orders whose
-- expiration has passed. Through orders_status_deadline_idx it read every open order (every resting
-- delegated order too) each pass; this index holds only open payload GTD orders, by expiration.
CREATE INDEX IF NOT EXISTS "orders_gtd_due_idx" ON "orders" ((CASE WHEN "expiration" ~ '^[0-9]{1,15}$' THEN "expiration"::bigint END), "id") WHERE "status" = 'open' AND "mode" = 'payload' AND "order_type" = 'GTD';
