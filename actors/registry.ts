/**
 * The registry of live actors, keyed by id. It activates an actor on first use
 * (loading it through `activate`), never holds two actors for one id even when
 * the first requests for an id arrive together, and evicts actors that have
 * been idle for `idleMs`.
 */
import { type Clock, systemClock } from "../src/domain/clock.ts";
import { type AgentLease, type LeasePort, LeaseUnavailableError } from "./lease-port.ts";

export interface Evictable {
  /** Whether the actor may be dropped now (nothing running, nothing in flight). */
  canEvict(now: number, idleMs: number): boolean;
  onEvict?(): void;
  /**
   * Whether a kill (or cancel-all) is running in the actor: a hand-over waits for it to end (it ends
   * by its own deadline), so its cancellations and their outcomes are written under the lease it runs
   * under; releasing mid-kill would refuse its writes (503) or leave its outcome unwritten.
   */
  killing?(): boolean;
  /**
   * Whether a venue placement is under way: an urgent hand-over still waits for it (at most the
   * ordinary hand-over time, which covers the venue timeout), so its outcome is written and the kill
   * at the next owner sees the venue's order id, instead of cancelling by hash an order the venue
   * does not know yet and that the placement then leaves live.
   */
  placing?(): boolean;
}

export interface RegistryOptions<A> {
  /** Loads an actor (under `lease` when the registry has a lease port); null when the id does not exist. */
  activate: (id: string, lease?: AgentLease) => Promise<A | null>;
  /**
   * Single activation across processes (lease-port.ts): an actor is activated only under its lease,
   * dropped when the lease is lost, and handed over when another instance asks for it. Absent: every
   * actor lives in this process alone (one process on the database).
   */
  lease?: {
    port: LeasePort;
    /** How long a request waits for another instance to hand the agent over (or its lease to lapse). */
    acquireWaitMs: number;
    /** How long an owner asked to release waits for the agent's in-flight work before it releases anyway. */
    handoffMaxMs: number;
    /** The same for an urgent request (a kill waits for it); default 1000 ms. */
    urgentHandoffMs?: number;
    /** An owner keeps a lease it just took at least this long, so the requests that waited for it run. */
    minHoldMs?: number;
    /** How long a hand-over waits at most for a kill running in the actor (beyond handoffMaxMs); default 10 s. */
    killMaxMs?: number;
    log?: (message: string, fields: Record<string, unknown>) => void;
  };
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
  /** The lease each live actor runs under (with a lease port). */
  private readonly leases = new Map<string, { lease: AgentLease; at: number }>();
  /** Hand-overs under way: the actor finishes its work, then the lease is released. */
  private readonly releasing = new Map<string, Promise<void>>();
  /** Hand-overs asked for while the actor was still activating (true: urgently). */
  private readonly releaseAsked = new Map<string, boolean>();
  /** Hand-overs under way that were asked for urgently (they stop waiting for the actor's work sooner). */
  private readonly urgent = new Set<string>();
  /** Activations under way that only probe (getIfFree: the lease taken if free, no owner asked). */
  private readonly probing = new Set<string>();

