/**
 * The request id: the caller's `X-Request-Id` when it is usable, else a new UUID. Set on every answer
 * (errors and replays included) and carried in the request's meta for the logs.
 */
import { randomUUID } from "node:crypto";
import { Elysia } from "elysia";
import { setRequestMeta } from "./request-meta.ts";

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,100}$/;

export function requestId() {
  return new Elysia({ name: "request-id" }).onRequest(({ request, set }) => {
    const given = request.headers.get("x-request-id");
    const id = given && REQUEST_ID_RE.test(given) ? given : randomUUID();
    setRequestMeta(request, { id, startedAt: performance.now() });
    set.headers["x-request-id"] = id;
  });
}
