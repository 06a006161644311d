/**
 * venue_auth for submit-signed (the service's docs/api.md#submit-signed): the L2 headers Polymarket requires on POST /order,
 * computed by the order's signer over the exact body the service will send. The body is the official
 * client's (clob-client-v2 orderToJsonV2, then JSON.stringify), the layout of the service's
 * serializePostOrderBody (src/venues/clob/clob-venue.ts), byte for byte:
 *
 *   {"deferExec":false,"postOnly":false,"order":{"salt":<int>,"maker":"…","signer":"…","tokenId":"…",
 *   "makerAmount":"…","takerAmount":"…","side":"BUY"|"SELL","signatureType":<n>,"timestamp":"…",
 *   "expiration":"…","metadata":"…","builder":"…","signature":"…"},"owner":"<api key>","orderType":"GTC"|…}
 *
 * POLY_SIGNATURE = url-safe base64 (padded) of HMAC-SHA256(base64decode(secret), timestamp + "POST" + "/order" + body),
 * with node:crypto (Node.js 20+ and Bun).
 *
 * The same pass-through serves cancels in payload mode (docs/api.md#payload-mode-cancels, #post-v1agentsidkill),
 * over the requests the official client's cancelOrder and cancelAll send:
 *   - DELETE /v1/orders/{id}: "DELETE" + "/order" + `{"orderID":"<venue_order_id>"}` (buildCancelVenueAuth);
 *   - POST /v1/agents/{id}/kill: "DELETE" + "/cancel-all", no body (buildCancelAllVenueAuth).
 */
import { createHmac } from "node:crypto";
import { getAddress } from "viem";
import type { OrderMessage, OrderType, VenueAuth } from "./types.js";

/** The signer's own L2 API credentials at the venue. Used locally only; the secret never leaves the process. */
export interface VenueCredentials {
  api_key: string;
  /** base64 (standard or url-safe) API secret. */
  api_secret: string;
  passphrase: string;
  /** POLY_ADDRESS; the service uses the order's signer when absent. */
  address?: string;
}

export interface PostOrderBodyInput {
  order: OrderMessage;
  signature: string;
  order_type: OrderType;
  /** "0" unless GTD. */
  expiration: string;
  /** The API key of the order's owner (the signer's venue API key). */
  owner: string;
}

export function serializePostOrderBody(req: PostOrderBodyInput): string {
  const o = req.order;
  if (typeof o.salt !== "string" || !/^[0-9]+$/.test(o.salt)) throw new TypeError("order.salt must be a decimal string");
  if (!Number.isInteger(o.signatureType)) throw new TypeError("order.signatureType must be an integer");
  if (o.side !== 0 && o.side !== 1) throw new TypeError("order.side must be 0 or 1");
  const s = JSON.stringify;
  const expiration = req.expiration && req.expiration !== "" ? req.expiration : "0";
  return (
    `{"deferExec":false,"postOnly":false,` +
    `"order":{"salt":${BigInt(o.salt).toString()},"maker":${s(checksummed(o.maker))},"signer":${s(checksummed(o.signer))},"tokenId":${s(o.tokenId)},` +
    `"makerAmount":${s(o.makerAmount)},"takerAmount":${s(o.takerAmount)},"side":${s(o.side === 0 ? "BUY" : "SELL")},` +
    `"signatureType":${o.signatureType},"timestamp":${s(o.timestamp)},"expiration":${s(expiration)},` +
    `"metadata":${s(o.metadata)},"builder":${s(o.builder)},"signature":${s(req.signature)}},` +
    `"owner":${s(req.owner)},"orderType":${s(req.order_type)}}`
  );
}

/** EIP-55 checksummed, as the official client and the service write addresses in the body; other text as it is. */
function checksummed(address: string): string {
  try {
    return getAddress(address);
  } catch {
    return address;
  }
}

/** HMAC-SHA256 L2 signature: url-safe base64 with padding. */
export function buildL2Signature(input: { secret: string; timestamp: string | number; method: string; path: string; body?: string }): string {
  const key = Buffer.from(input.secret.trim().replace(/-/g, "+").replace(/_/g, "/"), "base64");
  return createHmac("sha256", key)
    .update(`${input.timestamp}${input.method}${input.path}${input.body ?? ""}`, "utf8")
    .digest("base64")
    .replace(/\+/g, "-")
    .replace(/\//g, "_");
}

/** The venue_auth member of submit-signed for this order and signature, timestamped now (unix seconds) unless given. */
export function buildVenueAuth(input: {
  credentials: VenueCredentials;
  order: OrderMessage;
  signature: string;
  order_type: OrderType;
  expiration: string;
  timestamp?: number | string;
}): VenueAuth {
  const timestamp = String(input.timestamp ?? Math.floor(Date.now() / 1000));
  const body = serializePostOrderBody({
    order: input.order,
    signature: input.signature,
    order_type: input.order_type,
    expiration: input.expiration,
    owner: input.credentials.api_key,
  });
  const signature = buildL2Signature({ secret: input.credentials.api_secret, timestamp, method: "POST", path: "/order", body });
  const auth: VenueAuth = { api_key: input.credentials.api_key, passphrase: input.credentials.passphrase, timestamp, signature };
  if (input.credentials.address) auth.address = input.credentials.address;
  return auth;
}

/** The exact DELETE /order body the service sends to cancel one order (the official client's JSON.stringify({orderID})). */
export function serializeCancelOrderBody(venueOrderId: string): string {
  return JSON.stringify({ orderID: venueOrderId });
}

function passThrough(credentials: VenueCredentials, timestamp: string, signature: string): VenueAuth {
  const auth: VenueAuth = { api_key: credentials.api_key, passphrase: credentials.passphrase, timestamp, signature };
  if (credentials.address) auth.address = credentials.address;
  return auth;
}

/**
 * The venue_auth of DELETE /v1/orders/{id} for a payload-mode order at a venue that cancels only with the
 * owner's keys: L2 headers over DELETE /order {"orderID": venue_order_id}, timestamped now unless given.
 */
export function buildCancelVenueAuth(input: { credentials: VenueCredentials; venue_order_id: string; timestamp?: number | string }): VenueAuth {
  if (typeof input.venue_order_id !== "string" || input.venue_order_id === "") throw new TypeError("venue_order_id is required");
  const timestamp = String(input.timestamp ?? Math.floor(Date.now() / 1000));
  const body = serializeCancelOrderBody(input.venue_order_id);
  return passThrough(input.credentials, timestamp, buildL2Signature({ secret: input.credentials.api_secret, timestamp, method: "DELETE", path: "/order", body }));
}

/**
 * The venue_auth of POST /v1/agents/{id}/kill for a payload-mode agent: L2 headers over DELETE /cancel-all
 * (no body); the venue cancels every open order of that account. Timestamped now unless given.
 */
export function buildCancelAllVenueAuth(input: { credentials: VenueCredentials; timestamp?: number | string }): VenueAuth {
  const timestamp = String(input.timestamp ?? Math.floor(Date.now() / 1000));
  return passThrough(input.credentials, timestamp, buildL2Signature({ secret: input.credentials.api_secret, timestamp, method: "DELETE", path: "/cancel-all" }));
}
