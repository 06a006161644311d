ALTER TABLE "agents" ADD COLUMN "heartbeat_interval_s" integer;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "heartbeat_last_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "heartbeat_deadline_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "approval_deadline" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "agents_heartbeat_deadline_idx" ON "agents" USING btree ("heartbeat_deadline_at");