-- The run of a request that holds an Idempotency-Key record (issue 23): each claim, and each retry that
-- resumes an interrupted record, writes a fresh token; the run's later writes of the record (its answer,
-- its release, its interruption) are conditional on it, so a run that lost its agent's lease, or was
-- paused while another instance resolved its record, changes nothing of a record that is no longer its own.
ALTER TABLE "idempotency_keys" ADD COLUMN "run" text;--> statement-breakpoint
-- The life of its instance the run belongs to (service_instances.started_at, which begins again when the
-- instance's row had lapsed: a process paused or cut off past its lease): a record in progress of an
-- instance's earlier life is a dead run's, interrupted by whichever instance finds it.
ALTER TABLE "idempotency_keys" ADD COLUMN "owner_life" timestamp with time zone;
