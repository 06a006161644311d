ALTER TABLE "orders" ALTER COLUMN "typed_data" SET DATA TYPE text;--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "decision_intent" SET DATA TYPE text;--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "history" SET DATA TYPE text;