/**
 * Background work of a running service: expiring unsigned orders past their
 * signature deadline and orders pending approval past their approval deadline,
 * pruning the event log past EVENTS_RETENTION_H, reconciling orders whose venue
 * state is unsettled, and killing agents whose heartbeat deadline passed (the
 * last two once at start-up, then periodically); and, once at start-up, running
 * again every kill a crash interrupted (its `kills` row not completed). Each job
 * runs alone (never two overlapping runs) and logs, never throws.
 */
import type { Services } from "./app.ts";

export interface Jobs {
  /** Resolves when the start-up reconciliation, the interrupted kills and the heartbeat sweep have finished. */
  started: Promise<void>;
  /** No new runs; resolves when the runs under way have finished. */
  stop(): Promise<void>;
}

export function startJobs(
  services: Services,
  opts: { expireEveryMs?: number; reconcileEveryMs?: number; pruneEventsEveryMs?: number; heartbeatEveryMs?: number } = {},
): Jobs {
  const { logger, orders, eventLog, clock, config, heartbeats, kill } = services;
  const timers: ReturnType<typeof setInterval>[] = [];
  const runs = new Set<Promise<void>>();
  let stopped = false;
  const every = (name: string, ms: number, job: () => Promise<unknown>) => {
    let running = false;
    const once = async () => {
      if (running || stopped) return;
      running = true;
      try {
        const result = await job();
        if (result && typeof result === "object" && Object.values(result).some((v) => v)) logger.info(`job ${name}`, result as Record<string, unknown>);
      } catch (error) {
        logger.error(`job ${name} failed`, { error });
      } finally {
        running = false;
      }
    };
    const run = () => {
      const p = once();
      runs.add(p);
      return p.finally(() => runs.delete(p));
    };
    const timer = setInterval(run, ms);
    (timer as { unref?: () => void }).unref?.();
    timers.push(timer);
    return run;
  };
  every("expire_unsigned_orders", opts.expireEveryMs ?? 5_000, async () => ({ expired: await orders.expireDue(new Date(clock.now())) }));
  every("prune_events", opts.pruneEventsEveryMs ?? 10 * 60_000, async () => ({
    pruned: await eventLog.prune(new Date(clock.now() - config.eventsRetentionH * 3600_000)),
  }));
  // The dead-man switch: at start-up (an agent that became overdue while the service was down is
  // killed at once), then every second.
  const heartbeat = every("heartbeat_deadlines", opts.heartbeatEveryMs ?? 1_000, () => heartbeats.sweep());
  const reconcile = every("reconcile_orders", opts.reconcileEveryMs ?? 30_000, () => orders.reconcile());
  // Kills a crash interrupted (docs/decisions.md "Kills resumed at start-up"): once, before the first
  // heartbeat sweep, so an interrupted heartbeat kill is finished under its own row, not killed twice.
  const resumeKills = (async () => {
    try {
      const result = await kill.resumeUnfinished();
      if (result.resumed || result.failed) logger.info("job resume_kills", result);
    } catch (error) {
      logger.error("job resume_kills failed", { error });
    }
  })();
  runs.add(resumeKills);
  void resumeKills.finally(() => runs.delete(resumeKills));
  return {
    started: Promise.all([reconcile(), resumeKills.then(() => heartbeat())]).then(() => undefined),
    async stop() {
      stopped = true;
      for (const t of timers) clearInterval(t);
      await Promise.allSettled([...runs]);
    },
  };
}
