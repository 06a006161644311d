CREATE TABLE "fills" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"order_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"org_id" text NOT NULL,
	"token_id" text NOT NULL,
	"condition_id" text NOT NULL,
	"side" text NOT NULL,
	"fill_key" text NOT NULL,
	"trade_id" text,
	"tx_hash" text,
	"log_index" integer,
	"block_number" bigint,
	"source" text NOT NULL,
	"sources" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"price" text NOT NULL,
	"shares_units" bigint NOT NULL,
	"usdc_units" bigint NOT NULL,
	"fee_units" bigint DEFAULT 0 NOT NULL,
	"status" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "fills_order_key_idx" ON "fills" USING btree ("order_id","fill_key");--> statement-breakpoint
CREATE UNIQUE INDEX "fills_order_trade_idx" ON "fills" USING btree ("order_id","trade_id") WHERE "fills"."trade_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "fills_order_tx_idx" ON "fills" USING btree ("order_id","tx_hash","log_index") WHERE "fills"."tx_hash" is not null;--> statement-breakpoint
CREATE INDEX "fills_agent_idx" ON "fills" USING btree ("agent_id","id");--> statement-breakpoint
CREATE INDEX "orders_order_hash_idx" ON "orders" USING btree ("order_hash");--> statement-breakpoint
CREATE INDEX "orders_venue_order_id_idx" ON "orders" USING btree ("venue_order_id") WHERE "orders"."venue_order_id" is not null;
