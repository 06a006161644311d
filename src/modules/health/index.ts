import { Elysia, t } from "elysia";
import type { Database } from "../../db/database.ts";
import { ServiceUnavailableError } from "../../errors/errors.ts";
import { jsonResponse, problemResponses } from "../../errors/problem-model.ts";
import type { Registry } from "prom-client";
import type { Venue } from "../../venues/venue.ts";

export function healthModule(deps: { database: Database; venue: Venue; registry: Registry }) {
  return new Elysia({ name: "health" })
    .get("/healthz", () => ({ status: "ok" }), { detail: { summary: "The process is up", tags: ["operations"], security: [], responses: { "200": jsonResponse("Up", t.Object({ status: t.Literal("ok") }), { status: "ok" }) } } })
    .get(
      "/readyz",
      async () => {
        const [db, venue] = await Promise.all([
          deps.database.ping(),
          deps.venue.ping({ signal: AbortSignal.timeout(2000) }).catch(() => false),
        ]);
        if (!db || !venue) {
          throw new ServiceUnavailableError(`not ready: database ${db ? "ok" : "unreachable"}, venue ${venue ? "ok" : "unreachable"}`);
        }
        return { status: "ready", database: deps.database.kind, venue: deps.venue.name };
      },
      {
        detail: {
          summary: "The database and the venue answer",
          tags: ["operations"],
          security: [],
          responses: {
            "200": jsonResponse("Ready", t.Object({ status: t.Literal("ready"), database: t.String(), venue: t.String() }), { status: "ready", database: "pglite", venue: "paper" }),
            ...problemResponses(new ServiceUnavailableError("not ready: database ok, venue unreachable")),
          },
        },
      },
    )
    .get(
      "/metrics",
      async () => new Response(await deps.registry.metrics(), { headers: { "content-type": deps.registry.contentType } }),
      {
        detail: {
          summary: "Prometheus metrics (text format 0.0.4)",
          tags: ["operations"],
          security: [],
          responses: { "200": { description: "Prometheus text", content: { "text/plain": { schema: { type: "string" }, example: "# TYPE http_requests_total counter\n" } } } },
        },
      },
    );
}
