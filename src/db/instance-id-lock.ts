/**
 * One process per INSTANCE_ID on a database: the instance id names the owner of agent leases, of
 * Idempotency-Key records and of the `service_instances` row, so two processes under one id would
 * each take the other's leases for their own (docs/decisions.md "Two processes with one
 * INSTANCE_ID"). On PostgreSQL the process holds a session-level advisory lock named after its id
 * for its whole life (Database.lockForLife); a second process under the same id does not get it.
 * PGlite is one process by its data-directory lock.
 */
import type { Database } from "./database.ts";

/** False when another live process on the database runs under `instanceId`. */
export async function claimInstanceId(database: Database, instanceId: string): Promise<boolean> {
  if (!database.lockForLife) return true;
  return database.lockForLife(`brokerage instance ${instanceId}`);
}
