/**
 * The baseline of the intent benchmark: one Elysia POST route with the same
 * TypeBox body schema as POST /v1/orders/intent, answering a small JSON.
 * `PORT=… bun run bench/bare-server.ts` (listens on 127.0.0.1 only).
 *
 * With BARE_WAIT_MS set, each request is answered at the next tick of one shared interval of that
 * period instead of at once: the shape of a group commit (requests wait together, one wake-up
 * answers them all) without its work, to show what answering after a wait costs by itself.
 */
import { Elysia } from "elysia";
import { IntentBody } from "../src/modules/intents/model.ts";

const port = Number(process.env.PORT ?? 0);
const waitMs = Number(process.env.BARE_WAIT_MS ?? 0);
let waiting: (() => void)[] = [];
if (waitMs > 0) {
  setInterval(() => {
    const due = waiting;
    waiting = [];
    for (const resolve of due) resolve();
  }, waitMs);
}
const answer = (body: { market_id: string; side: string }) => ({ ok: true, market_id: body.market_id, side: body.side });
const app = new Elysia({ normalize: false }).get("/healthz", () => ({ status: "ok" }));
// The plain route stays synchronous: an async handler alone changes what Elysia and Bun do per request.
if (waitMs > 0) {
  app.post(
    "/v1/orders/intent",
    async ({ body, set }) => {
      await new Promise<void>((resolve) => waiting.push(resolve));
      set.status = 201;
      return answer(body);
    },
    { body: IntentBody },
  );
} else {
  app.post(
    "/v1/orders/intent",
    ({ body, set }) => {
      set.status = 201;
      return answer(body);
    },
    { body: IntentBody },
  );
}
const server = Bun.serve({ port, hostname: "127.0.0.1", fetch: app.handle });
console.log(JSON.stringify({ listening: `http://127.0.0.1:${server.port}` }));
const stop = () => {
  void server.stop(true);
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
