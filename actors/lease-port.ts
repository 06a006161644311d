/**
 * The lease port: an agent's actor lives in at most one process, the one that holds the agent's lease
 * (docs/decisions.md "One actor per agent across instances"). The registry activates an actor only
 * after `acquire` answered a lease, and every store write the actor makes carries that lease's epoch
 * (its `Fence`): the store changes nothing for a stale epoch. The service implements the port on the
 * database (src/db/agent-leases.ts); this file holds only what the actors see of it.
 */

/** What a store write carries: the agent and the epoch its writer holds. */
export interface Fence {
  readonly agentId: string;
  readonly epoch: number;
  /** Called by the store when a write was refused for a stale epoch (the holder lost the lease). */
  stale?(): void;
}

/** A lease this process holds (or held: `lost`). */
export interface AgentLease extends Fence {
  /** True once this process no longer holds it (released, taken over, or lapsed). */
  readonly lost: boolean;
  /**
   * True when this process gave the lease up itself (`release`: a hand-over, an idle actor dropped):
   * `lost` without `released` means it was taken from this process (taken over once lapsed, or a
   * write refused), so work that ran under it may have been cut off midway.
   */
  readonly released?: boolean;
}

export interface LeaseHandlers {
  /**
   * Another instance asks for the agent: finish its in-flight work, then release the lease. `urgent`
   * (a kill waits for it): release after a short wait even if work is still under way (its writes are
   * then refused; the kill at the new owner cancels what it placed).
   */
  releaseRequested(agentId: string, urgent: boolean): void;
  /** The lease is gone (taken over, lapsed unrenewed, or a write was refused): drop the actor at once. */
  lost(agentId: string): void;
}

export interface LeasePort {
  /** This process's instance id (INSTANCE_ID), the owner the lease table names. */
  readonly instanceId: string;
  /**
   * The agent's lease: taken at once when free, lapsed or already this instance's; otherwise, with
   * `ask`, its owner is asked to release it and the call waits up to `waitMs` for the release or the
   * lapse. Null when it was not obtained in that time (never with a live owner when `ask` is false).
   */
  acquire(agentId: string, opts: { waitMs: number; ask: boolean; urgent?: boolean }): Promise<AgentLease | null>;
  /** Gives the lease up (owner cleared, the waiters woken); the lease is `lost` from then on. */
  release(lease: AgentLease): Promise<void>;
  setHandlers(handlers: LeaseHandlers): void;
}

/** No lease was obtained in time (another instance holds the agent and did not let go): retry later. */
export class LeaseUnavailableError extends Error {
  override name = "LeaseUnavailableError";
  constructor(readonly agentId: string) {
    super(`the agent ${agentId} is owned by another instance that did not hand it over in time`);
  }
}

/** A write was refused because this process no longer holds the agent's lease (stale fencing epoch). */
export class LeaseLostError extends Error {
  override name = "LeaseLostError";
  constructor(readonly agentId: string, readonly epoch: number) {
    super(`this instance no longer holds the lease of agent ${agentId} (epoch ${epoch}): the write was refused`);
  }
}
