/** Identifiers with a type prefix (CONTRACT section 2): org_, key_, agt_, ord_, dec_, kil_. */
import { randomBytes } from "node:crypto";

export type IdPrefix = "org" | "key" | "agt" | "ord" | "dec" | "kil";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** A new id: prefix, underscore, 20 base-36 characters from a CSPRNG (~103 bits). */
export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(20);
  let out = `${prefix}_`;
  for (let i = 0; i < 20; i++) out += ALPHABET[bytes[i] % 36];
  return out;
}

export const idPattern = (prefix: IdPrefix) => `^${prefix}_[0-9a-z]{20}$`;
