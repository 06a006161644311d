ALTER TABLE "kills" ADD COLUMN "breaker_reason" text;--> statement-breakpoint
CREATE INDEX "kills_unfinished_idx" ON "kills" USING btree ("started_at") WHERE "kills"."completed_at" is null;