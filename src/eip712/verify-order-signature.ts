/**
 * Signature check of docs/api.md#submit-signed for signature types 0, 1 and 2 (and the inner ECDSA
 * signature of type 3): a 65-byte (r ‖ s ‖ v) secp256k1 signature with a low s and v 27 or 28
 * (0 or 1 accepted) must recover, over the order's EIP-712 digest, to the expected address.
 *
 * Recovery is libsecp256k1's (secp256k1.ts, the native binding); the address is the last 20 bytes
 * of keccak256(x ‖ y). The caller passes the precomputed digest, so no typed data is re-hashed.
 */
import { keccak256 } from "./keccak256.ts";
import { HALF_N_BYTES, N_BYTES, secp256k1 } from "./secp256k1.ts";

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

const SIGNATURE_RE = /^0x[0-9a-fA-F]{130}$/;
const DIGEST_RE = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

/** Compares a[from..from+32) with the 32 bytes of b, as big-endian numbers. */
function compare32(a: Uint8Array, from: number, b: Uint8Array): number {
  for (let i = 0; i < 32; i++) {
    const d = a[from + i] - b[i];
    if (d !== 0) return d;
  }
  return 0;
}

function isZero32(a: Uint8Array, from: number): boolean {
  for (let i = 0; i < 32; i++) if (a[from + i] !== 0) return false;
  return true;
}

// Reused buffers: everything below is synchronous, so no call can interleave.
const pubOut = new Uint8Array(65);

/**
 * Checks the 64 bytes r ‖ s and the recovery id against `digest` (32 bytes) and the expected
 * address (20 bytes). Reasons are short and never repeat the signature.
 */
export function checkRecoverableSignature(rs: Uint8Array, v: number, digest: Uint8Array, expected: Uint8Array): SignatureCheck {
  const yParity = v === 27 || v === 28 ? v - 27 : v === 0 || v === 1 ? v : -1;
  if (yParity < 0) return { ok: false, reason: "signature v must be 27, 28, 0 or 1" };
  if (isZero32(rs, 0) || compare32(rs, 0, N_BYTES) >= 0) return { ok: false, reason: "signature r is out of range" };
  if (isZero32(rs, 32) || compare32(rs, 32, N_BYTES) >= 0) return { ok: false, reason: "signature s is out of range" };
  if (compare32(rs, 32, HALF_N_BYTES) > 0) return { ok: false, reason: "signature s is not low (malleable form)" };
  if (secp256k1().ecdsaRecover(pubOut, rs, yParity, digest) !== 0) return { ok: false, reason: "signature does not recover to a public key" };
  const h = keccak256(pubOut.subarray(1));
  for (let i = 0; i < 20; i++) {
    if (h[12 + i] !== expected[i]) return { ok: false, reason: "signature is not by the order's signer" };
  }
  return { ok: true };
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
  const sig = Buffer.from(signature.slice(2), "hex");
  return checkRecoverableSignature(
    sig.subarray(0, 64),
    sig[64],
    Buffer.from(digest.slice(2), "hex"),
    Buffer.from(expectedSigner.slice(2), "hex"),
  );
}
