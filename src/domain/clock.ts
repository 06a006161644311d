/** The one clock of the service: every "now" is read through it, so tests and actors can be given another. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
