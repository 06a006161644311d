/**
 * Background work of a running service: expiring unsigned orders past their
 * signature deadline and orders pending approval past their approval deadline,
 * pruning the event log past EVENTS_RETENTION_H, reconciling orders whose venue
 * state is unsettled, and killing agents whose heartbeat deadline passed (the
 * last two once at start-up, then periodically); and, once at start-up, running
 * again every kill a crash interrupted (its `kills` row not completed); and the webhook delivery loop. Each job
 * runs alone (never two overlapping runs) and logs, never throws.
 */
import type { Services } from "./app.ts";
import { holdsSingleton } from "./db/singleton-lease.ts";

export interface Jobs {
  /** Resolves when the start-up reconciliation, the interrupted kills and the heartbeat sweep have finished. */
  started: Promise<void>;
  /** No new runs; resolves when the runs under way have finished. */
  stop(): Promise<void>;
}

export function startJobs(
  services: Services,
  opts: { expireEveryMs?: number; reconcileEveryMs?: number; pruneEventsEveryMs?: number; heartbeatEveryMs?: number; interruptEveryMs?: number; resumeKillsEveryMs?: number } = {},
): Jobs {
  const { logger, orders, eventLog, clock, config, heartbeats, kill, webhookDispatcher } = services;
  const timers: ReturnType<typeof setInterval>[] = [];
  const runs = new Set<Promise<void>>();
  let stopped = false;
  /** A job's run: never two at once, none once stopped, its result logged when anything happened, never throws. */
  const job = (name: string, work: () => Promise<unknown>) => {
    let running = false;
    const once = async () => {
      if (running || stopped) return;
      running = true;
      try {
        const result = await work();
        if (result && typeof result === "object" && Object.values(result).some((v) => v)) logger.info(`job ${name}`, result as Record<string, unknown>);
      } catch (error) {
        logger.error(`job ${name} failed`, { error });
      } finally {
        running = false;
      }
    };
    return () => {
      const p = once();
      runs.add(p);
      return p.finally(() => runs.delete(p));
    };
  };
  /** A job run every `ms` from now on (and whenever the returned run is called). */
  const every = (name: string, ms: number, work: () => Promise<unknown>) => {
    const run = job(name, work);
    if (stopped) return run;
    const timer = setInterval(run, ms);
    (timer as { unref?: () => void }).unref?.();
    timers.push(timer);
    return run;
  };
  every("expire_unsigned_orders", opts.expireEveryMs ?? 5_000, async () => ({ expired: await orders.expireDue(new Date(clock.now())) }));
  // Cluster-wide: one instance at a time (src/db/singleton-lease.ts).
  every("prune_events", opts.pruneEventsEveryMs ?? 10 * 60_000, async () => {
    if (!(await holdsSingleton(services.leases, "prune_events"))) return { skipped: false };
    return { pruned: await eventLog.prune(new Date(clock.now() - config.eventsRetentionH * 3600_000)) };
  });
  // Idempotency-Key records a dead instance left in progress: their retries resolve (start-up does
  // this instance's own; this catches the other instances that die while this one runs).
  every("interrupt_dead_instances", opts.interruptEveryMs ?? Math.max(1000, config.lease.ttlMs), async () => ({
    interrupted: await services.idempotency.interruptInFlight({ startup: false }),
  }));
  const reconcile = every("reconcile_orders", opts.reconcileEveryMs ?? 30_000, () => orders.reconcile());
  // Kills a crash interrupted (docs/decisions.md "Kills resumed at start-up"), once. The dead-man
  // switch starts after them (its first sweep at once: an agent that became overdue while the service
  // was down is killed; then every second), so an interrupted heartbeat kill is finished under its own
  // row, never killed a second time by a sweep that came first.
  // Then periodically: a kill an instance was running when it died is finished by whichever instance
  // takes the agent's lapsed lease (within the lease's time to live).
  const heartbeat = job("resume_kills", () => kill.resumeUnfinished())().then(() => {
    every("resume_kills_of_dead_instances", opts.resumeKillsEveryMs ?? Math.max(500, config.lease.renewMs), () => kill.resumeUnfinished());
    return every("heartbeat_deadlines", opts.heartbeatEveryMs ?? 1_000, () => heartbeats.sweep())();
  });
  // Webhook delivery: its own loop, woken by the event log's commits (src/modules/webhooks/dispatcher.ts);
  // cluster-wide, it delivers only while this instance holds the singleton lease `job:webhooks`.
  webhookDispatcher.start();
  return {
    started: Promise.all([reconcile(), heartbeat]).then(() => undefined),
    async stop() {
      stopped = true;
      for (const t of timers) clearInterval(t);
      await Promise.allSettled([...runs, webhookDispatcher.stop()]);
    },
  };
}
