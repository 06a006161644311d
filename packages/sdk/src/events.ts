/**
 * GET /v1/events as an async iterator: Server-Sent Events parsed by eventsource-parser, reconnecting
 * after a dropped stream with `Last-Event-ID` so the service replays what was missed. Keepalive
 * comments are skipped; a `retry:` field from the server sets the reconnect delay.
 */
import { EventSourceParserStream, type EventSourceMessage } from "eventsource-parser/stream";
import { BrokerError, NetworkError } from "./errors.js";
import { sleep, type Transport } from "./transport.js";
import type { BrokerEvent, BrokerEventType } from "./types.js";

export interface EventsOptions {
  agent_id?: string;
  /** Resume after this event id (sent as Last-Event-ID). */
  lastEventId?: string;
  /** Replay after this event id, as `?after=` (Last-Event-ID wins once the stream has delivered an event). */
  after?: string;
  /** Only these event types are yielded (all are read, so the resume position stays right). */
  types?: BrokerEventType[];
  signal?: AbortSignal;
  /** Reconnect delay after a dropped stream, milliseconds (default 1000; the server's `retry:` wins). */
  reconnectDelayMs?: number;
  /** Give up after this many reconnects in a row without receiving an event (default: never). */
  maxReconnects?: number;
  /** Called each time the stream is (re)connected, before its first event: what happens after it is seen. */
  onOpen?: () => void;
}

/** Every type this SDK knows (the compiler checks the list is whole); a type added later is skipped, not mistyped. */
const TYPES = { order: true, risk_rejected: true, breaker: true, kill: true, webhook_disabled: true } as const satisfies Record<BrokerEventType, true>;
const KNOWN = new Set<string>(Object.keys(TYPES));

export async function* streamEvents(transport: Transport, o: EventsOptions = {}): AsyncGenerator<BrokerEvent, void, undefined> {
  let lastId = o.lastEventId;
  let delay = o.reconnectDelayMs ?? 1000;
  let failuresInRow = 0;
  while (!o.signal?.aborted) {
    const local = new AbortController();
    const signal = o.signal ? AbortSignal.any([o.signal, local.signal]) : local.signal;
    try {
      const res = await transport.stream("/v1/events", {
        query: { agent_id: o.agent_id, after: o.after },
        headers: lastId ? { "last-event-id": lastId } : {},
        signal,
      });
      if (!res.body) throw new NetworkError("GET /v1/events answered without a body", { method: "GET", path: "/v1/events", attempts: 1 }, null);
      o.onOpen?.();
      const reader = res.body
        .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
        .pipeThrough(new EventSourceParserStream({ onRetry: (ms) => (delay = ms) }))
        .getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const ev = toEvent(value);
          if (value.id) lastId = value.id;
          if (!ev) continue;
          failuresInRow = 0;
          if (!o.types || o.types.includes(ev.type)) yield ev;
        }
      } finally {
        local.abort();
        reader.releaseLock();
      }
    } catch (err) {
      if (o.signal?.aborted) return;
      // Authentication and validation problems do not heal by reconnecting.
      if (err instanceof BrokerError && err.status < 500 && err.status !== 429) throw err;
    }
    if (o.signal?.aborted) return;
    failuresInRow++;
    if (o.maxReconnects !== undefined && failuresInRow > o.maxReconnects) {
      throw new NetworkError(`GET /v1/events: gave up after ${o.maxReconnects} reconnect(s)`, { method: "GET", path: "/v1/events", attempts: failuresInRow }, null);
    }
    try {
      await sleep(delay, o.signal);
    } catch {
      return;
    }
  }
}

/** The event of one SSE message: the service's envelope `{id, type, agent_id, created_at, data}` unwrapped. */
function toEvent(m: EventSourceMessage): BrokerEvent | null {
  const type = m.event ?? "message";
  if (!KNOWN.has(type)) return null;
  let parsed: any;
  try {
    parsed = JSON.parse(m.data);
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== "object" || !("data" in parsed)) return null;
  return {
    id: m.id ?? String(parsed.id ?? ""),
    type,
    agent_id: parsed.agent_id,
    created_at: parsed.created_at,
    data: parsed.data,
  } as BrokerEvent;
}
