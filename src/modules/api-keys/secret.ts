/** API key secrets: 32 random bytes behind a readable prefix, stored only as a SHA-256 hash. */
import { createHash, randomBytes } from "node:crypto";

export const API_KEY_PREFIX = "bk_";

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString("base64url");
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** The last 4 characters, enough to tell keys apart in a list. */
export function keyHint(key: string): string {
  return key.slice(-4);
}
