/**
 * Request bodies are JSON (CONTRACT 2). A body sent as another media type (form-encoded,
 * multipart, text) is refused with 400 before anything parses it: parsed as a form, a JSON text
 * became one field name, and validation errors then repeated it, secrets included.
 * A JSON body that is not an object (`false`, `0`, `[]`, `null`, a string) is refused too: a
 * schema whose fields are all optional took it for an empty patch.
 */
import { Elysia } from "elysia";
import { InvalidRequestError } from "../errors/errors.ts";

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function jsonBodies() {
  return new Elysia({ name: "json-bodies" })
    .onRequest(({ request }) => {
      const contentType = request.headers.get("content-type");
      if (!contentType || !BODY_METHODS.has(request.method)) return;
      const type = contentType.split(";")[0]!.trim().toLowerCase();
      if (type === "application/json" || type.endsWith("+json")) return;
      throw new InvalidRequestError("the request body must be JSON, sent with Content-Type: application/json", [
        { path: "/headers/content-type", message: "must be application/json" },
      ]);
    })
    .onTransform({ as: "global" }, ({ body }) => {
      if (body === undefined || (typeof body === "object" && body !== null && !Array.isArray(body))) return;
      throw new InvalidRequestError("the request body must be a JSON object", [{ path: "/", message: "must be an object" }]);
    });
}
