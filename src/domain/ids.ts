/**
 * Identifiers with a type prefix (docs/api.md#conventions): org_, key_, agt_, ord_, dec_, kil_.
 * After the prefix come 20 base-36 characters: 11 that sort by creation time
 * (milliseconds × 4096 + a per-process sequence, so ids made in the same
 * millisecond still sort in the order they were made), then 9 random ones.
 * Ids are not secrets: every route checks the caller's organization.
 */
import { randomFillSync } from "node:crypto";
import { systemClock } from "./clock.ts";

export type IdPrefix = "org" | "key" | "agt" | "ord" | "dec" | "kil" | "pay" | "whk";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";
let lastMs = 0;
let seq = 0;

export function newId(prefix: IdPrefix, now = systemClock.now()): string {
  if (now > lastMs) {
    lastMs = now;
    seq = 0;
  } else if (++seq >= 4096) {
    // More than 4096 ids in one millisecond: borrow the next millisecond.
    lastMs++;
    seq = 0;
  }
  const stamp = lastMs * 4096 + seq;
  // Exact in a double until 2039 (2^53 / 4096 ms); a bigint after that.
  const time = (Number.isSafeInteger(stamp) ? stamp.toString(36) : (BigInt(lastMs) * 4096n + BigInt(seq)).toString(36)).padStart(11, "0");
  if (randomNext + 9 > randomPool.length) {
    randomFillSync(randomPool);
    randomNext = 0;
  }
  let rand = "";
  for (let i = randomNext, end = randomNext + 9; i < end; i++) rand += ALPHABET[randomPool[i] % 36];
  randomPool.fill(0, randomNext, randomNext + 9);
  randomNext += 9;
  return `${prefix}_${time}${rand}`;
}

/** Random bytes from the system's CSPRNG, drawn 4,608 at a time (512 ids) and used once each. */
const randomPool = new Uint8Array(9 * 512);
let randomNext = randomPool.length;

export const idPattern = (prefix: IdPrefix) => `^${prefix}_[0-9a-z]{20}$`;
