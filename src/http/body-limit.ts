/**
 * The body-size limit and the body parser. The server refuses larger bodies itself (Bun.serve's
 * `maxRequestBodySize`, set from the same MAX_BODY_BYTES in main.ts); this plugin gives the same
 * limit to every other way in (`app.handle`, bodies of undeclared length) and answers it as a 413
 * problem: a declared length is refused before anything is read, a streamed body as soon as it
 * passes the limit. The parser keeps the exact text for the idempotency hash. A body that is not
 * valid JSON is marked rather than refused here, so authentication still answers first (401 before
 * 400); the error handler and the guard below turn the mark into 400 invalid_request.
 */
import { Elysia } from "elysia";
import { InvalidRequestError, PayloadTooLargeError } from "../errors/errors.ts";
import { requestMeta } from "./request-meta.ts";

/** What a body that is not valid JSON parses to (validation then fails, or the guard refuses it). */
export const INVALID_JSON = Object.freeze({ "<invalid json>": true });

export const invalidJsonError = () => new InvalidRequestError("the request body is not valid JSON", [{ path: "/", message: "malformed JSON" }]);

async function readLimited(request: Request, max: number): Promise<string> {
  // A declared length within the limit (checked on arrival) is read whole, without a stream reader:
  // the body cannot be longer than its Content-Length, and the length is checked again after.
  const declared = request.headers.get("content-length");
  if (declared !== null && request.headers.get("transfer-encoding") === null) {
    if (!request.body) return "";
    const text = await request.text();
    if (Buffer.byteLength(text, "utf8") > max) throw new PayloadTooLargeError(max);
    return text;
  }
  const reader = request.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new PayloadTooLargeError(max);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export function bodyLimit(maxBytes: number) {
  return new Elysia({ name: "body-limit" })
    .onRequest(({ request }) => {
      const declared = request.headers.get("content-length");
      if (declared !== null && Number(declared) > maxBytes) throw new PayloadTooLargeError(maxBytes);
    })
    .onParse({ as: "global" }, async ({ request, contentType }) => {
      // Every body is answered here, an empty one included (null, whatever its content type or
      // declared length): returning undefined would hand it on to the route's own parse hooks and
      // Elysia's parsers, which refuse an empty JSON body, or throw on `parse: "none"` in a chain.
      const text = await readLimited(request, maxBytes);
      const meta = requestMeta(request);
      if (meta) meta.rawBody = text;
      if (text === "") return null;
      if (contentType === "application/json" || contentType.endsWith("+json")) {
        try {
          return JSON.parse(text);
        } catch {
          if (meta) meta.invalidJson = true;
          return INVALID_JSON;
        }
      }
      return text;
    })
    .onBeforeHandle({ as: "global" }, ({ request }) => {
      if (requestMeta(request)?.invalidJson) throw invalidJsonError();
    });
}
