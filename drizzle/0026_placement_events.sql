-- A delegated placement's `order` event stores no data (docs/decisions.md, "Placement events rendered on
-- read"): its order's id, how many entries of the order's history it shows, and the venue's id and the
-- filled amount the placement wrote; the stream renders the order as the placement left it from the
-- order's row (src/db/event-log.ts), as it renders a new order's event. The placement wrote the whole
-- order view as jsonb (about 850 bytes a row), parsed by the server on every placement. Nullable columns
-- without defaults: adding them rewrites nothing.
ALTER TABLE "events" ADD COLUMN "order_step" integer;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "order_venue_id" text;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "order_filled_units" bigint;
