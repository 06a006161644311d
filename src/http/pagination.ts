/** Keyset pagination over (created_at, id), newest first: `?limit=` and an opaque `?cursor=`. */
import { t } from "elysia";
import { InvalidRequestError } from "../errors/errors.ts";

export const PageQuery = {
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: t.Optional(t.String({ maxLength: 200 })),
};

export function encodeCursor(at: Date, id: string): string {
  return Buffer.from(JSON.stringify([at.toISOString(), id])).toString("base64url");
}

const ID_RE = /^[a-z]{3}_[0-9a-z]{20}$/;
const MAX_TIME_MS = Date.UTC(9999, 11, 31);

export function decodeCursor(cursor: string | undefined): { at: Date; id: string } | null {
  if (!cursor) return null;
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    const date = new Date(at);
    const ms = date.getTime();
    // Only what this API hands out: an id of ours and a time the database can hold.
    if (typeof id !== "string" || !ID_RE.test(id) || Number.isNaN(ms) || ms < 0 || ms > MAX_TIME_MS) throw new Error("bad cursor");
    return { at: date, id };
  } catch {
    throw new InvalidRequestError("cursor is not valid", [{ path: "/query/cursor", message: "not a cursor from this API" }]);
  }
}

export function pageOf<R extends { createdAt: Date; id: string }, V>(rows: R[], limit: number, view: (r: R) => V) {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map(view),
    next_cursor: rows.length > limit && last ? encodeCursor(last.createdAt, last.id) : null,
  };
}
