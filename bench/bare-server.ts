/**
 * The baseline of the intent benchmark: one Elysia POST route with the same
 * TypeBox body schema as POST /v1/orders/intent, answering a small JSON.
 * `PORT=… bun run bench/bare-server.ts` (listens on 127.0.0.1 only).
 */
import { Elysia } from "elysia";
import { IntentBody } from "../src/modules/intents/model.ts";

const port = Number(process.env.PORT ?? 0);
const app = new Elysia({ normalize: false }).get("/healthz", () => ({ status: "ok" })).post(
  "/v1/orders/intent",
  ({ body, set }) => {
    set.status = 201;
    return { ok: true, market_id: body.market_id, side: body.side };
  },
  { body: IntentBody },
);
const server = Bun.serve({ port, hostname: "127.0.0.1", fetch: app.handle });
console.log(JSON.stringify({ listening: `http://127.0.0.1:${server.port}` }));
const stop = () => {
  void server.stop(true);
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
