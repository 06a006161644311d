/**
 * The problem-details body as a schema, and OpenAPI response objects built from real errors, so the
 * OpenAPI document shows each route's failures with the body a client actually gets
 * (docs/api.md#errors). Documentation only: nothing here validates anything at run time.
 */
import { Type } from "@sinclair/typebox";
import type { ProblemError } from "./problem-error.ts";

export const ProblemModel = Type.Object(
  {
    type: Type.String({ description: "a URI reference to this code's section of docs/api.md, e.g. /docs/api#not_found" }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: "stable snake_case code; see docs/api.md#errors" }),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String({ description: "JSON pointer into the body, or /query/…, /params/…, /headers/…" }), message: Type.String() })),
    ),
  },
  { additionalProperties: true, description: "RFC 9457 problem details; extra members depend on the code" },
);

/** An OpenAPI media type object; `schema` is a TypeBox schema (plain JSON Schema once serialized). */
// biome-ignore lint/suspicious/noExplicitAny: OpenAPI's SchemaObject type does not know TypeBox's kinds
type Media = { schema: any; example?: unknown; examples?: Record<string, { value: unknown }> };
type ResponseObject = { description: string; content: Record<string, Media> };

/** OpenAPI responses for these errors, grouped by status, each with its body as an example. */
export function problemResponses(...errors: ProblemError[]): Record<string, ResponseObject> {
  const out: Record<string, ResponseObject> = {};
  for (const e of errors) {
    const key = String(e.status);
    const r = (out[key] ??= { description: e.title, content: { "application/problem+json": { schema: ProblemModel, examples: {} } } });
    if (!r.description.split(" or ").includes(e.title)) r.description += ` or ${e.title}`;
    const examples = r.content["application/problem+json"].examples ?? {};
    examples[e.code] = { value: e.toProblem() };
  }
  return out;
}

/** A 2xx response documented beside (not instead of) a route's run-time `response` schema. */
export function jsonResponse(description: string, schema: unknown, example: unknown): ResponseObject {
  return { description, content: { "application/json": { schema, example } } };
}
