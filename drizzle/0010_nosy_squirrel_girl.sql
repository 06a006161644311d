ALTER TABLE "events" ALTER COLUMN "data" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "order_id" text;