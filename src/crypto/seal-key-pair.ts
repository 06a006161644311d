/**
 * The service's master key pair for credential sealed boxes (docs/api.md#credentials).
 *
 * Where the key pair comes from, first match wins:
 *   1. `secretKeyB64` (SEAL_SECRET_KEY): base64 of the 32-byte X25519 secret key; the public key is
 *      derived with crypto_scalarmult_base. Source "config".
 *   2. `keyFile` (SEAL_KEY_FILE): a key file that must already exist. It is never generated: a missing
 *      configured file usually means a secret volume failed to mount, and a fresh key would silently
 *      make every stored credential undecryptable. Source "file".
 *   3. `${dataDir}/seal-key.json`: read when present (source "file"), otherwise a key pair is generated
 *      (crypto_box_keypair) and written with mode 0600 in a 0700 directory (source "generated").
 *
 * Key file format: JSON `{"public_key": "<base64>", "secret_key": "<base64>"}` (standard base64;
 * URL-safe and unpadded base64 are accepted when reading). `public_key` may be left out of a
 * hand-written file; when present it must match the secret key.
 *
 * Generation is atomic and never clobbers: the key is written to a temporary file (0600, fsynced)
 * which is then hard-linked to the final name. If another process created the file first, the link
 * fails with EEXIST and that process's key is read instead, so two instances starting together on
 * one DATA_DIR agree on one key. Where the file system has no hard links, rename is used.
 *
 * No error message here ever contains key material or key-file contents.
 */
import sodium from "libsodium-wrappers";
import { chmod, link, mkdir, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { randomBytes } from "node:crypto";

export const SEAL_KEY_FILE_NAME = "seal-key.json";
const KEY_BYTES = 32; // crypto_box_PUBLICKEYBYTES == crypto_box_SECRETKEYBYTES == 32 (X25519)
const IS_WINDOWS = process.platform === "win32";

export interface SealKeyPairOptions {
  /** DATA_DIR; the default key file lives at `${dataDir}/seal-key.json`. */
  dataDir: string;
  /** SEAL_KEY_FILE: an existing key file to use instead of the one in DATA_DIR. */
  keyFile?: string | null;
  /** SEAL_SECRET_KEY: base64 of the 32-byte X25519 secret key. */
  secretKeyB64?: string | null;
}

export interface SealKeyPair {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
  source: "config" | "file" | "generated";
  /** Path of the key file read or written (absent for "config"). */
  path?: string;
  /** Non-fatal findings worth a log line, e.g. a key file readable by group or others. */
  warnings: string[];
}

/** A bad or unreadable master key. The message names the variable or file, never key material. */
export class SealKeyError extends Error {
  override name = "SealKeyError";
}

export async function loadOrCreateSealKeyPair(opts: SealKeyPairOptions): Promise<SealKeyPair> {
  await sodium.ready;

  if (opts.secretKeyB64 != null && opts.secretKeyB64 !== "") {
    const secretKey = decodeKey(opts.secretKeyB64, "SEAL_SECRET_KEY");
    return { publicKey: derivePublicKey(secretKey), secretKey, source: "config", warnings: [] };
  }

  if (opts.keyFile != null && opts.keyFile !== "") {
    const path = opts.keyFile;
    const text = await readKeyFileText(path, `SEAL_KEY_FILE (${path})`);
    if (text === null) throw new SealKeyError(`SEAL_KEY_FILE (${path}) does not exist`);
    return { ...parseKeyFile(text, `SEAL_KEY_FILE (${path})`), source: "file", path, warnings: await modeWarnings(path) };
  }

  const path = join(opts.dataDir, SEAL_KEY_FILE_NAME);
  const what = `seal key file ${path}`;
  const existing = await readKeyFileText(path, what);
  if (existing !== null) {
    return { ...parseKeyFile(existing, what), source: "file", path, warnings: await modeWarnings(path) };
  }
  return generateKeyFile(path, what);
}

// ---------------------------------------------------------------------------------------------

function derivePublicKey(secretKey: Uint8Array): Uint8Array {
  return sodium.crypto_scalarmult_base(secretKey);
}

const B64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** Strict base64 (standard or URL-safe, padded or not) → exactly 32 bytes. */
function decodeKey(text: unknown, what: string): Uint8Array {
  if (typeof text !== "string") throw new SealKeyError(`${what} must be a base64 string`);
  const trimmed = text.trim();
  if (!B64.test(trimmed)) throw new SealKeyError(`${what} is not valid base64`);
  let bytes: Uint8Array;
  try {
    const normalized = trimmed.replace(/=+$/, "").replaceAll("-", "+").replaceAll("_", "/");
    bytes = sodium.from_base64(normalized, sodium.base64_variants.ORIGINAL_NO_PADDING);
  } catch {
    // The library's own message is not forwarded: it may quote the input.
    throw new SealKeyError(`${what} is not valid base64`);
  }
  if (bytes.length !== KEY_BYTES) {
    const n = bytes.length;
    sodium.memzero(bytes);
    throw new SealKeyError(`${what} must decode to ${KEY_BYTES} bytes, got ${n}`);
  }
  return bytes;
}

function encodeKey(bytes: Uint8Array): string {
  return sodium.to_base64(bytes, sodium.base64_variants.ORIGINAL);
}

/** The file's text, or null when it does not exist. */
async function readKeyFileText(path: string, what: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code === "ENOENT") return null;
    throw new SealKeyError(`${what} cannot be read (${code ?? "unknown error"})`);
  }
}

