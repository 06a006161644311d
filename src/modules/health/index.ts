import { Elysia } from "elysia";
import type { Database } from "../../db/database.ts";
import { ServiceUnavailableError } from "../../errors/errors.ts";
import type { Registry } from "prom-client";
import type { Venue } from "../../venues/venue.ts";

export function healthModule(deps: { database: Database; venue: Venue; registry: Registry }) {
  return new Elysia({ name: "health" })
    .get("/healthz", () => ({ status: "ok" }), { detail: { summary: "The process is up", tags: ["operations"] } })
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
      { detail: { summary: "The database and the venue answer", tags: ["operations"] } },
    )
    .get(
      "/metrics",
      async () => new Response(await deps.registry.metrics(), { headers: { "content-type": deps.registry.contentType } }),
      { detail: { summary: "Prometheus metrics", tags: ["operations"] } },
    );
}
