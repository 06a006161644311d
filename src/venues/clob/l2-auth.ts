/**
 * Polymarket CLOB L2 authentication (docs/architecture.md#venues), as in Polymarket's clob-client-v2
 * (src/signing/hmac.ts, src/headers/index.ts) and py-clob-client-v2 (signing/hmac.py):
 *
 *   POLY_SIGNATURE = urlsafe_base64( HMAC-SHA256( base64decode(secret), timestamp + METHOD + path + body ) )
 *
 * with the "=" padding kept. `path` is the request path without the query string; `body` is the
 * exact body string sent (nothing when there is no body). The timestamp is unix seconds.
 */

import { createHmac, timingSafeEqual } from "node:crypto";
import { systemClock } from "../../domain/clock.ts";

export interface L2SignatureInput {
  /** The API secret, base64 (standard or url-safe alphabet, padding optional). */
  secret: string;
  timestamp: string | number;
  method: string;
  path: string;
  body?: string;
}

export interface L2Credentials {
  api_key: string;
  api_secret: string;
  passphrase?: string;
  /** The address the key belongs to (POLY_ADDRESS). */
  address: string;
}

export interface L2Headers {
  POLY_ADDRESS: string;
  POLY_SIGNATURE: string;
  POLY_TIMESTAMP: string;
  POLY_API_KEY: string;
  POLY_PASSPHRASE: string;
  [name: string]: string;
}

/** Decodes a base64 or url-safe base64 secret into key bytes. */
export function decodeSecret(secret: string): Buffer {
  const std = secret.trim().replace(/-/g, "+").replace(/_/g, "/");
  return Buffer.from(std, "base64");
}

export function buildL2Signature({ secret, timestamp, method, path, body }: L2SignatureInput): string {
  const message = `${timestamp}${method}${path}${body ?? ""}`;
  return createHmac("sha256", decodeSecret(secret))
    .update(message, "utf8")
    .digest("base64")
    .replace(/\+/g, "-")
    .replace(/\//g, "_");
}

/** Constant-time check of a received POLY_SIGNATURE (either base64 alphabet accepted). */
export function verifyL2Signature(input: L2SignatureInput & { signature: string }): boolean {
  const expected = Buffer.from(buildL2Signature(input));
  const got = Buffer.from(input.signature.trim().replace(/\+/g, "-").replace(/\//g, "_"));
  return expected.length === got.length && timingSafeEqual(expected, got);
}

/** The five L2 headers for one request, signed now (or at `timestamp`, unix seconds). */
export function l2Headers(
  creds: L2Credentials,
  req: { method: string; path: string; body?: string; timestamp?: number | string },
): L2Headers {
  const timestamp = String(req.timestamp ?? Math.floor(systemClock.now() / 1000));
  return {
    POLY_ADDRESS: creds.address,
    POLY_SIGNATURE: buildL2Signature({ secret: creds.api_secret, timestamp, method: req.method, path: req.path, body: req.body }),
    POLY_TIMESTAMP: timestamp,
    POLY_API_KEY: creds.api_key,
    POLY_PASSPHRASE: creds.passphrase ?? "",
  };
}
