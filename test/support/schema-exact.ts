/** Whether a value is what a TypeBox schema documents, and nothing more. */
import { Value } from "@sinclair/typebox/value";
import type { TSchema } from "elysia";

/**
 * Where `value` has what `schema` does not name, or does not match it: JSON pointers with the reason
 * (empty: it is exactly what is documented). A union is walked through the variant the value matches;
 * an object schema with no properties and additional ones allowed (the intent as submitted, EIP-712
 * typed data) takes any fields.
 */
export function undocumented(schema: any, value: unknown, path = ""): string[] {
  if (schema.anyOf) {
    const branch = schema.anyOf.find((b: TSchema) => Value.Check(b, value));
    return branch ? undocumented(branch, value, path) : [`${path || "/"}: matches no variant`];
  }
  if (!Value.Check(schema, value)) return [`${path || "/"}: ${[...Value.Errors(schema, value)].map((e) => `${e.path} ${e.message}`).join("; ")}`];
  if (Array.isArray(value)) return value.flatMap((v, i) => undocumented(schema.items, v, `${path}/${i}`));
  if (value && typeof value === "object" && schema.type === "object") {
    const props = schema.properties ?? {};
    if (Object.keys(props).length === 0 && schema.additionalProperties !== false) return [];
    return Object.entries(value).flatMap(([k, v]) => (k in props ? undocumented(props[k], v, `${path}/${k}`) : [`${path}/${k}: not in the schema`]));
  }
  return [];
}
