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
	held integer;
BEGIN
	-- agent_ids and epochs: the (agent, epoch) pairs a write is made under, each once (one agent may come
	-- with two epochs, its old actor's and its new one's: the stale one must fail).
	IF coalesce(cardinality(agent_ids), 0) = 0 THEN
		RETURN true;
	END IF;
	-- Each agent's shared advisory lock, in one order (no deadlock between batches): a take-over holds
	-- the agent's exclusive one from before it changes the epoch until it commits (agent_lease_take).
	PERFORM pg_advisory_xact_lock_shared(7214993, s.k) FROM (SELECT hashtext(a) AS k FROM unnest(agent_ids) AS a ORDER BY 1) s;
	-- A fresh snapshot (a volatile function's statement): a take-over that committed before the lock
	-- was granted is seen.
	SELECT count(*) INTO held FROM agent_leases l JOIN unnest(agent_ids, epochs) AS h(a, e) ON l.agent_id = h.a AND l.epoch = h.e;
	IF held < cardinality(agent_ids) THEN
		RAISE EXCEPTION 'agent lease lost: a write fenced by a stale lease epoch' USING ERRCODE = 'LEASE';
	END IF;
	RETURN true;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agent_lease_take(agent text, me text, ttl_ms integer)
	RETURNS TABLE (epoch bigint, owner text, lapsed boolean, remaining_ms integer) LANGUAGE plpgsql AS $$
DECLARE
	prev_owner text;
	prev_expires timestamptz;
	taken bigint;
BEGIN
	SELECT l.owner, l.expires_at INTO prev_owner, prev_expires FROM agent_leases l WHERE l.agent_id = agent;
	IF FOUND AND prev_owner IS NOT NULL AND prev_owner <> me AND prev_expires >= clock_timestamp() THEN
		-- A live owner: not taken (nothing locked, nothing waited for).
		RETURN QUERY SELECT NULL::bigint, prev_owner, false, greatest(0, extract(epoch from (prev_expires - clock_timestamp())) * 1000)::integer;
		RETURN;
	END IF;
	-- The agent's exclusive advisory lock until this transaction commits: fenced writes under way finish
	-- first (and are seen by the new owner's load); later ones see the new epoch.
	PERFORM pg_advisory_xact_lock(7214993, hashtext(agent));
	INSERT INTO agent_leases AS l (agent_id, owner, epoch, expires_at)
		VALUES (agent, me, 1, clock_timestamp() + ttl_ms * interval '1 millisecond')
		ON CONFLICT (agent_id) DO UPDATE SET owner = excluded.owner,
			-- Taken again by its own owner (a renewal that came late: a stalled event loop), nobody else
			-- held it in between: the same epoch, so the owner's writes under way stay valid.
			epoch = CASE WHEN l.owner = excluded.owner THEN l.epoch ELSE l.epoch + 1 END,
			expires_at = excluded.expires_at
		WHERE l.owner IS NULL OR l.owner = excluded.owner OR l.expires_at < clock_timestamp()
		RETURNING l.epoch INTO taken;
	IF taken IS NULL THEN
		-- Renewed by its owner meanwhile.
		SELECT l.owner, l.expires_at INTO prev_owner, prev_expires FROM agent_leases l WHERE l.agent_id = agent;
		RETURN QUERY SELECT NULL::bigint, prev_owner, false, greatest(0, extract(epoch from (prev_expires - clock_timestamp())) * 1000)::integer;
		RETURN;
	END IF;
	RETURN QUERY SELECT taken, prev_owner, coalesce(prev_expires < clock_timestamp(), false), 0;
END
$$;
