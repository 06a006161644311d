CREATE TABLE "payments" (
	"id" text PRIMARY KEY NOT NULL,
	"payer" text NOT NULL,
	"agent_id" text,
	"created_agent" boolean DEFAULT false NOT NULL,
	"x402_version" integer NOT NULL,
	"network" text NOT NULL,
	"asset" text NOT NULL,
	"pay_to" text NOT NULL,
	"amount_units" bigint NOT NULL,
	"nonce" text NOT NULL,
	"valid_after" text NOT NULL,
	"valid_before" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text NOT NULL,
	"failure_reason" text,
	"transaction" text,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"response_status" integer,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "x402_wallets" (
	"payer" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "payments_nonce_idx" ON "payments" USING btree ("network","asset","payer","nonce");--> statement-breakpoint
CREATE INDEX "payments_agent_idx" ON "payments" USING btree ("agent_id","created_at");--> statement-breakpoint
CREATE INDEX "payments_created_idx" ON "payments" USING btree ("created_at");