/**
 * The agent leases a request ran under (docs/decisions.md "Idempotency-Key records across a lease
 * loss"): AgentService.actorFor notes the lease of each actor it hands to a request, keyed by the
 * request's caller (one object per request, src/http/auth.ts), and the idempotency plugin asks, once
 * the request is answered, whether one of them was taken from this process while the request ran.
 * Then the request may have been cut off midway (an order written, maybe sent) and its record is left
 * interrupted for its retry to resolve from the database, never released to run again.
 */
import type { Caller } from "./caller.ts";

/** What a request needs of a lease (actors/lease-port.ts AgentLease). */
export interface RequestLease {
  readonly agentId: string;
  readonly lost: boolean;
  readonly released?: boolean;
}

const noted = new WeakMap<Caller, RequestLease | RequestLease[]>();

/** Notes that the request of `caller` runs under `lease`. */
export function noteRequestLease(caller: Caller, lease: RequestLease): void {
  const seen = noted.get(caller);
  if (seen === undefined) noted.set(caller, lease);
  else if (Array.isArray(seen)) {
    if (!seen.includes(lease)) seen.push(lease);
  } else if (seen !== lease) noted.set(caller, [seen, lease]);
}

/** Forgets the leases noted for `caller` (a request that gave its agent up on purpose: a new agent's lease released at once). */
export function forgetRequestLeases(caller: Caller): void {
  noted.delete(caller);
}

/**
 * Whether a lease the request of `caller` ran under was taken from this process (taken over once
 * lapsed, or a write refused for a stale epoch), rather than given up by it (a hand-over).
 */
export function requestLostLease(caller: Caller | undefined): boolean {
  if (!caller) return false;
  const seen = noted.get(caller);
  if (seen === undefined) return false;
  if (!Array.isArray(seen)) return seen.lost && seen.released !== true;
  return seen.some((l) => l.lost && l.released !== true);
}