function parseKeyFile(text: string, what: string): { publicKey: Uint8Array; secretKey: Uint8Array } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    // JSON.parse messages can quote the text around the error: never forward them.
    throw new SealKeyError(`${what} is not valid JSON; expected {"public_key": "<base64>", "secret_key": "<base64>"}`);
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    throw new SealKeyError(`${what} must hold a JSON object {"public_key", "secret_key"}`);
  }
  const rec = doc as Record<string, unknown>;
  if (rec.secret_key === undefined) throw new SealKeyError(`${what} has no "secret_key"`);
  const secretKey = decodeKey(rec.secret_key, `${what}: "secret_key"`);
  const derived = derivePublicKey(secretKey);
  if (rec.public_key !== undefined) {
    const stated = decodeKey(rec.public_key, `${what}: "public_key"`);
    if (!sodium.memcmp(stated, derived)) {
      sodium.memzero(secretKey);
      throw new SealKeyError(`${what}: "public_key" does not belong to "secret_key"`);
    }
  }
  return { publicKey: derived, secretKey };
}

async function modeWarnings(path: string): Promise<string[]> {
  if (IS_WINDOWS) return [];
  try {
    const mode = (await stat(path)).mode & 0o777;
    if (mode & 0o077) {
      return [`seal key file ${path} has mode ${mode.toString(8).padStart(4, "0")}; it should be 0600 (owner only)`];
    }
  } catch {
    // stat after a successful read failing is not worth failing start-up for.
  }
  return [];
}

async function generateKeyFile(path: string, what: string): Promise<SealKeyPair> {
  const dir = dirname(path);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new SealKeyError(`cannot create directory ${dir} for the seal key (${errCode(e)})`);
  }

  const kp = sodium.crypto_box_keypair();
  const publicKey = kp.publicKey;
  const secretKey = kp.privateKey;
  const body = `${JSON.stringify({ public_key: encodeKey(publicKey), secret_key: encodeKey(secretKey) })}\n`;

  const tmp = join(dir, `.${SEAL_KEY_FILE_NAME}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const fh = await open(tmp, "wx", 0o600);
    try {
      await fh.chmod(0o600); // in case the umask or the file system changed the creation mode
      await fh.writeFile(body, "utf8");
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw new SealKeyError(`cannot write ${what} (${errCode(e)})`);
  }

  let lostRace = false;
  try {
    try {
      await link(tmp, path); // atomic, and fails with EEXIST instead of replacing a key
    } catch (e) {
      const code = errCode(e);
      if (code === "EEXIST") lostRace = true;
      else if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "ENOSYS" || code === "EXDEV") {
        await rename(tmp, path); // file system without hard links: atomic but may replace
      } else throw e;
    }
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw new SealKeyError(`cannot write ${what} (${errCode(e)})`);
  }
  await unlink(tmp).catch(() => {}); // after link (or EEXIST) the temporary name is still there
  await syncDir(dir);

  if (lostRace) {
    // Another process generated the key first: use its key, not ours.
    sodium.memzero(secretKey);
    const text = await readKeyFileText(path, what);
    if (text === null) throw new SealKeyError(`${what} disappeared while it was being created`);
    return { ...parseKeyFile(text, what), source: "file", path, warnings: await modeWarnings(path) };
  }

  if (!IS_WINDOWS) {
    let mode: number;
    try {
      mode = (await stat(path)).mode & 0o777;
    } catch (e) {
      throw new SealKeyError(`cannot check the mode of ${what} (${errCode(e)})`);
    }
    if (mode !== 0o600) {
      await chmod(path, 0o600).catch(() => {});
      const again = (await stat(path).catch(() => null))?.mode;
      if (again === undefined || (again & 0o777) !== 0o600) {
        throw new SealKeyError(
          `${what} was written with mode ${mode.toString(8).padStart(4, "0")} and cannot be made 0600`,
        );
      }
    }
  }

  return { publicKey, secretKey, source: "generated", path, warnings: [] };
}

async function syncDir(dir: string): Promise<void> {
  if (IS_WINDOWS) return;
  try {
    const fh = await open(dir, "r");
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // Best effort: some file systems refuse fsync on a directory.
  }
}

function errCode(e: unknown): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  return typeof code === "string" ? code : "unknown error";
}
