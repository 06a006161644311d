/**
 * PostgreSQL cannot store the NUL character in text or jsonb, so a NUL anywhere
 * in a request (body, query or path) is refused with 400 before any handler
 * runs, instead of failing later in the database.
 */
import { Elysia } from "elysia";
import { InvalidRequestError } from "../errors/errors.ts";

/** Whether any string in the value (a key included) holds a NUL: the walk every request pays, no pointer built. */
function hasNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\u0000");
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (hasNul(value[i])) return true;
    return false;
  }
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (k.includes("\u0000") || hasNul((value as Record<string, unknown>)[k])) return true;
  }
  return false;
}

/** The JSON pointer of the first string holding a NUL, or null. */
export function findNul(value: unknown, path = ""): string | null {
  if (!hasNul(value)) return null;
  return pointerOfNul(value, path);
}

function pointerOfNul(value: unknown, path: string): string | null {
  if (typeof value === "string") return value.includes("\u0000") ? path || "/" : null;
  if (value === null || typeof value !== "object") return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = pointerOfNul(value[i], `${path}/${i}`);
      if (found) return found;
    }
    return null;
  }
  for (const [k, v] of Object.entries(value)) {
    if (k.includes("\u0000")) return `${path}/${k.replaceAll("\u0000", "\\u0000")}`;
    const found = pointerOfNul(v, `${path}/${k}`);
    if (found) return found;
  }
  return null;
}

export function noNul() {
  return new Elysia({ name: "no-nul" }).onBeforeHandle({ as: "global" }, ({ body, query, params }) => {
    const where = findNul(body) ?? prefixed("/query", findNul(query)) ?? prefixed("/params", findNul(params));
    if (where) throw new InvalidRequestError(`${where}: must not contain the NUL character`, [{ path: where, message: "must not contain the NUL character" }]);
  });
}

const prefixed = (prefix: string, p: string | null) => (p ? `${prefix}${p === "/" ? "" : p}` : null);
