CREATE TABLE "agent_leases" (
	"agent_id" text PRIMARY KEY NOT NULL,
	"owner" text,
	"epoch" bigint NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "service_instances" (
	"id" text PRIMARY KEY NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cluster_settings" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "owner" text;--> statement-breakpoint
CREATE INDEX "idempotency_in_progress_idx" ON "idempotency_keys" USING btree ("owner") WHERE "status" = 0;--> statement-breakpoint
CREATE OR REPLACE FUNCTION agent_lease_fence(agent_ids text[], epochs bigint[]) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	wanted integer;
	held integer;
BEGIN
	SELECT count(DISTINCT h.a) INTO wanted FROM unnest(agent_ids, epochs) AS h(a, e) WHERE h.e IS NOT NULL;
	IF wanted = 0 THEN
		RETURN true;
	END IF;
	SELECT count(*) INTO held FROM (
		SELECT 1 FROM agent_leases l
		WHERE (l.agent_id, l.epoch) IN (SELECT DISTINCT h.a, h.e FROM unnest(agent_ids, epochs) AS h(a, e) WHERE h.e IS NOT NULL)
		FOR SHARE OF l
	) s;
	IF held < wanted THEN
		RAISE EXCEPTION 'agent lease lost: a write fenced by a stale lease epoch' USING ERRCODE = 'LEASE';
	END IF;
	RETURN true;
END
$$;
