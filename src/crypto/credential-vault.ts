/**
 * Sealed storage for delegated-mode venue credentials (docs/api.md#credentials).
 *
 * - `seal` encrypts with libsodium `crypto_box_seal` to the service's public key. Only the holder of
 *   the master secret key (this process) can open it; the ciphertext is what the database stores.
 * - `withOpened` decrypts only for the duration of one venue call and wipes the plaintext buffer in
 *   `finally`, whether the call succeeded or threw.
 * - Opening keeps, per sealed box, the key libsodium precomputes for it (crypto_box_beforenm of the
 *   box's ephemeral public key and the master secret key) and its nonce: a sealed box is
 *   `epk || crypto_box_easy(m, nonce = BLAKE2b-24(epk || pk), pk, esk)`, so crypto_box_seal_open is
 *   crypto_box_beforenm + crypto_box_open_easy_afternm, and the X25519 step (about 170 µs of this
 *   process's CPU per call, the most of a delegated placement's crypto) is done once per stored row
 *   instead of once per venue call. Nothing in plaintext is kept: the precomputed key opens that one
 *   box only (and only with its ciphertext, read from the database per call), and this process holds
 *   the master secret key, which opens every box, anyway (docs/decisions.md, "Delegated placements:
 *   the service's CPU"). At most SHARED_KEYS of them, the least recently used wiped first.
 *
 * What the wipe does and does not cover, honestly:
 * - The Uint8Array returned by crypto_box_seal_open (the whole JSON plaintext) is zeroed with
 *   sodium.memzero after the callback settles. So is the plaintext buffer built by `seal`.
 * - The credential fields handed to the callback are JS strings decoded from that buffer. JS strings
 *   are immutable and cannot be wiped; they (and anything the venue client derives from them, such as
 *   HMAC inputs and request headers) stay in the heap until the garbage collector reclaims them. We
 *   hold no reference after the call returns, so they become unreachable at once, but the memory is
 *   not overwritten on our schedule.
 * - libsodium-wrappers copies inputs and outputs through the WebAssembly heap and frees those copies
 *   without zeroing them, so a copy of the plaintext (and of the secret key) may linger in freed WASM
 *   memory until it is reused.
 * This is the best a JS runtime offers; the guarantees that matter are kept: plaintext is never
 * logged, returned, persisted or put in an error message.
 */
import sodium from "libsodium-wrappers";
import type { SealedCredentialFields } from "../domain/venue-credentials.ts";

export interface VaultKeyPair {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
}

/** Any failure to seal or open. The message is generic and never contains credential material. */
export class VaultError extends Error {
  override name = "VaultError";
  readonly code = "vault_error";
}

/** Plaintext format version 1: compact JSON `{"v":1,"k":api_key,"s":api_secret,"p"?:passphrase}`. */
const FORMAT_VERSION = 1;
const SEAL_OVERHEAD = 48; // crypto_box_SEALBYTES: ephemeral public key (32) + MAC (16)
const KEY_BYTES = 32;
const NONCE_BYTES = 24; // crypto_box_NONCEBYTES
/** Sealed boxes whose precomputed key is kept: about one per agent with credentials (64 bytes each). */
const SHARED_KEYS = 10_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

export class CredentialVault {
  readonly #publicKey: Uint8Array;
  readonly #secretKey: Uint8Array;
  /** By the box's ephemeral public key (hex): its crypto_box_beforenm key and its nonce; oldest use first. */
  readonly #shared = new Map<string, { key: Uint8Array; nonce: Uint8Array }>();

  /** `keyPair` normally comes from loadOrCreateSealKeyPair, which also awaits `sodium.ready`. */
  constructor(keyPair: VaultKeyPair) {
    if (typeof sodium.crypto_box_seal !== "function") {
      throw new VaultError("libsodium is not ready: await sodium.ready (loadOrCreateSealKeyPair does) first");
    }
    if (!(keyPair?.publicKey instanceof Uint8Array) || keyPair.publicKey.length !== KEY_BYTES) {
      throw new VaultError(`the vault public key must be ${KEY_BYTES} bytes`);
    }
    if (!(keyPair.secretKey instanceof Uint8Array) || keyPair.secretKey.length !== KEY_BYTES) {
      throw new VaultError(`the vault secret key must be ${KEY_BYTES} bytes`);
    }
    this.#publicKey = keyPair.publicKey;
    this.#secretKey = keyPair.secretKey;
  }

  /** The public key credentials are sealed to (safe to share). */
  get publicKey(): Uint8Array {
    return this.#publicKey.slice();
  }

