/**
 * Cluster-wide work runs in one instance at a time: the holder of the singleton lease `job:<name>`, an
 * agent lease (src/db/agent-leases.ts) under a reserved name, taken when free or lapsed and then kept
 * and renewed like an agent's. Every such job asks here, in one of two ways: `holdsSingleton` before
 * each run of a periodic job, `watchSingleton` for a job that runs continuously and is started and
 * stopped as the lease comes and goes.
 */
import type { AgentLease } from "../../actors/lease-port.ts";

/** The cluster-wide jobs. */
export type SingletonJob = "chain_source" | "user_channel" | "webhooks" | "prune_events";

type Leases = { acquire(id: string, opts: { waitMs: number; ask: false }): Promise<AgentLease | null> };

/** Whether this instance holds the job's lease now (taking it when free or lapsed; never waiting or asking). */
export async function holdsSingleton(leases: Leases, job: SingletonJob): Promise<boolean> {
  return (await leases.acquire(`job:${job}`, { waitMs: 0, ask: false }).catch(() => null)) !== null;
}

/**
 * Calls `gain` when this instance takes the job's lease and `lose` when it no longer holds it, checked
 * at once and then every `everyMs` (the lease renewal interval). Answers the function that stops the checks.
 */
export function watchSingleton(leases: Leases, job: SingletonJob, everyMs: number, on: { gain: () => void; lose: () => void }): () => void {
  let held = false;
  let stopped = false;
  const check = async () => {
    const now = await holdsSingleton(leases, job);
    if (stopped) return;
    if (now && !held) on.gain();
    if (!now && held) on.lose();
    held = now;
  };
  void check();
  const timer = setInterval(() => void check(), everyMs);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
