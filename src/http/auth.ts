/**
 * Authentication macros for routes: `auth: true` resolves the calling API key
 * into `caller` (401 otherwise) and applies the per-key rate limit;
 * `admin: true` requires `Authorization: Bearer <ADMIN_TOKEN>` and answers 404
 * when no admin token is configured.
 */
import { Elysia } from "elysia";
import { timingSafeEqual } from "node:crypto";
import { NotFoundError, RateLimitedError, UnauthenticatedError } from "../errors/errors.ts";
import type { Caller } from "./caller.ts";
import type { RateLimiter } from "./rate-limit.ts";
import { requestMeta } from "./request-meta.ts";

/** What the macro needs of the API keys (src/modules/api-keys/service.ts): the key a secret names, null when unknown or revoked. */
export interface ApiKeyAuthenticator {
  authenticate(key: string): Promise<{ keyId: string; orgId: string; agentId: string | null } | null>;
}

/** Asked for the caller of a request without X-API-Key (x402, src/modules/payments): null when it does not apply. */
export interface PaidCallerHook {
  callerFor(request: Request): Promise<Caller | null>;
}

/** The authenticated caller goes into the request's meta: Idempotency-Key records belong to it (src/http/idempotency.ts). */
function remember(request: Request, caller: Caller): Caller {
  const meta = requestMeta(request);
  if (meta) meta.caller = caller;
  return caller;
}

type WithAuth = Request & Record<symbol, Promise<Caller> | Caller | undefined>;

export function authPlugin(deps: { apiKeys: ApiKeyAuthenticator; adminToken: string | null; rateLimiter: RateLimiter; payments?: PaidCallerHook }) {
  const admin = deps.adminToken ? Buffer.from(deps.adminToken) : null;

  /**
   * Authenticates a request once (lookup and rate limit), however many hooks ask.
   * The check runs in the parse and transform hooks too, so a caller without a
   * valid key gets 401 before its body, query or path is parsed and validated,
   * and learns nothing about the route's schema.
   */
  // The pending authentication, and once it succeeded the caller, ride on the request under this
  // plugin's own symbols (as the request's meta does, src/http/request-meta.ts): properties, not
  // WeakMap entries, for the hooks that ask.
  const PENDING = Symbol("authentication");
  const CALLER = Symbol("caller");
  const lookup = async (request: Request): Promise<Caller> => {
    const key = request.headers.get("x-api-key");
    if (!key && deps.payments) {
      const paid = await deps.payments.callerFor(request);
      if (paid) return settle(request, paid);
    }
    if (!key || key.length > 200) throw new UnauthenticatedError();
    const found = await deps.apiKeys.authenticate(key);
    if (!found) throw new UnauthenticatedError("the API key is unknown or revoked");
    const wait = deps.rateLimiter.take(found.keyId);
    if (wait > 0) throw new RateLimitedError(wait);
    return settle(request, { kind: "api_key", orgId: found.orgId, keyId: found.keyId, agentId: found.agentId });
  };
  const settle = (request: Request, caller: Caller): Caller => {
    (request as WithAuth)[CALLER] = caller;
    return remember(request, caller);
  };
  const authenticate = (request: Request): Promise<Caller> => {
    let pending = (request as WithAuth)[PENDING] as Promise<Caller> | undefined;
    if (!pending) {
      pending = lookup(request);
      (request as WithAuth)[PENDING] = pending;
    }
    return pending;
  };

  /** Admin routes do not exist without ADMIN_TOKEN (404), whatever the request holds. */
  const checkAdmin = (request: Request): void => {
    if (!admin) throw new NotFoundError("route");
    const header = request.headers.get("authorization") ?? "";
    const given = Buffer.from(header.startsWith("Bearer ") ? header.slice(7) : "");
    if (given.length !== admin.length || !timingSafeEqual(given, admin)) throw new UnauthenticatedError("a valid admin bearer token is required");
  };

  return new Elysia({ name: "auth" }).macro({
    auth: {
      async parse({ request }) {
        await authenticate(request);
      },
      async transform({ request }) {
        await authenticate(request);
      },
      // The transform hook (always before this one) awaited the authentication and refused a request
      // that failed it, so the caller is settled here: no await (Elysia calls a hook without `async` or
      // `await` in its text synchronously).
      resolve({ request }) {
        return { caller: (request as WithAuth)[CALLER] as Caller };
      },
    },
    admin: {
      parse({ request }) {
        checkAdmin(request);
      },
      transform({ request }) {
        checkAdmin(request);
      },
      beforeHandle({ request }) {
        checkAdmin(request);
      },
    },
  });
}
