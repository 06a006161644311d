/**
 * The registry of live actors, keyed by id. It activates an actor on first use
 * (loading it through `activate`), never holds two actors for one id even when
 * the first requests for an id arrive together, and evicts actors that have
 * been idle for `idleMs`.
 */
import { type Clock, systemClock } from "../src/domain/clock.ts";

export interface Evictable {
  /** Whether the actor may be dropped now (nothing running, nothing in flight). */
  canEvict(now: number, idleMs: number): boolean;
  onEvict?(): void;
}

export interface RegistryOptions<A> {
  /** Loads an actor; null when the id does not exist. */
  activate: (id: string) => Promise<A | null>;
  idleMs: number;
  /** How often idle actors are swept; 0 turns the timer off (call sweep() yourself). */
  sweepEveryMs?: number;
  onSizeChange?: (size: number) => void;
  clock?: Clock;
}

export class ActorRegistry<A extends Evictable> {
  private readonly live = new Map<string, A>();
  private readonly activating = new Map<string, Promise<A | null>>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private activations = 0;

  constructor(private readonly options: RegistryOptions<A>) {
    const every = options.sweepEveryMs ?? Math.max(1000, Math.floor(options.idleMs / 2));
    if (every > 0) {
      this.timer = setInterval(() => this.sweep(), every);
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  /** The actor for `id`, activating it if needed; null when the id does not exist. */
  get(id: string): Promise<A | null> {
    const actor = this.live.get(id);
    if (actor) return Promise.resolve(actor);
    const inFlight = this.activating.get(id);
    if (inFlight) return inFlight;
    const loading = this.options
      .activate(id)
      .then((loaded) => {
        if (loaded) {
          this.live.set(id, loaded);
          this.activations++;
          this.options.onSizeChange?.(this.live.size);
        }
        return loaded;
      })
      .finally(() => this.activating.delete(id));
    this.activating.set(id, loading);
    return loading;
  }

  /**
   * True when no live actor has work under way: no message running, no durable write, venue call
   * or kill pending (graceful shutdown waits for this).
   */
  settled(now = (this.options.clock ?? systemClock).now()): boolean {
    for (const actor of this.live.values()) if (!actor.canEvict(now + 1, 1)) return false;
    return true;
  }

  /** The live actor for `id` without activating it. */
  peek(id: string): A | undefined {
    return this.live.get(id);
  }

  /** Drops `actor` (it was retired): the next `get` of its id activates afresh. */
  forget(id: string, actor: A): void {
    if (this.live.get(id) !== actor) return;
    this.live.delete(id);
    this.options.onSizeChange?.(this.live.size);
  }

  /** Drops every actor that can be evicted now; returns how many were dropped. */
  sweep(now = (this.options.clock ?? systemClock).now()): number {
    let dropped = 0;
    for (const [id, actor] of this.live) {
      if (actor.canEvict(now, this.options.idleMs)) {
        this.live.delete(id);
        actor.onEvict?.();
        dropped++;
      }
    }
    if (dropped) this.options.onSizeChange?.(this.live.size);
    return dropped;
  }

  get size(): number {
    return this.live.size;
  }

  /** How many activations have completed (for tests and metrics). */
  get activationCount(): number {
    return this.activations;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
