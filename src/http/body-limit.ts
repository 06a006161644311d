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

/**
 * The body as text. A declared length within the limit (checked on arrival) is read whole, without a
 * stream reader: the body cannot be longer than its Content-Length, and the length is checked again
 * after (in bytes; a text of n UTF-16 units has at most 3n UTF-8 bytes, so a short one needs no count).
 */
function readLimited(request: Request, max: number): Promise<string> | string {
  if (request.headers.get("content-length") !== null && request.headers.get("transfer-encoding") === null) {
    if (!request.body) return "";
    return request.text().then((text) => {
      if (text.length * 3 > max && Buffer.byteLength(text, "utf8") > max) throw new PayloadTooLargeError(max);
      return text;
    });
  }
  return readStreamed(request, max);
}

async function readStreamed(request: Request, max: number): Promise<string> {
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

/** Whether a media type (parameters already cut off by Elysia) is JSON: application/json or a +json type. */
function isJson(contentType: string): boolean {
  if (contentType === "application/json") return true;
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || type.endsWith("+json");
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
      if (!isJson(contentType)) return refuse(meta, notJsonError());
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
