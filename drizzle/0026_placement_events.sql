-- A delegated placement's `order` event stores no data (docs/decisions.md, "Placement events rendered on
-- read"): its order's id, how many entries of the order's history it shows, and the venue's id and the
-- filled amount the placement wrote; the stream renders the order as the placement left it from the
-- order's row (src/db/event-log.ts), as it renders a new order's event. The placement wrote the whole
-- order view as jsonb (about 850 bytes a row), parsed by the server on every placement. Nullable columns
-- without defaults: adding them rewrites nothing.
ALTER TABLE "events" ADD COLUMN "order_step" integer;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "order_venue_id" text;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "order_filled_units" bigint;
--> statement-breakpoint
-- Every placement a HOT update (docs/decisions.md, "PostgreSQL per placement, fourth pass"): at
-- fillfactor 75 a page took three orders of ~1.5 kB and room for two new versions, so one placement in
-- two or three (those of a page's rows placed in one statement, which cannot prune one another) wrote
-- its row on another page, an entry in each of five indexes and a lock record. At 50 a page takes two
-- and room for both. New pages only: existing ones keep what they hold.
ALTER TABLE "orders" SET (fillfactor = 50);
