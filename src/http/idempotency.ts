/**
 * Idempotency-Key replay (docs/api.md#conventions) as lifecycle hooks. It runs after authentication (the route's
 * `auth` or `admin` hooks refuse a bad credential, and charge the rate limit, before this claims
 * anything), so a revoked key never replays what it was once answered; records belong to the
 * authenticated caller (credentialOf: the API key, or the x402 payer's wallet). An x402 payment is
 * checked there too: a used one is let through only when hasStoredAnswer says the request is a replay, and
 * then only to be answered from the record (RequestMeta.replayOnly); a fresh one that comes with a
 * request answered from the record is not charged (RequestMeta.answeredFromRecord). The first request with a key
 * claims it; its answer (success or problem) is stored, sealed, and replayed for 24 hours; the same
 * key with another body is 409. Answers that say nothing about the request (401, 402, 429, 503, 500) are
 * released so a retry runs again. A request that lost its agent's lease while it ran (src/http/
 * request-lease.ts) may have been cut off midway (its order written, maybe sent): its record is left
 * interrupted, never released, and its retry resolves from the database (idempotency-recovery.ts).
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import { Elysia } from "elysia";
import { IdempotencyConflictError, InternalError, InvalidRequestError } from "../errors/errors.ts";
import type { Logger } from "../observability/logger.ts";
import type { Caller } from "./caller.ts";
import type { IdempotencyRecords } from "../domain/idempotency-records.ts";
import { requestMeta } from "./request-meta.ts";
import { requestLostLease } from "./request-lease.ts";

const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{1,200}$/;

/** Where a request's Idempotency-Key record lives and what it must match; null when the request has none. */
interface RecordKey {
  idemKey: string;
  scope: string;
  requestHash: string;
  bodyKey: Buffer;
}

/**
 * Whom a request's records belong to, so only they can replay them: the authenticated caller. An API
 * key's records are its own (the raw key, a secret, also seals the bodies); an x402 payer's are the
 * wallet's, whatever payment header came with the request (each retry of a paying client signs a new
 * authorization, and it is the same caller); the admin bearer token's its own (POST /v1/orgs answers
 * with a new API key); a route without authentication shares one anonymous scope.
 */
function credentialOf(request: Request, caller: Caller | undefined): string {
  if (caller?.kind === "x402") return `x402 payer ${caller.payer.toLowerCase()}`;
  return request.headers.get("x-api-key") ?? request.headers.get("authorization") ?? "anonymous";
}

function recordKeyOf(request: Request, caller: Caller | undefined): RecordKey | null {
  if (request.method !== "POST") return null;
  const idemKey = request.headers.get("idempotency-key");
  if (idemKey === null) return null;
  if (!IDEMPOTENCY_KEY_RE.test(idemKey)) {
    throw new InvalidRequestError("Idempotency-Key must be 1 to 200 printable characters", [{ path: "/headers/idempotency-key", message: "invalid" }]);
  }
  const body = requestMeta(request)?.rawBody ?? "";
  const url = new URL(request.url);
  const credential = credentialOf(request, caller);
  return {
    idemKey,
    scope: sha256(credential),
    bodyKey: bodyKeyFor(credential, idemKey),
    // Keyed with the caller's credential: bodies can carry secrets (venue credentials), and a plain
    // hash in the database would let a weak one be guessed offline.
    requestHash: createHmac("sha256", credential).update(`${request.method} ${url.pathname}${url.search}\n${body}`).digest("hex"),
  };
}

/**
 * Whether the request is a replay of a completed one of `caller`: same Idempotency-Key and request,
 * answer stored. Asked by the x402 payment check, for a payer proven by a payment whose nonce is
 * used (src/modules/payments/payment-service.ts), before the request's caller is settled; the request
 * must then still be answered by the replay itself (RequestMeta.replayOnly), not run.
 */
export async function hasStoredAnswer(store: IdempotencyRecords, request: Request, caller: Caller): Promise<boolean> {
  let k: RecordKey | null;
  try {
    k = recordKeyOf(request, caller);
  } catch {
    return false;
  }
  return k !== null && (await store.hasAnswer(k.scope, k.idemKey, k.requestHash));
}

/** The stored outcome of a request whose process died while it ran, answered to its retry. */
export interface InterruptedAnswer {
  status: number;
  body: string;
  contentType: string;
}

/**
 * A retry of a request whose process died while it ran (its record was marked interrupted at
 * start-up): the original outcome when the request had created its resource (stored and replayed),
 * "run_fresh" to run it again under a new id, or null to run it again under the reserved id.
 */
export type ResolveInterrupted = (request: Request, body: string, reservedId: string | null) => Promise<InterruptedAnswer | null | "run_fresh">;

