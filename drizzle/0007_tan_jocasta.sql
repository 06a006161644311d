DROP INDEX "orders_status_idx";--> statement-breakpoint
CREATE INDEX "orders_status_deadline_idx" ON "orders" USING btree ("status","signature_deadline");