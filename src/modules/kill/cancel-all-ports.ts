/**
 * The kill switch of a payload-mode agent whose owner sent `venue_auth` (docs/api.md#post-v1agentsidkill):
 * the service holds no venue keys for such an agent, so it passes the owner's L2 headers, computed over
 * `DELETE /cancel-all`, through to the venue, which cancels every open order of that account in one call.
 * Each of the agent's orders is then confirmed from that answer (in `canceled`, or "already canceled or
 * matched" in `not_canceled`, then read to learn which) and whatever the answer does not cover goes on
 * to the kill's ordinary per-order path, so only what nobody confirmed by the deadline is failed and
 * flagged.
 *
 * At most two cancel-all calls per kill: a second one only when the first did not answer (no answer or a
 * 5xx) or did not cover an order (accepted by the venue while the first was on its way). A refusal (4xx:
 * wrong or stale headers) is not repeated. The headers are used for these calls only, never stored or logged.
 */
import type { CancelOutcome, KillPorts, TrackedOrder } from "../../../actors/ports.ts";
import { filledUnitsOf } from "../../domain/venue-status.ts";
import type { CancelAllAnswer, Venue, VenueAuth } from "../../venues/venue.ts";

/** Most DELETE /cancel-all calls one kill makes with the owner's headers. */
export const MAX_CANCEL_ALL_CALLS = 2;

type Round = Promise<{ answer: CancelAllAnswer } | { error: string; refused: boolean }>;

export interface CancelAllPortsDeps {
  venue: Pick<Venue, "getOrder"> & Required<Pick<Venue, "cancelAll">>;
  venueAuth: VenueAuth;
  /** The venue id of an order the venue has not named yet (unknown after a time-out): its order hash. */
  orderHashOf: (orderId: string) => Promise<string | null>;
  /** Told once when the venue refuses the owner's headers (the error text only). */
  onRefused: (error: string) => void;
  /** Milliseconds left before the kill's deadline: the bound of each cancel-all call. */
  remainingMs: () => number;
}

/** `base`, with every venue cancellation answered first from the owner's cancel-all. */
export function cancelAllPorts(base: KillPorts, deps: CancelAllPortsDeps): KillPorts {
  const rounds: Round[] = [];
  let refusalTold = false;

  // Each call is bounded by the kill's deadline, not by the order that started it: that order's own
  // signal may give its concurrency slot up (a stall) while the others still wait for the answer.
  const round = (index: number): Round => {
    while (rounds.length <= index) {
      const bound = AbortSignal.timeout(Math.max(0, deps.remainingMs()));
      const r: Round = deps.venue.cancelAll({ venue_auth: deps.venueAuth }, { signal: bound }).then(
        (answer) => ({ answer }),
        (error: unknown) => {
          const status = (error as { status?: unknown })?.status;
          const refused = typeof status === "number" && status >= 400 && status < 500 && status !== 408 && status !== 429;
          const text = error instanceof Error ? error.message : String(error);
          if (refused && !refusalTold) {
            refusalTold = true;
            deps.onRefused(text.slice(0, 200));
          }
          return { error: text, refused };
        },
      );
      rounds.push(r);
    }
    return rounds[index];
  };

  /** What one cancel-all answer says of one venue id: confirmed, "already done", or nothing. */
  const verdict = (answer: CancelAllAnswer, id: string): "cancelled" | "already" | null => {
    if (answer.canceled.includes(id)) return "cancelled";
    const why = answer.not_canceled[id];
    if (why !== undefined && /already|matched|can't be found|not found/i.test(why) && !/not the owner/i.test(why)) return "already";
    return null;
  };

  return {
    saveOutcomes: (outcomes) => base.saveOutcomes(outcomes),
    cancelAtVenue: async (order: TrackedOrder, signal: AbortSignal): Promise<CancelOutcome> => {
      const venueOrderId = order.venueOrderId ?? (await deps.orderHashOf(order.id).catch(() => null));
      if (venueOrderId) {
        for (let i = 0; i < MAX_CANCEL_ALL_CALLS; i++) {
          const r = await untilAborted(round(i), signal);
          if (r === "aborted") return { status: "failed" };
          if ("error" in r) {
            if (r.refused) break;
            continue;
          }
          const v = verdict(r.answer, venueOrderId);
          if (v === "cancelled") return { status: "cancelled" };
          if (v === "already") {
            // Nothing left to cancel: cancelled or matched before; a read says which, when the venue lets us.
            const state = await deps.venue.getOrder({ venue_order_id: venueOrderId }, { signal }).catch(() => null);
            if (!state) return { status: "cancelled" };
            const filledUnits = filledUnitsOf(state.filled_usdc);
            return state.status === "matched" ? { status: "filled", filledUnits: filledUnits || order.notionalUnits } : { status: "cancelled", filledUnits };
          }
        }
      }
      // Not covered by the owner's cancel-all: the kill's ordinary path (fails and flags what stays unconfirmed).
      return base.cancelAtVenue(order, signal);
    },
  };
}

/** `p`, or "aborted" as soon as `signal` aborts (the shared call itself goes on). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | "aborted"> {
  if (signal.aborted) return Promise.resolve("aborted");
  return new Promise((resolve) => {
    const onAbort = () => resolve("aborted");
    signal.addEventListener("abort", onAbort, { once: true });
    p.then((v) => {
      signal.removeEventListener("abort", onAbort);
      resolve(v);
    });
  });
}
