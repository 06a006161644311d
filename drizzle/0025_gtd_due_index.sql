-- The GTD expiry job's read (src/db/due-gtd-orders.ts, every second): open payload GTD orders whose
-- expiration has passed. Through orders_watch_idx it read every order at the venue (every resting
-- delegated order too) each pass; this index holds only payload GTD orders at the venue, by expiration.
-- Its predicate names `watch` (migration 0024), not `status`, so a delegated placement's status write
-- stays a HOT update.
CREATE INDEX IF NOT EXISTS "orders_gtd_due_idx" ON "orders" ((CASE WHEN "expiration" ~ '^[0-9]{1,15}$' THEN "expiration"::bigint END), "id") WHERE "watch" = 'venue' AND "mode" = 'payload' AND "order_type" = 'GTD';
