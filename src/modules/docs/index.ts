/**
 * `GET /docs/api`: the API reference (docs/api.md, embedded in the binary). Problem `type` URIs
 * point at its sections (`/docs/api#not_found`), so they resolve against the service that answered.
 */
import { Elysia } from "elysia";
import apiReference from "../../../docs/api.md" with { type: "text" };

export function docsModule() {
  return new Elysia({ name: "docs" }).get(
    "/docs/api",
    () => new Response(apiReference, { headers: { "content-type": "text/markdown; charset=utf-8" } }),
    { detail: { summary: "The API reference (Markdown); problem type URIs point at its sections", tags: ["operations"], security: [] } },
  );
}
