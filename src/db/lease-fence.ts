/**
 * The fencing side of agent leases (src/db/agent-leases.ts): a write for an agent runs only while the
 * epoch its writer holds is the lease's current one. `agent_lease_fence` (migration 0020) takes the
 * agent's shared advisory lock until the write commits, then reads the epoch: a take-over
 * (`agent_lease_take`, which holds the exclusive one from before it changes the epoch until it commits)
 * waits for the write and the new owner's load sees it; a write after the take-over sees the new epoch.
 * A stale epoch raises SQLSTATE `LEASE` and the whole statement or transaction changes nothing.
 */
import { sql } from "drizzle-orm";
import { type Fence, LeaseLostError } from "../../actors/lease-port.ts";

/** The check as a statement of a transaction (run it before the transaction's writes). */
export const fenceCheck = (fence: Fence) => sql`select agent_lease_fence(array[${fence.agentId}]::text[], array[${fence.epoch}]::bigint[])`;

/** Whether `error` (or its cause) is the fence's refusal. */
export function isStaleEpoch(error: unknown): boolean {
  for (let e = error as { code?: unknown; errno?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e.code === "LEASE" || e.errno === "LEASE") return true;
    if (typeof e.message === "string" && e.message.includes("agent lease lost")) return true;
  }
  return false;
}

/** Runs a fenced write; a refusal tells the lease (it is lost: the actor is dropped) and throws LeaseLostError. */
export async function fenced<T>(fence: Fence | undefined, write: () => Promise<T>): Promise<T> {
  if (!fence) return write();
  try {
    return await write();
  } catch (error) {
    if (!isStaleEpoch(error)) throw error;
    fence.stale?.();
    throw new LeaseLostError(fence.agentId, fence.epoch);
  }
}
