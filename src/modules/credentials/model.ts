import { t } from "elysia";
import { AgentHaltedError, ForbiddenScopeError, InvalidCredentialsError, InvalidScopeError, NotFoundError } from "../../errors/errors.ts";
import { problemResponses } from "../../errors/problem-model.ts";
import { VenueUnavailableProblem } from "../../errors/venue-unavailable.ts";

/** Scopes a delegated agent's venue credentials may carry (docs/api.md#credentials), in their canonical order. */
export const ALLOWED_SCOPES = ["order:place", "order:cancel"] as const;
/** Scopes that would give the service power over funds: always refused with 400 forbidden_scope. */
export const FORBIDDEN_SCOPES = ["withdraw", "transfer", "balance_modify"] as const;
export type CredentialScope = (typeof ALLOWED_SCOPES)[number];

/**
 * POST /v1/agents/{id}/creds. `scopes` is deliberately an array of plain strings: the scope rules
 * (forbidden_scope, invalid_scope) are applied by the service, so that a forbidden or unknown value
 * gets its own error code instead of the schema's generic invalid_request.
 */
/**
 * The key and passphrase travel in HTTP headers (POLY_API_KEY, POLY_PASSPHRASE): visible ASCII only.
 * The secret is the base64 (standard or url-safe alphabet, padding optional) HMAC key.
 * Both are refused here with 400 rather than failing later at the venue call.
 */
const HEADER_SAFE = "^[\\x21-\\x7e]+$";
const B64 = "[A-Za-z0-9+/_-]";
const BASE64 = `^(?:${B64}{4})*(?:${B64}{2}(?:==)?|${B64}{3}=?)?$`;

export const CredentialsBody = t.Object(
  {
    api_key: t.String({ minLength: 1, maxLength: 256, pattern: HEADER_SAFE, description: "venue API key, visible ASCII (secret: stored sealed, never returned)" }),
    api_secret: t.String({ minLength: 1, maxLength: 512, pattern: BASE64, description: "venue API secret, base64 (secret: stored sealed, never returned)" }),
    passphrase: t.Optional(t.String({ minLength: 1, maxLength: 256, pattern: HEADER_SAFE, description: "venue API passphrase, visible ASCII (secret: stored sealed)" })),
    scopes: t.Array(t.String({ maxLength: 100 }), {
      maxItems: 16,
      description: "a non-empty subset of order:place, order:cancel; withdraw, transfer and balance_modify are refused",
    }),
  },
  {
    additionalProperties: false,
    examples: [{ api_key: "550e8400-e29b-41d4-a716-446655440000", api_secret: "c2VjcmV0LWJhc2U2NA==", passphrase: "venue-passphrase", scopes: ["order:place", "order:cancel"] }],
  },
);
export type CredentialsBody = typeof CredentialsBody.static;

/** OpenAPI responses of the credential routes beside their 200 (docs/api.md#credentials). */
export const credentialsResponses = {
  submit: problemResponses(
    new ForbiddenScopeError(["withdraw"]),
    new InvalidScopeError("unknown scope: order:read", ["order:read"]),
    new InvalidCredentialsError(),
    new NotFoundError("agent"),
    new AgentHaltedError("agt_20ew38ygo3k92ke1kcen"),
    new VenueUnavailableProblem(),
  ),
  remove: problemResponses(new NotFoundError("agent")),
};
