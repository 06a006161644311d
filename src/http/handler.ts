/**
 * The outer request layer around the Elysia app: request id, body size limit,
 * Idempotency-Key replay, access log and HTTP metrics. It wraps the app's
 * `handle`, so tests that call `service.handle(new Request(...))` see exactly
 * what a network client sees.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, randomUUID } from "node:crypto";
import { IdempotencyConflictError, InternalError, InvalidRequestError, PayloadTooLargeError } from "../errors/errors.ts";
import type { ProblemError } from "../errors/problem-error.ts";
import type { Logger } from "../observability/logger.ts";
import type { IdempotencyStore } from "./idempotency-store.ts";
import { problemResponse } from "./problem-response.ts";
import { type RequestMeta, setRequestMeta } from "./request-meta.ts";

export interface HttpObserver {
  observe(method: string, route: string, status: number, seconds: number): void;
}

export interface HandlerOptions {
  app: { handle(request: Request): Promise<Response> };
  logger: Logger;
  idempotency: IdempotencyStore;
  maxBodyBytes: number;
  observer?: HttpObserver;
  /**
   * Checks the request's credential before an Idempotency-Key record is looked up, so a revoked
   * key cannot replay what it was once answered. Returns the problem to answer, or null.
   */
  checkCredential?: (request: Request) => Promise<ProblemError | null>;
  /** Applies the rate limit to a replayed answer. Returns the problem to answer, or null. */
  chargeReplay?: (request: Request) => Promise<ProblemError | null>;
  /**
   * A retry of a request whose process died while it ran: the original outcome when the request
   * had created its resource (an answer to store and replay), or null to run it again.
   */
  resolveInterrupted?: (request: Request, body: string, reservedId: string | null) => Promise<InterruptedAnswer | null | "run_fresh">;
}

export interface InterruptedAnswer {
  status: number;
  body: string;
  contentType: string;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,100}$/;
const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{1,200}$/;
const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Replaces ids in a path so metrics have few route labels: /v1/agents/agt_x/kill → /v1/agents/:id/kill. */
export function routeLabel(pathname: string): string {
  return pathname
    .split("/")
    .map((seg) => (/^(org|key|agt|ord|dec|kil)_/.test(seg) || /^\d{6,}$/.test(seg) ? ":id" : seg))
    .join("/");
}

/**
 * The path of a request's URL: what `new URL(url).pathname` gives, read off the
 * string. `request.url` is already a serialized URL (scheme://authority/path?query#fragment),
 * so the path runs from the first "/" after the authority to the first "?" or "#".
 */
export function pathOf(url: string): string {
  const scheme = url.indexOf("://");
  if (scheme < 0) return new URL(url).pathname;
  let start = -1;
  let end = url.length;
  for (let i = scheme + 3; i < end; i++) {
    const c = url.charCodeAt(i);
    if (c === 63 /* ? */ || c === 35 /* # */) end = i;
    else if (c === 47 /* / */ && start < 0) start = i;
  }
  return start < 0 ? "/" : url.slice(start, end);
}

