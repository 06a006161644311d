ALTER TABLE "orgs" ADD COLUMN "halted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "orgs" ADD COLUMN "halt_kill_agent_ids" jsonb;
