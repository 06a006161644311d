/** GET /v1/events read as a client reads it, over app.handle: the raw Server-Sent Events frames. */
import { expect } from "bun:test";
import type { TestApp } from "./app.ts";

export type Frame = { id?: string; event?: string; data?: any; comment?: string };

/** An SSE client over app.handle: parses frames as they arrive; `close()` disconnects. */
export async function connect(t: TestApp, key: string, query: string, headers: Record<string, string> = {}) {
  const res = await t.app.handle(new Request(`http://localhost/v1/events${query}`, { headers: { "x-api-key": key, ...headers } }));
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("text/event-stream");
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const frames: Frame[] = [];
  let buffer = "";
  let closed = false;
  const pump = (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const f: Frame = {};
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) f.comment = line.slice(1).trim();
          else if (line.startsWith("id: ")) f.id = line.slice(4);
          else if (line.startsWith("event: ")) f.event = line.slice(7);
          else if (line.startsWith("data: ")) f.data = JSON.parse(line.slice(6));
        }
        frames.push(f);
      }
    }
  })();
  return {
    frames,
    events: () => frames.filter((f) => f.id !== undefined),
    async until(pred: (events: Frame[]) => boolean, what: string, ms = 5000) {
      const end = Date.now() + ms;
      while (!pred(frames.filter((f) => f.id !== undefined))) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(frames)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await reader.cancel();
      await pump;
    },
  };
}