export function createHandler(opts: HandlerOptions): (request: Request) => Promise<Response> {
  const { app, logger, idempotency, maxBodyBytes, observer } = opts;

  /** routeLabel by path, for the paths seen lately (bounded: cleared when it grows large). */
  const labels = new Map<string, string>();
  const labelOf = (path: string): string => {
    let label = labels.get(path);
    if (label === undefined) {
      label = routeLabel(path);
      if (labels.size >= 1000) labels.clear();
      labels.set(path, label);
    }
    return label;
  };

  const fail = (e: ProblemError, id: string) => problemResponse(e, id);

  async function readBody(request: Request): Promise<string | ProblemError> {
    const declared = request.headers.get("content-length");
    if (declared !== null && Number(declared) > maxBodyBytes) return new PayloadTooLargeError(maxBodyBytes);
    const text = await request.text();
    if (Buffer.byteLength(text) > maxBodyBytes) return new PayloadTooLargeError(maxBodyBytes);
    return text;
  }

  async function run(request: Request, id: string, meta: RequestMeta): Promise<Response> {
    const method = request.method;
    if (!BODY_METHODS.has(method)) {
      setRequestMeta(request, meta);
      return app.handle(request);
    }
    const declared = request.headers.get("content-length");
    if (declared !== null && Number(declared) > maxBodyBytes) return fail(new PayloadTooLargeError(maxBodyBytes), id);
    const idemKey = method === "POST" ? request.headers.get("idempotency-key") : null;
    if (idemKey === null && declared !== null) {
      setRequestMeta(request, meta);
      return app.handle(request);
    }
    // Bodies of unknown length, and idempotent requests, are read here first.
    const body = await readBody(request);
    if (typeof body !== "string") return fail(body, id);
    const inner = new Request(request.url, { method, headers: request.headers, body: body === "" ? undefined : body });
    setRequestMeta(inner, meta);
    if (idemKey === null) return app.handle(inner);
    if (!IDEMPOTENCY_KEY_RE.test(idemKey)) {
      return fail(new InvalidRequestError("Idempotency-Key must be 1 to 200 printable characters", [{ path: "/headers/idempotency-key", message: "invalid" }]), id);
    }
    const url = new URL(request.url);
    // Records belong to the credential the request carries, so only its holder can replay them
    // (the admin bearer token counts too: POST /v1/orgs answers with a new API key).
    const credential =
      request.headers.get("x-api-key") ??
      request.headers.get("authorization") ??
      request.headers.get("payment-signature") ??
      request.headers.get("x-payment") ??
      "anonymous";
    const scope = sha256(credential);
    const bodyKey = bodyKeyFor(credential, idemKey);
    // Keyed with the caller's credential: bodies can carry secrets (venue credentials), and a plain
    // hash in the database would let a weak one be guessed offline.
    const requestHash = createHmac("sha256", credential).update(`${method} ${url.pathname}${url.search}\n${body}`).digest("hex");
    const refused = opts.checkCredential ? await opts.checkCredential(request) : null;
    if (refused) return fail(refused, id);
    const claim = await idempotency.claim(scope, idemKey, requestHash);
    if (claim.kind === "conflict") return fail(new IdempotencyConflictError(), id);
    if (claim.kind === "claimed") meta.reservedId = claim.reservedId;
    if (claim.kind === "interrupted") {
      // The process that ran it died: answer what it did, or run it again (exactly once).
      const resolved = opts.resolveInterrupted ? await opts.resolveInterrupted(inner, body, claim.reservedId) : null;
      if (resolved && resolved !== "run_fresh") {
        await idempotency.complete(scope, idemKey, resolved.status, sealBody(resolved.body, bodyKey), resolved.contentType);
        return new Response(resolved.body, { status: resolved.status, headers: { "content-type": resolved.contentType, "idempotent-replayed": "true" } });
      }
      if (!(await idempotency.resume(scope, idemKey))) return fail(inProgress(), id);
      // "run_fresh": the reserved id is taken by what the lost run created (and has been retired).
      if (claim.reservedId && resolved !== "run_fresh") meta.reservedId = claim.reservedId;
    }
    if (claim.kind === "in_progress") return fail(inProgress(), id);
    if (claim.kind === "replay") {
      const limited = opts.chargeReplay ? await opts.chargeReplay(request) : null;
      if (limited) return fail(limited, id);
      const replayed = openBody(claim.body, bodyKey);
      if (replayed === null) {
        logger.error("idempotency record cannot be opened", { request_id: id });
        return fail(new InternalError(id), id);
      }
      return new Response(replayed === "" ? null : replayed, {
        status: claim.status,
        headers: { "content-type": claim.contentType, "idempotent-replayed": "true" },
      });
    }
    let response: Response;
    try {
      response = await app.handle(inner);
    } catch (error) {
      await idempotency.release(scope, idemKey).catch(() => undefined);
      throw error;
    }
    const text = await response.text();
    if (isRetryable(response.status, text)) {
      await idempotency.release(scope, idemKey).catch(() => undefined);
    } else {
      try {
        await idempotency.complete(scope, idemKey, response.status, sealBody(text, bodyKey), response.headers.get("content-type") ?? "application/json");
      } catch (error) {
        // Never leave the key "in progress" for a day: forget it, so a retry runs again.
        logger.error("idempotency record not saved", { request_id: id, error });
        await idempotency.release(scope, idemKey).catch(() => undefined);
      }
    }
    return new Response(response.status === 204 ? null : text, { status: response.status, headers: response.headers });
  }

  return async function handle(request: Request): Promise<Response> {
    const started = performance.now();
    const given = request.headers.get("x-request-id");
    const id = given && REQUEST_ID_RE.test(given) ? given : randomUUID();
    const meta: RequestMeta = { id, startedAt: started };
    let response: Response;
    try {
      response = await run(request, id, meta);
    } catch (error) {
      logger.error("unhandled error", { request_id: id, error: error instanceof Error ? { name: error.name, message: error.message } : String(error) });
      response = fail(new InternalError(id), id);
    }
    try {
      response.headers.set("x-request-id", id);
    } catch {
      // Immutable headers (a replayed fetch Response): copy it.
      response = new Response(response.body, { status: response.status, headers: new Headers(response.headers) });
      response.headers.set("x-request-id", id);
    }
    const seconds = (performance.now() - started) / 1000;
    const logged = logger.isEnabled("info");
    if (observer || logged) {
      const path = pathOf(request.url);
      // Paths that match no route share one label, so random paths cannot grow the metrics (or the label cache) without bound.
      const label = meta.unmatched ? null : labelOf(path);
      observer?.observe(request.method, label ?? "unmatched", response.status, seconds);
      if (logged) logger.info("request", { request_id: id, method: request.method, path: label ?? routeLabel(path), status: response.status, ms: Math.round(seconds * 1e4) / 10 });
    }
    return response;
  };
}

