ALTER TABLE "fills" ADD COLUMN "covers" jsonb;