export function idempotency(deps: { store: IdempotencyRecords; logger: Logger; resolveInterrupted?: ResolveInterrupted }) {
  const { store, logger } = deps;
  return new Elysia({ name: "idempotency" })
    .onBeforeHandle({ as: "global" }, async ({ request, set }) => {
      const meta = requestMeta(request);
      const k = recordKeyOf(request, meta?.caller);
      if (k === null) {
        if (meta?.replayOnly) throw meta.replayOnly;
        return;
      }
      const { idemKey, scope, requestHash, bodyKey } = k;
      const claim = await store.claim(scope, idemKey, requestHash);
      // Admitted only to be answered from the record (x402: its payment is used): anything else is refused.
      if (meta?.replayOnly && claim.kind !== "replay") {
        if (claim.kind === "claimed") await store.release(scope, idemKey, claim.run).catch(() => undefined);
        throw meta.replayOnly;
      }
      // The run this request is of the record (its later writes of the record are conditional on it).
      let run = claim.kind === "claimed" ? claim.run : "";
      // Answered without running the request: a payment that came with it is not charged.
      if (meta && (claim.kind === "replay" || claim.kind === "conflict" || claim.kind === "in_progress")) meta.answeredFromRecord = claim.kind;
      if (claim.kind === "conflict") throw new IdempotencyConflictError();
      if (claim.kind === "in_progress") throw inProgress();
      if (claim.kind === "claimed" && meta) meta.reservedId = claim.reservedId;
      if (claim.kind === "interrupted") {
        // The process that ran it died: answer what it did, or run it again (exactly once).
        const resolved = deps.resolveInterrupted ? await deps.resolveInterrupted(request, meta?.rawBody ?? "", claim.reservedId) : null;
        if (resolved && resolved !== "run_fresh") {
          if (meta) meta.answeredFromRecord = "replay";
          await store.completeInterrupted(scope, idemKey, resolved.status, sealBody(resolved.body, bodyKey), resolved.contentType);
          set.status = resolved.status;
          return new Response(resolved.body, { status: resolved.status, headers: { "content-type": resolved.contentType, "idempotent-replayed": "true" } });
        }
        const resumed = await store.resume(scope, idemKey);
        if (resumed === null) throw inProgress();
        run = resumed;
        // "run_fresh": the reserved id is taken by what the lost run created (and has been retired).
        if (claim.reservedId && resolved !== "run_fresh" && meta) meta.reservedId = claim.reservedId;
      }
      if (claim.kind === "replay") {
        const replayed = openBody(claim.body, bodyKey);
        if (replayed === null) {
          logger.error("idempotency record cannot be opened", { request_id: meta?.id });
          throw new InternalError(meta?.id);
        }
        set.status = claim.status;
        return new Response(replayed === "" ? null : replayed, {
          status: claim.status,
          headers: { "content-type": claim.contentType, "idempotent-replayed": "true" },
        });
      }
      if (!meta) return;
      meta.finish = async (response) => {
        meta.finish = undefined;
        const text = await response.text();
        if (meta.leaseLost || requestLostLease(meta.caller)) {
          // The agent's lease was taken from this instance while the request ran: it may have been cut
          // off after its order was written (or sent). Neither released (a retry would run it again:
          // a second order) nor answered from here (this instance no longer speaks for the agent):
          // left interrupted, its retry answers what the database holds, or runs once if nothing was
          // written (the same reserved id).
          const left = await store.interrupt(scope, idemKey, run).catch(() => false);
          logger.warn("lease lost while the request ran: its Idempotency-Key record is not released but left to its retry to resolve", {
            request_id: meta.id,
            status: response.status,
            left_interrupted: left,
          });
        } else if (isRetryable(response.status, text)) {
          await store.release(scope, idemKey, run).catch(() => undefined);
        } else {
          try {
            await store.complete(scope, idemKey, run, response.status, sealBody(text, bodyKey), response.headers.get("content-type") ?? "application/json");
          } catch (error) {
            // Never leave the key "in progress" for a day: left interrupted, its retry resolves from
            // the database (the resource under the reserved id, or one more run).
            logger.error("idempotency record not saved", { request_id: meta.id, error });
            await store.interrupt(scope, idemKey, run).catch(() => store.release(scope, idemKey, run).catch(() => undefined));
          }
        }
        return new Response(response.status === 204 ? null : text, { status: response.status, headers: response.headers });
      };
    })
    .onAfterHandle({ as: "global" }, async ({ request, responseValue, set }) => {
      const finish = requestMeta(request)?.finish;
      if (!finish) return;
      return finish(toResponse(responseValue, set));
    });
}

function inProgress(): IdempotencyConflictError {
  const e = new IdempotencyConflictError();
  (e as { message: string }).message = "a request with this Idempotency-Key is still in progress";
  return e;
}

/** The answer Elysia would make of a handler's value (the routes answer JSON, text or a Response). */
function toResponse(value: unknown, set: { status?: number | string; headers: Record<string, unknown> }): Response {
  const status = typeof set.status === "number" ? set.status : 200;
  if (value instanceof Response) return value;
  const headers = new Headers();
  for (const [k, v] of Object.entries(set.headers)) if (typeof v === "string") headers.set(k, v);
  if (value === undefined || value === null) return new Response(null, { status, headers });
  if (typeof value === "string") {
    if (!headers.has("content-type")) headers.set("content-type", "text/plain");
    return new Response(value, { status, headers });
  }
  if (!headers.has("content-type")) headers.set("content-type", "application/json");
  return new Response(JSON.stringify(value), { status, headers });
}

/**
 * Answers that say nothing about the request itself are not kept, so a retry runs it again: 401,
 * 402 (x402: payment required or refused, nothing done), 429, 503 (nothing was changed) and unexpected 500s. Answers that created something are kept even
 * when they are errors: 502 venue_rejected and 504 venue_timeout carry an order that exists, and a
 * retry must see that order again rather than place a second one.
 */
function isRetryable(status: number, body: string): boolean {
  if (status === 401 || status === 402 || status === 429 || status === 503) return true;
  if (status < 500) return false;
  if (status === 502 || status === 504) {
    const code = problemCode(body);
    return code !== "venue_rejected" && code !== "venue_timeout";
  }
  return true;
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
