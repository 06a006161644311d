/**
 * Deadlines of venue calls. `venueDeadline(ms)` is `AbortSignal.timeout(ms)` remembered as a timeout of
 * `ms`, so a venue adapter whose own timeout is at least as long bounds the call by it alone: one timer
 * per call instead of two and an `AbortSignal.any` (measurable on the delegated placement path).
 */
const lengths = new WeakMap<AbortSignal, number>();

export function venueDeadline(ms: number): AbortSignal {
  const signal = AbortSignal.timeout(ms);
  lengths.set(signal, ms);
  return signal;
}

/** The length in milliseconds of a deadline made by venueDeadline; undefined for any other signal. */
export function deadlineMsOf(signal: AbortSignal): number | undefined {
  return lengths.get(signal);
}
