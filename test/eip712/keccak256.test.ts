import { describe, expect, test } from "bun:test";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { keccak256 } from "../../src/eip712/keccak256.ts";

const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const utf8 = (s: string) => new TextEncoder().encode(s);

/** mulberry32: a small seeded PRNG, so a failing random case can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomBytes(rand: () => number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = Math.floor(rand() * 256);
  return out;
}

/** Hashes with both implementations; throws with `context` and the lengths if they differ or the input changed. */
function check(data: Uint8Array, context: string): void {
  const before = data.slice();
  const got = toHex(keccak256(data));
  if (toHex(data) !== toHex(before)) throw new Error(`${context}: input was modified (length ${data.length})`);
  const want = toHex(keccak_256(data));
  if (got !== want) throw new Error(`${context}: length ${data.length}: got ${got}, want ${want}`);
}

describe("keccak256", () => {
  test("known answers", () => {
    expect(toHex(keccak256(new Uint8Array(0)))).toBe(
      "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470",
    );
    expect(toHex(keccak256(utf8("abc")))).toBe("4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
  });

  test("empty input equals noble", () => {
    expect(toHex(keccak256(new Uint8Array(0)))).toBe(toHex(keccak_256(new Uint8Array(0))));
  });

  test("returns a new 32-byte array on each call", () => {
    const data = utf8("abc");
    const a = keccak256(data);
    const b = keccak256(data);
    expect(a.length).toBe(32);
    expect(a).not.toBe(b);
    a.fill(0);
    expect(toHex(b)).toBe("4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
  });

  test("every length 0..300 (block edges 135/136/137, 271/272/273) equals noble", () => {
    const seed = 0x6b656363;
    const rand = prng(seed);
    for (let length = 0; length <= 300; length++) {
      check(randomBytes(rand, length), `lengths seed ${seed}`);
      check(new Uint8Array(length), "zeros");
      check(new Uint8Array(length).fill(0xff), "0xff bytes");
    }
  });

  test("input with a byteOffset (a subarray view) equals noble and is not modified", () => {
    const rand = prng(7);
    const backing = randomBytes(rand, 600);
    for (const [start, end] of [
      [1, 1],
      [3, 138],
      [5, 278],
      [1, 600],
    ]) {
      check(backing.subarray(start, end), `subarray ${start}..${end}`);
    }
  });

  test("2,000 random inputs up to 2,000 bytes equal noble", () => {
    const seed = Number(process.env.KECCAK_TEST_SEED ?? 20240611);
    const rand = prng(seed);
    for (let i = 0; i < 2000; i++) {
      const length = Math.floor(rand() * 2001);
      check(randomBytes(rand, length), `random seed ${seed} case ${i}`);
    }
  });
});
