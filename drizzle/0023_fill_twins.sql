ALTER TABLE "fills" ADD COLUMN "twin_of" bigint;--> statement-breakpoint
ALTER TABLE "fills" ADD COLUMN "placed_shares_units" bigint;--> statement-breakpoint
ALTER TABLE "fills" ADD COLUMN "placed_usdc_units" bigint;--> statement-breakpoint
-- A placement answer's row held only what was left of it: what the answer said is that plus the rows
-- it covers (src/domain/fill-links.ts coveredBy), so that counting again from the rows leaves it as it was.
UPDATE "fills" AS p SET "placed_shares_units" = p."shares_units" + coalesce((
  SELECT sum(r."shares_units") FROM "fills" AS r
  WHERE r."order_id" = p."order_id" AND r."covers" IS NULL AND (
    (r."trade_id" IS NOT NULL AND p."covers" @> jsonb_build_array('trade:' || r."trade_id"))
    OR (r."tx_hash" IS NOT NULL AND p."covers" @> jsonb_build_array('tx:' || lower(r."tx_hash")))
    OR NOT (
      (r."trade_id" IS NOT NULL AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(p."covers") AS c WHERE c LIKE 'trade:%'))
      OR (r."tx_hash" IS NOT NULL AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(p."covers") AS c WHERE c LIKE 'tx:%'))
    )
  )
), 0)
WHERE p."covers" IS NOT NULL;--> statement-breakpoint
UPDATE "fills" SET "placed_usdc_units" = CASE
  WHEN "shares_units" > 0 THEN ("usdc_units"::numeric * "placed_shares_units" / "shares_units")::bigint
  ELSE floor("price"::numeric * "placed_shares_units")::bigint
END
WHERE "covers" IS NOT NULL;
