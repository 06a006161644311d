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

/**
 * Checks every `everyMs` that the INSTANCE_ID lock is still this process's (Database.checkLifeLocks):
 * a session that ended took the lock with it, and a second process under the same id could then
 * start. Retaken at once when it is free; `onLost` when another process holds it (the caller stops
 * this one: two processes under one id would each take the other's leases for their own).
 * Answers the function that stops the checks.
 */
export function watchInstanceId(
  database: Database,
  everyMs: number,
  on: { retaken: () => void; lost: () => void; unreachable?: () => void },
): () => void {
  if (!database.checkLifeLocks) return () => {};
  let checking = false;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    void database
      .checkLifeLocks!()
      .then((state) => {
        if (state === "retaken") on.retaken();
        else if (state === "lost") on.lost();
        else if (state === "unreachable") on.unreachable?.();
      })
      .finally(() => {
        checking = false;
      });
  }, everyMs);
  (timer as { unref?: () => void }).unref?.();
  return () => clearInterval(timer);
}
