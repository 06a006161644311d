/** The kill switch's cancellation of one tracked order, inside its concurrency limit and deadline. */
import pLimit from "p-limit";
import type { ActorCore } from "./actor-core.ts";
import { LOCAL_STATUSES } from "./local-statuses.ts";
import type { ActorLimits, CancelOutcome, KillOutcome, KillPorts, StoredOrder, TrackedOrder } from "./ports.ts";

export async function cancelForKill<L extends ActorLimits, R extends StoredOrder>(
  actor: ActorCore<L, R>,
  id: string,
  ports: KillPorts,
  k: { signal: AbortSignal; deadline: Promise<"deadline">; limit: ReturnType<typeof pLimit>; stallMs: number },
): Promise<Omit<KillOutcome, "orderId"> | null> {
  const written = actor.writes.get(id);
  if (written) {
    const r = await Promise.race([written.then(() => "ok" as const, () => "gone" as const), k.deadline]);
    if (r === "gone") return null;
    if (r === "deadline") {
      const reason = "kill deadline passed before the order was written";
      // The row lands later: make it say what the kill answered, instead of awaiting a signature.
      written.then(() => ports.saveOutcomes([{ orderId: id, status: "failed", reason }])).catch(() => undefined);
      return { status: "failed", reason };
    }
  }
  let order = actor.active.get(id);
  if (!order) return null;
  if (LOCAL_STATUSES.has(order.status)) return { status: "cancelled", reason: "kill switch" };
  const flight = actor.inflight.get(id);
  if (flight) {
    // Placed while the kill runs: wait for the venue's answer, then cancel what it accepted.
    const r = await Promise.race([flight.then(() => "ok" as const), k.deadline]);
    if (r === "deadline") return { status: "failed", reason: "kill deadline passed while the order was being placed" };
    order = actor.active.get(id);
    if (!order) return null;
  }
  // An order without a venue id (unknown after a timeout, or submitting from an earlier process)
  // may still be at the venue: the port cancels it by its order hash.
  const snapshot = { ...order };
  for (;;) {
    const attempt = await k.limit(() => cancelAttempt(snapshot, ports, k));
    if (attempt !== "failed" && attempt !== "stalled") {
      return attempt.status === "filled"
        ? { status: "filled", reason: "matched at the venue before the kill", filledUnits: attempt.filledUnits }
        : { status: "cancelled", reason: "kill switch", filledUnits: attempt.filledUnits };
    }
    if (attempt === "failed" || k.signal.aborted) {
      return { status: "failed", reason: "cancellation not confirmed before the kill deadline" };
    }
    // "stalled": the slot went to a waiting order; try again from the back of the line.
  }
}

/** One cancellation inside a concurrency slot; "stalled" when it gave the slot up to waiting orders. */
async function cancelAttempt(
  order: TrackedOrder,
  ports: KillPorts,
  k: { signal: AbortSignal; limit: ReturnType<typeof pLimit>; stallMs: number },
): Promise<Exclude<CancelOutcome, { status: "failed" }> | "failed" | "stalled"> {
  if (k.signal.aborted) return "failed";
  const stall = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const watch = (ms: number) => {
    timer = setTimeout(() => {
      if (k.limit.pendingCount > 0) stall.abort();
      else watch(Math.max(10, Math.floor(k.stallMs / 10)));
    }, ms);
  };
  watch(k.stallMs);
  try {
    const outcome = await ports.cancelAtVenue(order, AbortSignal.any([k.signal, stall.signal]));
    if (outcome.status !== "failed") return outcome;
    return stall.signal.aborted && !k.signal.aborted ? "stalled" : "failed";
  } finally {
    clearTimeout(timer);
  }
}