/**
 * Answers that say nothing about the request itself are not kept, so a retry runs it again: 401,
 * 429, 503 (nothing was changed) and unexpected 500s. Answers that created something are kept even
 * when they are errors: 502 venue_rejected and 504 venue_timeout carry an order that exists, and a
 * retry must see that order again rather than place a second one.
 */
function isRetryable(status: number, body: string): boolean {
  if (status === 401 || status === 429 || status === 503) return true;
  if (status < 500) return false;
  if (status === 502 || status === 504) {
    const code = problemCode(body);
    return code !== "venue_rejected" && code !== "venue_timeout";
  }
  return true;
}

function inProgress(): IdempotencyConflictError {
  const e = new IdempotencyConflictError();
  (e as { message: string }).message = "a request with this Idempotency-Key is still in progress";
  return e;
}

function problemCode(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { code?: unknown };
    return typeof parsed?.code === "string" ? parsed.code : undefined;
  } catch {
    return undefined;
  }
}

function sha256(s: string): string {
  return createHash("sha256").update(s).digest("hex");
}

/*
 * Stored answers can hold secrets shown once (a new API key), and keys are kept
 * only as hashes. So a stored body is encrypted (AES-256-GCM) under a key
 * derived from the request's credential and Idempotency-Key: the database holds
 * only the credential's hash, and cannot open the body without the caller.
 */
const SEALED_PREFIX = "aes256gcm:";

function bodyKeyFor(credential: string, idemKey: string): Buffer {
  return createHash("sha256").update("brokerage idempotency body\0").update(credential).update("\0").update(idemKey).digest();
}

function sealBody(text: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const sealed = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64");
}

/** The stored body in clear, or null when it cannot be opened with this key. */
function openBody(stored: string, key: Buffer): string | null {
  if (!stored.startsWith(SEALED_PREFIX)) return stored;
  try {
    const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), "base64");
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}
