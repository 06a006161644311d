/**
 * The body-size limit and the body parser. The server refuses larger bodies itself (Bun.serve's
 * `maxRequestBodySize`, set from the same MAX_BODY_BYTES in main.ts); this plugin gives the same
 * limit to every other way in (`app.handle`, bodies of undeclared length) and answers it as a 413
 * problem: a declared length is refused before anything is read, a streamed body as soon as it
 * passes the limit. The parser keeps the exact text for the idempotency hash. A body that is not
 * valid JSON, is not a JSON object, or comes as another media type is marked rather than refused here,
 * so authentication still answers first (401 before 400); the error handler and the guard below turn
 * the mark into 400 invalid_request.
 */
import { Elysia } from "elysia";
import { InvalidRequestError, PayloadTooLargeError } from "../errors/errors.ts";
import { type RequestMeta, requestMeta } from "./request-meta.ts";

/** What a body that is not valid JSON parses to (validation then fails, or the guard refuses it). */
export const INVALID_JSON = Object.freeze({ "<invalid json>": true });

export const invalidJsonError = () => new InvalidRequestError("the request body is not valid JSON", [{ path: "/", message: "malformed JSON" }]);
const notJsonError = () =>
  new InvalidRequestError("the request body must be JSON, sent with Content-Type: application/json", [{ path: "/headers/content-type", message: "must be application/json" }]);
const notObjectError = () => new InvalidRequestError("the request body must be a JSON object", [{ path: "/", message: "must be an object" }]);

/** Marks the body refused (answered after authentication) and hands validation a value it fails. */
function refuse(meta: RequestMeta | undefined, error: InvalidRequestError): typeof INVALID_JSON {
  if (meta) meta.invalidBody = error;
  return INVALID_JSON;
}

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
      // Bodies are JSON objects (docs/api.md#conventions). Another media type is refused rather than
      // parsed (as a form, a JSON text became a field name that validation errors then repeated,
      // secrets included), and so is JSON that is not an object (`false`, `0`, `[]`, `null`: a
      // schema whose fields are all optional took it for an empty patch).
      const type = contentType.split(";")[0]!.trim().toLowerCase();
      if (type !== "application/json" && !type.endsWith("+json")) return refuse(meta, notJsonError());
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return refuse(meta, invalidJsonError());
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return refuse(meta, notObjectError());
      return parsed;
    })
    .onBeforeHandle({ as: "global" }, ({ request }) => {
      const refused = requestMeta(request)?.invalidBody;
      if (refused) throw refused;
    });
}