  constructor(private readonly options: RegistryOptions<A>) {
    options.lease?.port.setHandlers({
      releaseRequested: (id, urgent) => this.handOver(id, urgent),
      lost: (id) => this.dropLost(id),
    });
    const every = options.sweepEveryMs ?? Math.max(1000, Math.floor(options.idleMs / 2));
    if (every > 0) {
      this.timer = setInterval(() => this.sweep(), every);
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  /**
   * The actor for `id`, activating it if needed; null when the id does not exist. With a lease port
   * the lease is taken first (another instance is asked to hand the agent over); LeaseUnavailableError
   * when it was not obtained in time.
   */
  get(id: string, opts?: { urgent?: boolean }): Promise<A | null> {
    const actor = this.live.get(id);
    // While the agent is being handed over, new requests wait for it and then ask for it back.
    if (actor && (this.releasing.size === 0 || !this.releasing.has(id))) return Promise.resolve(actor);
    const inFlight = this.activating.get(id);
    // A background probe (getIfFree) does not ask the owner: when it found the agent taken, ask now.
    if (inFlight) return this.probing.has(id) ? inFlight.catch(() => null).then((a) => a ?? this.get(id, opts)) : inFlight;
    return this.load(id, true, opts?.urgent === true);
  }

  /**
   * The actor for `id` only if this process holds its lease or can take it without asking anyone
   * (free, or lapsed: its owner died): background work acts on these agents only. Null otherwise.
   */
  async getIfFree(id: string): Promise<A | null> {
    if (this.releasing.has(id)) return null;
    const actor = this.live.get(id);
    if (actor) return actor;
    const inFlight = this.activating.get(id);
    if (inFlight) return inFlight.catch(() => null);
    if (!this.options.lease) return this.get(id);
    return this.load(id, false).catch(() => null);
  }

  private load(id: string, ask: boolean, urgent = false): Promise<A | null> {
    const lease = this.options.lease;
    if (!ask) this.probing.add(id);
    const loading = (async () => {
      const before = this.releasing.get(id);
      if (before) await before;
      let held: AgentLease | undefined;
      let loaded: A | null = null;
      // A lease lost while the agent loaded is asked for once more: when only the local clock ran
      // out (a stalled event loop longer than the lease's time to live, nobody took it meanwhile),
      // it is taken again at once with the same epoch and the agent loads under it; when another
      // instance took it, the request waits for it as any request does, or fails.
      for (let attempt = 0; attempt < 2; attempt++) {
        if (lease) {
          const got = await lease.port.acquire(id, { waitMs: ask ? lease.acquireWaitMs : 0, ask, urgent });
          if (!got) {
            if (ask) throw new LeaseUnavailableError(id);
            return null;
          }
          held = got;
        }
        try {
          loaded = await this.options.activate(id, held);
        } catch (error) {
          if (held) await lease!.port.release(held).catch(() => undefined);
          throw error;
        }
        if (!loaded) {
          if (held) await lease!.port.release(held).catch(() => undefined);
          return null;
        }
        if (!held?.lost) break;
        loaded.onEvict?.();
        loaded = null;
      }
      if (!loaded) {
        // Lost while loading, twice (taken over): not this process's to serve.
        if (ask) throw new LeaseUnavailableError(id);
        return null;
      }
      this.live.set(id, loaded);
      if (held) this.leases.set(id, { lease: held, at: Date.now() });
      this.activations++;
      this.options.onSizeChange?.(this.live.size);
      return loaded;
    })().finally(() => {
      this.activating.delete(id);
      this.probing.delete(id);
      const asked = this.releaseAsked.get(id);
      if (asked !== undefined) {
        this.releaseAsked.delete(id);
        this.handOver(id, asked);
      }
    });
    this.activating.set(id, loading);
    return loading;
  }

  /** The lease `id`'s live actor runs under (with a lease port). */
  leaseOf(id: string): AgentLease | undefined {
    return this.leases.get(id)?.lease;
  }

  /**
   * Another instance asked for `id`: new requests wait, the actor's work under way finishes (at most
   * handoffMaxMs), then the actor is dropped and its lease released. The requests that waited then
   * ask for the lease back (behind the proxy's consistent hashing that only happens while instances
   * come or go).
   */
  private handOver(id: string, urgent = false): void {
    const lease = this.options.lease;
    if (!lease) return;
    if (urgent) this.urgent.add(id);
    if (this.releasing.has(id)) return;
    if (this.activating.has(id)) {
      this.releaseAsked.set(id, urgent || this.releaseAsked.get(id) === true);
      return;
    }
    const actor = this.live.get(id);
    const held = this.leases.get(id);
    if (!actor || !held) return;
    const done = (async () => {
      const minHold = held.at + (lease.minHoldMs ?? 50) - Date.now();
      if (minHold > 0) await Bun.sleep(minHold);
      const started = Date.now();
      const until = () =>
        started + (this.urgent.has(id) && actor.placing?.() !== true ? Math.min(lease.handoffMaxMs, lease.urgentHandoffMs ?? 1000) : lease.handoffMaxMs);
      // A kill running here is never cut off by a hand-over (it ends by its deadline; the cap only
      // guards against one that hangs).
      const killCap = started + lease.handoffMaxMs + (lease.killMaxMs ?? 10_000);
      for (;;) {
        if (actor.canEvict((this.options.clock ?? systemClock).now() + 1, 1)) break;
        const now = Date.now();
        if (now >= until() && (actor.killing?.() !== true || now >= killCap)) break;
        await Bun.sleep(5);
      }
      if (this.live.get(id) === actor) {
        this.live.delete(id);
        this.leases.delete(id);
        this.options.onSizeChange?.(this.live.size);
      }
      actor.onEvict?.();
      await lease.port.release(held.lease).catch((error: unknown) => lease.log?.("lease: release failed", { agent_id: id, error: String(error) }));
    })().finally(() => {
      this.releasing.delete(id);
      this.urgent.delete(id);
    });
    this.releasing.set(id, done);
  }

  /** The lease is gone: the actor is dropped at once (its writes are refused from now on anyway). */
  private dropLost(id: string): void {
    const actor = this.live.get(id);
    this.leases.delete(id);
    if (!actor) return;
    this.live.delete(id);
    actor.onEvict?.();
    this.options.onSizeChange?.(this.live.size);
  }

  /**
   * Releases every lease (graceful shutdown, after the actors settled): the next owner takes over at
   * once instead of waiting for a lapse.
   */
  async releaseAll(): Promise<void> {
    const lease = this.options.lease;
    await Promise.allSettled([...this.releasing.values()]);
    const all = [...this.leases.entries()];
    this.live.clear();
    this.leases.clear();
    this.options.onSizeChange?.(0);
    if (lease) await Promise.allSettled(all.map(([, h]) => lease.port.release(h.lease)));
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
  forget(id: string, actor: A): Promise<void> {
    if (this.live.get(id) !== actor) return Promise.resolve();
    this.live.delete(id);
    const held = this.leases.get(id);
    this.leases.delete(id);
    const released = held && this.options.lease ? this.options.lease.port.release(held.lease).catch(() => undefined) : Promise.resolve();
    this.options.onSizeChange?.(this.live.size);
    return released;
  }

  /** Drops every actor that can be evicted now; returns how many were dropped. */
  sweep(now = (this.options.clock ?? systemClock).now()): number {
    let dropped = 0;
    for (const [id, actor] of this.live) {
      if (actor.canEvict(now, this.options.idleMs) && !this.releasing.has(id)) {
        this.live.delete(id);
        actor.onEvict?.();
        dropped++;
        const held = this.leases.get(id);
        this.leases.delete(id);
        if (held) void this.options.lease?.port.release(held.lease).catch(() => undefined);
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
