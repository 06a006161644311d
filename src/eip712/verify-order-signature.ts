/**
 * Signature check of docs/api.md#submit-signed: a 65-byte (r ‖ s ‖ v) secp256k1
 * signature with a low s must recover, over the order's EIP-712 digest, to the
 * order's signer.
 *
 * The first signature of a signer is checked by full public key recovery,
 * Q = r⁻¹(s·R − e·G), address = keccak256(Q)[12..], and the key it recovered
 * is kept (at most MAX_SIGNER_KEYS signers, least recently used first out).
 * From the signer's second signature on, a table of the key's multiples is
 * built once and signatures are checked against the key directly
 * (secp256k1.ts recoversTo: the same answer, about a quarter less work). A
 * refusal on that path is checked again by full recovery, so its reason is
 * the same as without the key.
 * The caller passes the precomputed digest, so no typed data is re-hashed.
 */

import { keccak256 } from "./keccak256.ts";
import { HALF_N, N, recoverPublicKey, recoversTo, type SignerKey, signerKey, warmUpSecp256k1 } from "./secp256k1.ts";

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

const SIGNATURE_RE = /^0x[0-9a-fA-F]{130}$/;
const DIGEST_RE = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

/** Signers whose key is kept (with its table, about 10 kB each). */
export const MAX_SIGNER_KEYS = 1024;

/**
 * Known signer keys by lowercase address (no 0x): the bare key after a first signature, its table
 * from the second on (so a signer who signs once costs no table). A Map keeps insertion order,
 * refreshed on use.
 */
const signerKeys = new Map<string, SignerKey | { x: bigint; y: bigint }>();

/** Builds the fixed-base table now instead of on the first verification (it takes a few ms). */
export function warmUpSignatureChecks(): void {
  warmUpSecp256k1();
}

/** Forgets every known signer key (tests). */
export function forgetSignerKeys(): void {
  signerKeys.clear();
}

/** How many signer keys are kept (tests). */
export function knownSignerKeys(): number {
  return signerKeys.size;
}

/** Whether this signer's key is kept (tests). */
export function knowsSigner(address: string): boolean {
  return signerKeys.has(address.slice(2).toLowerCase());
}

const HEX_BYTE: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const pubBuf = new Uint8Array(64);

function writeWord(out: Uint8Array, offset: number, v: bigint): void {
  const hex = v.toString(16).padStart(64, "0");
  for (let i = 0; i < 32; i++) out[offset + i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
}

/** The Ethereum address (lowercase hex, no 0x) of a public key. */
function addressOf(x: bigint, y: bigint): string {
  writeWord(pubBuf, 0, x);
  writeWord(pubBuf, 32, y);
  const h = keccak256(pubBuf);
  let out = "";
  for (let i = 12; i < 32; i++) out += HEX_BYTE[h[i]];
  return out;
}

/**
 * Checks that `signature` (0x + 130 hex digits: r ‖ s ‖ v, v ∈ {27, 28, 0, 1})
 * is a low-s secp256k1 signature over `digest` (the order hash) by
 * `expectedSigner`. Reasons are short and never repeat the signature.
 */
export function verifyOrderSignature(args: {
  digest: `0x${string}` | string;
  signature: string;
  expectedSigner: `0x${string}` | string;
}): SignatureCheck {
  const { digest, signature, expectedSigner } = args;
  if (typeof digest !== "string" || !DIGEST_RE.test(digest)) return { ok: false, reason: "digest must be 32 bytes of hex" };
  if (typeof expectedSigner !== "string" || !ADDRESS_RE.test(expectedSigner)) {
    return { ok: false, reason: "expected signer must be a 20-byte hex address" };
  }
  if (typeof signature !== "string" || !SIGNATURE_RE.test(signature)) {
    return { ok: false, reason: "signature must be 0x followed by 130 hex digits" };
  }
  const r = BigInt(`0x${signature.slice(2, 66)}`);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130, 132), 16);
  const yParity = v === 27 || v === 28 ? v - 27 : v === 0 || v === 1 ? v : -1;
  if (yParity < 0) return { ok: false, reason: "signature v must be 27, 28, 0 or 1" };
  if (r === 0n || r >= N) return { ok: false, reason: "signature r is out of range" };
  if (s === 0n || s >= N) return { ok: false, reason: "signature s is out of range" };
  if (s > HALF_N) return { ok: false, reason: "signature s is not low (malleable form)" };
  const e = BigInt(digest);
  const signer = expectedSigner.slice(2).toLowerCase();
  const kept = signerKeys.get(signer);
  if (kept) {
    const key = "xs" in kept ? kept : signerKey(kept.x, kept.y);
    signerKeys.delete(signer);
    signerKeys.set(signer, key);
    if (recoversTo(e, r, s, yParity, key)) return { ok: true };
  }
  const q = recoverPublicKey(e, r, s, yParity);
  if (q === null) return { ok: false, reason: "signature does not recover to a public key" };
  if (addressOf(q.x, q.y) !== signer) return { ok: false, reason: "signature is not by the order's signer" };
  if (!kept) {
    if (signerKeys.size >= MAX_SIGNER_KEYS) signerKeys.delete(signerKeys.keys().next().value as string);
    signerKeys.set(signer, q);
  }
  return { ok: true };
}