  /**
   * The public key's fingerprint (SHA-256, first 16 bytes, hex): stored once per database, so an
   * instance started with another key refuses to start (src/main.ts). Safe to log.
   */
  fingerprint(): string {
    return new Bun.CryptoHasher("sha256").update(this.#publicKey).digest("hex").slice(0, 32);
  }

  /** Encrypts credentials to the service's public key. Every call gives a different ciphertext. */
  seal(credentials: SealedCredentialFields): Uint8Array {
    const c = credentials as unknown as Record<string, unknown> | null;
    if (c === null || typeof c !== "object") throw new VaultError("credentials must be an object");
    if (typeof c.api_key !== "string" || c.api_key === "") throw new VaultError("api_key must be a non-empty string");
    if (typeof c.api_secret !== "string" || c.api_secret === "") {
      throw new VaultError("api_secret must be a non-empty string");
    }
    if (c.passphrase !== undefined && typeof c.passphrase !== "string") {
      throw new VaultError("passphrase must be a string");
    }
    const doc: Record<string, unknown> = { v: FORMAT_VERSION, k: c.api_key, s: c.api_secret };
    if (c.passphrase !== undefined) doc.p = c.passphrase;

    const plaintext = encoder.encode(JSON.stringify(doc));
    try {
      return sodium.crypto_box_seal(plaintext, this.#publicKey);
    } catch {
      throw new VaultError("sealing the credentials failed");
    } finally {
      sodium.memzero(plaintext);
    }
  }

  /**
   * Opens `ciphertext`, hands the credentials to `fn` for one venue call, and wipes the plaintext
   * buffer when `fn` settles (see the file comment for what cannot be wiped). Do not keep the
   * credentials object or its strings beyond `fn`.
   */
  async withOpened<T>(ciphertext: Uint8Array, fn: (creds: SealedCredentialFields) => Promise<T>): Promise<T> {
    if (!(ciphertext instanceof Uint8Array) || ciphertext.length <= SEAL_OVERHEAD) {
      throw new VaultError("the sealed credentials are malformed");
    }
    let plaintext: Uint8Array | null = null;
    try {
      try {
        plaintext = this.#open(ciphertext);
      } catch {
        throw new VaultError("the sealed credentials cannot be opened with this service's key");
      }
      const creds = decodeCredentials(plaintext);
      return await fn(creds);
    } finally {
      if (plaintext !== null) sodium.memzero(plaintext);
    }
  }

  /** The masked hint shown in API answers: `…` plus the last 4 characters (see `keyHint`). */
  keyHint(apiKey: string): string {
    return keyHint(apiKey);
  }

  /** Wipes the secret key held by this vault, and the precomputed keys; it cannot open anything afterwards. */
  dispose(): void {
    sodium.memzero(this.#secretKey);
    for (const s of this.#shared.values()) sodium.memzero(s.key);
    this.#shared.clear();
  }

  /**
   * crypto_box_seal_open(ciphertext, pk, sk), with the box's precomputed key and nonce kept (see the
   * file comment). Throws (libsodium's error) when the box cannot be opened with this key pair.
   */
  #open(ciphertext: Uint8Array): Uint8Array {
    const epk = ciphertext.subarray(0, KEY_BYTES);
    const id = Buffer.from(epk.buffer, epk.byteOffset, KEY_BYTES).toString("hex");
    const kept = this.#shared.get(id);
    if (kept) {
      this.#shared.delete(id); // most recently used last
      this.#shared.set(id, kept);
      return sodium.crypto_box_open_easy_afternm(ciphertext.subarray(KEY_BYTES), kept.nonce, kept.key);
    }
    const both = new Uint8Array(2 * KEY_BYTES);
    both.set(epk);
    both.set(this.#publicKey, KEY_BYTES);
    const shared = { key: sodium.crypto_box_beforenm(epk, this.#secretKey), nonce: sodium.crypto_generichash(NONCE_BYTES, both, null) };
    let plaintext: Uint8Array;
    try {
      plaintext = sodium.crypto_box_open_easy_afternm(ciphertext.subarray(KEY_BYTES), shared.nonce, shared.key);
    } catch (error) {
      sodium.memzero(shared.key); // a box this key pair cannot open: nothing kept
      throw error;
    }
    if (this.#shared.size >= SHARED_KEYS) {
      const [oldest, old] = this.#shared.entries().next().value as [string, { key: Uint8Array }];
      sodium.memzero(old.key);
      this.#shared.delete(oldest);
    }
    this.#shared.set(id, shared);
    return plaintext;
  }
}

/**
 * `…abcd`: the last 4 characters of a key. Keys shorter than 8 characters reveal nothing (`…`), so
 * a hint never discloses half or more of a short key.
 */
export function keyHint(apiKey: string): string {
  const chars = Array.from(typeof apiKey === "string" ? apiKey : "");
  if (chars.length < 8) return "…";
  return `…${chars.slice(-4).join("")}`;
}

function decodeCredentials(plaintext: Uint8Array): SealedCredentialFields {
  let doc: unknown;
  try {
    doc = JSON.parse(decoder.decode(plaintext));
  } catch {
    throw new VaultError("the sealed credentials have an unknown format");
  }
  const d = doc as Record<string, unknown> | null;
  if (
    d === null ||
    typeof d !== "object" ||
    d.v !== FORMAT_VERSION ||
    typeof d.k !== "string" ||
    typeof d.s !== "string" ||
    (d.p !== undefined && typeof d.p !== "string")
  ) {
    throw new VaultError("the sealed credentials have an unknown format");
  }
  const creds: SealedCredentialFields = { api_key: d.k, api_secret: d.s };
  if (typeof d.p === "string") creds.passphrase = d.p;
  return creds;
}
