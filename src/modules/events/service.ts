/**
 * The event stream (docs/events.md) as Server-Sent Events, read from the event log table: on connect it
 * replays the events after `Last-Event-ID` (or `?after=`), then follows new ones, woken by the
 * writers' commits and polling the table besides. Each event is `id:` (the event id), `event:` (its
 * type) and `data:` (JSON); a `: keepalive` comment goes out every EVENTS_KEEPALIVE_MS.
 */
import type { Clock } from "../../domain/clock.ts";
import type { EventLog, EventRow } from "../../db/event-log.ts";
import { ForbiddenError, InvalidRequestError } from "../../errors/errors.ts";
import type { Caller } from "../../http/caller.ts";
import type { Logger } from "../../observability/logger.ts";
import type { AgentService } from "../agents/service.ts";
import type { EventsQuery } from "./model.ts";

/** How long a delivered event's id stays in the look-back window (see `follow`). */
const LOOKBACK_MS = 5_000;
const POLL_MS = 1_000;

export class EventStreamService {
  constructor(private readonly deps: { log: EventLog; agents: AgentService; clock: Clock; logger: Logger; keepaliveMs: number }) {}

  /** Aborted at shutdown: every open stream ends, so the server's in-flight requests can finish. */
  private readonly closing = new AbortController();

  /** Ends every open stream (graceful shutdown); a client reconnects with its Last-Event-ID. */
  close(): void {
    this.closing.abort();
  }

  async open(caller: Caller, query: EventsQuery, lastEventId: string | null, signal: AbortSignal): Promise<Response> {
    let agentId = query.agent_id;
    if (agentId) await this.deps.agents.actorFor(caller, agentId); // 404 for another organization's agent, 403 for another agent's key
    else if (caller.agentId) agentId = caller.agentId;
    if (caller.agentId && agentId !== caller.agentId) throw new ForbiddenError("this API key is scoped to another agent");
    const scope = { orgId: caller.orgId, agentId };
    let after: number;
    if (lastEventId !== null && lastEventId !== "") {
      if (!/^[0-9]{1,15}$/.test(lastEventId)) {
        throw new InvalidRequestError("Last-Event-ID must be an event id", [{ path: "/headers/last-event-id", message: "must be a non-negative integer" }]);
      }
      after = Number(lastEventId);
    } else if (query.after !== undefined) {
      after = Number(query.after);
    } else {
      // No cursor: the stream starts with what happens from now on.
      after = await this.deps.log.latestId(scope);
    }
    const stop = new AbortController();
    const ended = AbortSignal.any([signal, this.closing.signal]);
    if (ended.aborted) stop.abort();
    else ended.addEventListener("abort", () => stop.abort(), { once: true });
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        const send = (text: string) => controller.enqueue(encoder.encode(text));
        send("retry: 2000\n\n");
        void this.follow(scope, after, send, stop.signal)
          .catch((error: unknown) => this.deps.logger.warn("event stream ended by an error", { error }))
          .finally(() => {
            try {
              controller.close();
            } catch {
              // already closed by the client
            }
          });
      },
      cancel: () => stop.abort(),
    });
    return new Response(stream, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no" },
    });
  }

  /**
   * Sends every event after `after`, in id order, then waits for more. On PostgreSQL two writers can
   * commit out of id order, so the query also looks back over ids delivered in the last
   * LOOKBACK_MS and sends a late-committed event it finds there (once: delivered ids are remembered).
   */
  private async follow(scope: { orgId: string; agentId?: string }, after: number, send: (text: string) => void, signal: AbortSignal): Promise<void> {
    const { log, clock, keepaliveMs } = this.deps;
    /** Delivered ids still in the look-back window, with when they were delivered. */
    const recent = new Map<number, number>();
    let last = after; // the highest id delivered
    let floor = after; // every id at or below was delivered (or predates the stream)
    let lastSentAt = clock.now();
    const deliver = (row: EventRow) => {
      send(frame(row));
      recent.set(row.id, clock.now());
      if (row.id > last) last = row.id;
    };
    while (!signal.aborted) {
      const wakes = log.wakeCount;
      const fresh = await log.after(scope, last, 500);
      for (const row of fresh) deliver(row);
      if (floor < last) {
        // Late commits below `last` (PostgreSQL only; PGlite commits in id order).
        for (const row of await log.after(scope, floor, 1000)) if (row.id < last && !recent.has(row.id)) deliver(row);
      }
      const now = clock.now();
      if (fresh.length) lastSentAt = now;
      for (const [id, at] of recent) {
        if (now - at < LOOKBACK_MS) continue;
        recent.delete(id);
        if (id > floor) floor = id;
      }
      if (fresh.length === 500) continue; // more to replay
      if (now - lastSentAt >= keepaliveMs) {
        send(": keepalive\n\n");
        lastSentAt = now;
      }
      await log.waitForMore(Math.max(10, Math.min(POLL_MS, keepaliveMs - (now - lastSentAt))), signal, wakes);
    }
  }
}

function frame(row: EventRow): string {
  const data = { id: row.id, type: row.type, agent_id: row.agentId, created_at: row.createdAt.toISOString(), data: row.data };
  return `id: ${row.id}\nevent: ${row.type}\ndata: ${JSON.stringify(data)}\n\n`;
}
