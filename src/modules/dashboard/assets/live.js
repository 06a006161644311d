// Live updates: the order event stream (GET /v1/events, Server-Sent Events) read with fetch, since
// EventSource cannot send the X-API-Key header; polling when the service has no stream (404) or
// while the stream is down. eventsource-parser does the SSE framing.
import { createParser } from "./vendor/eventsource-parser/parse.js";

export const POLL_MS = 3000;

/**
 * Starts following the service. `onEvent(type, data)` for each event; `onTick()` on each poll;
 * `onMode(mode)` with "stream", "polling" or "offline". Returns stop().
 */
export function startLive({ key, onEvent, onTick, onMode }) {
  const controller = new AbortController();
  let lastEventId = null;
  let timer = null;
  let mode = null;
  const setMode = (m) => {
    if (m !== mode) onMode((mode = m));
  };
  const startPolling = () => {
    if (!timer) timer = setInterval(onTick, POLL_MS);
  };
  const stopPolling = () => {
    clearInterval(timer);
    timer = null;
  };

  async function follow() {
    let delay = 1000;
    while (!controller.signal.aborted) {
      let res;
      try {
        const headers = { "x-api-key": key, accept: "text/event-stream" };
        if (lastEventId) headers["last-event-id"] = lastEventId;
        res = await fetch("/v1/events", { headers, signal: controller.signal, cache: "no-store" });
      } catch {
        if (controller.signal.aborted) return;
        res = null;
      }
      if (res && (res.status === 404 || res.status === 405)) {
        // This service offers no event stream: poll from now on.
        setMode("polling");
        startPolling();
        return;
      }
      if (res && res.ok && res.body) {
        stopPolling();
        setMode("stream");
        delay = 1000;
        // Whatever happened while disconnected is replayed from Last-Event-ID; refresh anyway.
        onTick();
        const parser = createParser({
          onEvent(event) {
            if (event.id) lastEventId = event.id;
            let data = null;
            try {
              data = JSON.parse(event.data);
            } catch {
              data = null;
            }
            onEvent(event.event ?? "message", data);
          },
        });
        try {
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            parser.feed(value);
          }
        } catch {
          if (controller.signal.aborted) return;
        }
      } else if (res) {
        await res.body?.cancel().catch(() => undefined);
      }
      // The stream ended or failed: poll while reconnecting, with backoff.
      setMode("offline");
      startPolling();
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  }

  follow();
  return () => {
    controller.abort();
    stopPolling();
  };
}
