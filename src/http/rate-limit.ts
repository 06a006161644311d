/** The per-caller rate limit (docs/api.md#conventions), applied by the auth hooks: 429 with Retry-After past it. */
import { type Clock, systemClock } from "../domain/clock.ts";

/** A token bucket per caller: `perSecond` sustained, bursts up to twice that. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly perSecond: number,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Seconds to wait, or 0 when the request may go ahead. */
  take(id: string, now = this.clock.now()): number {
    if (this.perSecond <= 0) return 0;
    const burst = this.perSecond * 2;
    const b = this.buckets.get(id) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    this.buckets.set(id, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
  }
}
