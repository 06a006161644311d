import { Elysia, t } from "elysia";
import type { Database } from "../../db/database.ts";
import { ServiceUnavailableError } from "../../errors/errors.ts";
import { jsonResponse, problemResponses } from "../../errors/problem-model.ts";
import type { Registry } from "prom-client";
import type { Venue } from "../../venues/venue.ts";

/** What /readyz reads of the chain source (src/chain/ChainFillSource fits; the composition root passes it). */
export interface ChainStatusPort {
  status(): { state: "starting" | "following" | "unreachable" | "stopped"; cursorBlock: bigint | null; headBlock: bigint | null };
}

/**
 * The chain source's part of /readyz: `off` without CHAIN_RPC_URL; else its state (starting, following,
 * unreachable, stopped) and blocks. It never makes the service unready: orders are placed and cancelled
 * without it; an unreachable chain only delays fills (docs/decisions.md, "Fills from the chain").
 */
function chainReadiness(chain: ChainStatusPort | null | undefined) {
  if (!chain) return { chain: "off" as const };
  const s = chain.status();
  return {
    chain: s.state,
    chain_cursor_block: s.cursorBlock === null ? null : s.cursorBlock.toString(),
    chain_head_block: s.headBlock === null ? null : s.headBlock.toString(),
  };
}

export function healthModule(deps: { database: Database; venue: Venue; registry: Registry; chain?: ChainStatusPort | null }) {
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
        return { status: "ready", database: deps.database.kind, venue: deps.venue.name, ...chainReadiness(deps.chain) };
      },
      {
        detail: {
          summary: "The database and the venue answer (and the chain source's state: off without CHAIN_RPC_URL)",
          tags: ["operations"],
          security: [],
          responses: {
            "200": jsonResponse(
              "Ready",
              t.Object({
                status: t.Literal("ready"),
                database: t.String(),
                venue: t.String(),
                chain: t.Union([t.Literal("off"), t.Literal("starting"), t.Literal("following"), t.Literal("unreachable"), t.Literal("stopped")]),
                chain_cursor_block: t.Optional(t.Union([t.String(), t.Null()])),
                chain_head_block: t.Optional(t.Union([t.String(), t.Null()])),
              }),
              { status: "ready", database: "pglite", venue: "paper", chain: "off" },
            ),
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
