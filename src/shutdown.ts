/**
 * Graceful shutdown on SIGTERM or SIGINT: the first signal runs the service's stop sequence (stop
 * accepting, let in-flight requests and their venue calls finish, let background jobs finish,
 * flush and close the database) and exits 0; if it has not finished within `graceMs` the process
 * exits 1. A second signal exits at once (128 + the signal's number, as a shell reports it).
 *
 * Installed first thing at start-up: a signal that arrives while the service is still starting is
 * kept, and the stop sequence runs as soon as the service is up (`ready`).
 */
import type { Logger } from "./observability/logger.ts";

const SIGNALS = { SIGINT: 2, SIGTERM: 15 } as const;
type Signal = keyof typeof SIGNALS;

export interface Shutdown {
  /** The service is up: `stop` is what a signal runs (at once, if one already came). */
  ready(stop: () => Promise<void>, logger: Logger): void;
}

export function installShutdown(opts: { graceMs: number; exit?: (code: number) => never }): Shutdown {
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  let requested: Signal | null = null;
  let stop: (() => Promise<void>) | null = null;
  let logger: Logger | null = null;
  let running = false;

  const run = () => {
    if (running || !stop || !requested) return;
    running = true;
    logger?.info("stopping", { signal: requested, grace_ms: opts.graceMs });
    const timer = setTimeout(() => {
      logger?.error("stop did not finish in time: exiting", { grace_ms: opts.graceMs });
      exit(1);
    }, opts.graceMs);
    stop().then(
      () => {
        clearTimeout(timer);
        logger?.info("stopped");
        exit(0);
      },
      (error: unknown) => {
        clearTimeout(timer);
        logger?.error("stop failed", { error });
        exit(1);
      },
    );
  };

  const onSignal = (signal: Signal) => {
    if (requested) {
      // The second signal: the operator does not want to wait.
      logger?.warn("second signal: exiting at once", { signal });
      exit(128 + SIGNALS[signal]);
      return;
    }
    requested = signal;
    run();
  };
  for (const s of Object.keys(SIGNALS) as Signal[]) process.on(s, () => onSignal(s));

  return {
    ready(s, l) {
      stop = s;
      logger = l;
      run();
    },
  };
}
