/**
 * A webhook receiver for the tests: a real HTTP server that verifies every message with the
 * `standardwebhooks` library (as docs/webhooks.md shows a receiver doing), records it, and can go down
 * (its port closed) and come back on the same port, fail with a status, or hold its answers.
 */
import { Webhook } from "standardwebhooks";

export interface Received {
  webhookId: string;
  /** The parsed body. */
  body: any;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  /** Every verified message, repeats included, in arrival order. */
  received: Received[];
  /** Messages whose signature did not verify. */
  rejected: { headers: Record<string, string>; error: string }[];
  /** The signing secret messages are verified with (set after the endpoint is created). */
  secret: string | null;
  /** Answer this status instead of 204 (null: 204). */
  failWith: number | null;
  /** Milliseconds to hold each answer. */
  delayMs: number;
  down(): void;
  up(): void;
  close(): void;
  /** The distinct webhook-ids, in the order they first arrived. */
  distinct(): Received[];
  until(pred: (r: Receiver) => boolean, what: string, ms?: number): Promise<void>;
}

export function startReceiver(): Receiver {
  let server: ReturnType<typeof Bun.serve> | null = null;
  const r: Receiver = {
    url: "",
    port: 0,
    received: [],
    rejected: [],
    secret: null,
    failWith: null,
    delayMs: 0,
    down() {
      server?.stop(true);
      server = null;
    },
    up() {
      server = Bun.serve({
        port: r.port,
        hostname: "127.0.0.1",
        fetch: async (request) => {
          const text = await request.text();
          const headers = Object.fromEntries(request.headers.entries());
          if (!r.secret) return new Response("no secret yet", { status: 503 });
          let body: unknown;
          try {
            body = new Webhook(r.secret).verify(text, headers);
          } catch (error) {
            r.rejected.push({ headers, error: (error as Error).message });
            return new Response("bad signature", { status: 400 });
          }
          r.received.push({ webhookId: headers["webhook-id"], body, at: Date.now() });
          if (r.delayMs) await new Promise((ok) => setTimeout(ok, r.delayMs));
          return new Response(null, { status: r.failWith ?? 204 });
        },
      });
      r.port = server.port!;
      r.url = `http://127.0.0.1:${r.port}/hooks`;
    },
    close() {
      r.down();
    },
    distinct() {
      const seen = new Set<string>();
      return r.received.filter((m) => (seen.has(m.webhookId) ? false : (seen.add(m.webhookId), true)));
    },
    async until(pred, what, ms = 20_000) {
      const end = Date.now() + ms;
      while (!pred(r)) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}; received ${JSON.stringify(r.received.map((m) => m.webhookId))}`);
        await new Promise((ok) => setTimeout(ok, 20));
      }
    },
  };
  r.up();
  return r;
}
