/**
 * Keccak-256 (the original Keccak submission as used by Ethereum, NOT FIPS 202
 * SHA3-256): keccak-f[1600] with 24 rounds, rate 136 bytes (capacity 512 bits),
 * padding pad10*1 with the Keccak domain byte 0x01 (SHA3 uses 0x06), and a
 * 32-byte output taken from the first four lanes.
 *
 * Written from the Keccak reference / FIPS 202 for the EIP-712 hot path;
 * equal to @noble/hashes' keccak_256 (test/unit/keccak256.test.ts).
 *
 * State layout. The state is 25 64-bit lanes A[x][y], x, y in 0..4, lane index
 * i = x + 5y. JavaScript has no fast 64-bit integers, so each lane is kept as
 * two 32-bit halves: `state[2i]` is the low half (bits 0..31) and
 * `state[2i + 1]` the high half (bits 32..63). Bytes are absorbed
 * little-endian, so the 136-byte block is simply 34 consecutive little-endian
 * 32-bit words XORed into state[0..33].
 *
 * Permutation. `permute` loads the 50 halves into locals named `aXYl` / `aXYh`
 * (X = column x, Y = row y, l = low, h = high), runs the 24 rounds on locals
 * only, and stores them back. Each round is written out in full:
 *   theta     c[x] = A[x][0] ^ ... ^ A[x][4];  d[x] = c[x-1] ^ rotl(c[x+1], 1);
 *             A[x][y] ^= d[x]
 *   rho + pi  B[y][2x + 3y] = rotl(A[x][y], ROT[x][y])          (locals bXY)
 *   chi       A[x][y] = B[x][y] ^ (~B[x+1][y] & B[x+2][y])
 *   iota      A[0][0] ^= RC[round]
 * with indices mod 5. ROT[x][y] (rho offsets, FIPS 202 section 3.2.2):
 *         y=0 y=1 y=2 y=3 y=4
 *   x=0    0  36   3  41  18
 *   x=1    1  44  10  45   2
 *   x=2   62   6  43  15  61
 *   x=3   28  55  25  21  56
 *   x=4   27  20  39   8  14
 * A 64-bit rotate left by n on (hi, lo) is, for 0 < n < 32,
 *   hi' = (hi << n) | (lo >>> (32 - n)),  lo' = (lo << n) | (hi >>> (32 - n)),
 * and for n > 32 the same with the halves swapped and n - 32.
 *
 * The state lives in one module-level buffer, which is safe because
 * keccak256 is synchronous (no call can interleave with another). The only
 * allocation per call is the 32-byte result.
 */

/** Rate of Keccak-256 in bytes: (1600 - 2 * 256) / 8. */
const RATE = 136;
/** Rate in 32-bit words (34): the part of the state that input is XORed into. */
const RATE_WORDS = RATE / 4;

/** The sponge state between blocks: 25 lanes as 50 int32 halves (lo, hi). */
const state = new Int32Array(50);

/**
 * Round constants RC[0..23] split into low and high halves, generated from the
 * spec's LFSR rc(t) (x^8 + x^6 + x^5 + x^4 + 1): bit 2^j - 1 of RC[round] is
 * rc(j + 7 * round), for j = 0..6.
 */
const RC_LO = new Int32Array(24);
const RC_HI = new Int32Array(24);
{
  let lfsr = 1;
  for (let round = 0; round < 24; round++) {
    for (let j = 0; j < 7; j++) {
      if (lfsr & 1) {
        const bit = (1 << j) - 1;
        if (bit < 32) RC_LO[round] |= 1 << bit;
        else RC_HI[round] |= 1 << (bit - 32);
      }
      lfsr = lfsr & 0x80 ? (lfsr << 1) ^ 0x171 : lfsr << 1;
    }
  }
}

/** keccak-f[1600] on `state`: load into locals, 24 rounds, store back. */
function permute(): void {
  const s = state;
  let a00l = s[0], a00h = s[1],
    a10l = s[2], a10h = s[3],
    a20l = s[4], a20h = s[5],
    a30l = s[6], a30h = s[7],
    a40l = s[8], a40h = s[9],
    a01l = s[10], a01h = s[11],
    a11l = s[12], a11h = s[13],
    a21l = s[14], a21h = s[15],
    a31l = s[16], a31h = s[17],
    a41l = s[18], a41h = s[19],
    a02l = s[20], a02h = s[21],
    a12l = s[22], a12h = s[23],
    a22l = s[24], a22h = s[25],
    a32l = s[26], a32h = s[27],
    a42l = s[28], a42h = s[29],
    a03l = s[30], a03h = s[31],
    a13l = s[32], a13h = s[33],
    a23l = s[34], a23h = s[35],
    a33l = s[36], a33h = s[37],
    a43l = s[38], a43h = s[39],
    a04l = s[40], a04h = s[41],
    a14l = s[42], a14h = s[43],
    a24l = s[44], a24h = s[45],
    a34l = s[46], a34h = s[47],
    a44l = s[48], a44h = s[49];

  for (let round = 0; round < 24; round++) {
    // theta: c[x] = parity of column x; d[x] = c[x-1] ^ rotl1(c[x+1]); a[x][y] ^= d[x]
    const c0l = a00l ^ a01l ^ a02l ^ a03l ^ a04l;
    const c0h = a00h ^ a01h ^ a02h ^ a03h ^ a04h;
    const c1l = a10l ^ a11l ^ a12l ^ a13l ^ a14l;
    const c1h = a10h ^ a11h ^ a12h ^ a13h ^ a14h;
    const c2l = a20l ^ a21l ^ a22l ^ a23l ^ a24l;
    const c2h = a20h ^ a21h ^ a22h ^ a23h ^ a24h;
    const c3l = a30l ^ a31l ^ a32l ^ a33l ^ a34l;
    const c3h = a30h ^ a31h ^ a32h ^ a33h ^ a34h;
    const c4l = a40l ^ a41l ^ a42l ^ a43l ^ a44l;
    const c4h = a40h ^ a41h ^ a42h ^ a43h ^ a44h;
    const d0l = c4l ^ ((c1l << 1) | (c1h >>> 31));
    const d0h = c4h ^ ((c1h << 1) | (c1l >>> 31));
    const d1l = c0l ^ ((c2l << 1) | (c2h >>> 31));
    const d1h = c0h ^ ((c2h << 1) | (c2l >>> 31));
    const d2l = c1l ^ ((c3l << 1) | (c3h >>> 31));
    const d2h = c1h ^ ((c3h << 1) | (c3l >>> 31));
    const d3l = c2l ^ ((c4l << 1) | (c4h >>> 31));
    const d3h = c2h ^ ((c4h << 1) | (c4l >>> 31));
    const d4l = c3l ^ ((c0l << 1) | (c0h >>> 31));
    const d4h = c3h ^ ((c0h << 1) | (c0l >>> 31));
    a00l ^= d0l; a10l ^= d1l; a20l ^= d2l; a30l ^= d3l; a40l ^= d4l;
    a00h ^= d0h; a10h ^= d1h; a20h ^= d2h; a30h ^= d3h; a40h ^= d4h;
    a01l ^= d0l; a11l ^= d1l; a21l ^= d2l; a31l ^= d3l; a41l ^= d4l;
    a01h ^= d0h; a11h ^= d1h; a21h ^= d2h; a31h ^= d3h; a41h ^= d4h;
    a02l ^= d0l; a12l ^= d1l; a22l ^= d2l; a32l ^= d3l; a42l ^= d4l;
    a02h ^= d0h; a12h ^= d1h; a22h ^= d2h; a32h ^= d3h; a42h ^= d4h;
    a03l ^= d0l; a13l ^= d1l; a23l ^= d2l; a33l ^= d3l; a43l ^= d4l;
    a03h ^= d0h; a13h ^= d1h; a23h ^= d2h; a33h ^= d3h; a43h ^= d4h;
    a04l ^= d0l; a14l ^= d1l; a24l ^= d2l; a34l ^= d3l; a44l ^= d4l;
    a04h ^= d0h; a14h ^= d1h; a24h ^= d2h; a34h ^= d3h; a44h ^= d4h;

    // rho + pi: b[y][2x+3y] = rotl(a[x][y], ROT[x][y])
    const b00l = a00l; // a00 -> b00, rotl 0
    const b00h = a00h;
    const b02l = (a10l << 1) | (a10h >>> 31); // a10 -> b02, rotl 1
    const b02h = (a10h << 1) | (a10l >>> 31);
    const b04l = (a20h << 30) | (a20l >>> 2); // a20 -> b04, rotl 62
    const b04h = (a20l << 30) | (a20h >>> 2);
    const b01l = (a30l << 28) | (a30h >>> 4); // a30 -> b01, rotl 28
    const b01h = (a30h << 28) | (a30l >>> 4);
    const b03l = (a40l << 27) | (a40h >>> 5); // a40 -> b03, rotl 27
    const b03h = (a40h << 27) | (a40l >>> 5);
    const b13l = (a01h << 4) | (a01l >>> 28); // a01 -> b13, rotl 36
    const b13h = (a01l << 4) | (a01h >>> 28);
    const b10l = (a11h << 12) | (a11l >>> 20); // a11 -> b10, rotl 44
    const b10h = (a11l << 12) | (a11h >>> 20);
    const b12l = (a21l << 6) | (a21h >>> 26); // a21 -> b12, rotl 6
    const b12h = (a21h << 6) | (a21l >>> 26);
    const b14l = (a31h << 23) | (a31l >>> 9); // a31 -> b14, rotl 55
    const b14h = (a31l << 23) | (a31h >>> 9);
    const b11l = (a41l << 20) | (a41h >>> 12); // a41 -> b11, rotl 20
    const b11h = (a41h << 20) | (a41l >>> 12);
    const b21l = (a02l << 3) | (a02h >>> 29); // a02 -> b21, rotl 3
    const b21h = (a02h << 3) | (a02l >>> 29);
    const b23l = (a12l << 10) | (a12h >>> 22); // a12 -> b23, rotl 10
    const b23h = (a12h << 10) | (a12l >>> 22);
    const b20l = (a22h << 11) | (a22l >>> 21); // a22 -> b20, rotl 43
    const b20h = (a22l << 11) | (a22h >>> 21);
    const b22l = (a32l << 25) | (a32h >>> 7); // a32 -> b22, rotl 25
    const b22h = (a32h << 25) | (a32l >>> 7);
    const b24l = (a42h << 7) | (a42l >>> 25); // a42 -> b24, rotl 39
    const b24h = (a42l << 7) | (a42h >>> 25);
    const b34l = (a03h << 9) | (a03l >>> 23); // a03 -> b34, rotl 41
    const b34h = (a03l << 9) | (a03h >>> 23);
    const b31l = (a13h << 13) | (a13l >>> 19); // a13 -> b31, rotl 45
    const b31h = (a13l << 13) | (a13h >>> 19);
    const b33l = (a23l << 15) | (a23h >>> 17); // a23 -> b33, rotl 15
    const b33h = (a23h << 15) | (a23l >>> 17);
    const b30l = (a33l << 21) | (a33h >>> 11); // a33 -> b30, rotl 21
    const b30h = (a33h << 21) | (a33l >>> 11);
    const b32l = (a43l << 8) | (a43h >>> 24); // a43 -> b32, rotl 8
    const b32h = (a43h << 8) | (a43l >>> 24);
    const b42l = (a04l << 18) | (a04h >>> 14); // a04 -> b42, rotl 18
    const b42h = (a04h << 18) | (a04l >>> 14);
    const b44l = (a14l << 2) | (a14h >>> 30); // a14 -> b44, rotl 2
    const b44h = (a14h << 2) | (a14l >>> 30);
    const b41l = (a24h << 29) | (a24l >>> 3); // a24 -> b41, rotl 61
    const b41h = (a24l << 29) | (a24h >>> 3);
    const b43l = (a34h << 24) | (a34l >>> 8); // a34 -> b43, rotl 56
    const b43h = (a34l << 24) | (a34h >>> 8);
    const b40l = (a44l << 14) | (a44h >>> 18); // a44 -> b40, rotl 14
    const b40h = (a44h << 14) | (a44l >>> 18);

    // chi: a[x][y] = b[x][y] ^ (~b[x+1][y] & b[x+2][y])
    a00l = b00l ^ (~b10l & b20l);
    a00h = b00h ^ (~b10h & b20h);
    a10l = b10l ^ (~b20l & b30l);
    a10h = b10h ^ (~b20h & b30h);
    a20l = b20l ^ (~b30l & b40l);
    a20h = b20h ^ (~b30h & b40h);
    a30l = b30l ^ (~b40l & b00l);
    a30h = b30h ^ (~b40h & b00h);
    a40l = b40l ^ (~b00l & b10l);
    a40h = b40h ^ (~b00h & b10h);
    a01l = b01l ^ (~b11l & b21l);
    a01h = b01h ^ (~b11h & b21h);
    a11l = b11l ^ (~b21l & b31l);
    a11h = b11h ^ (~b21h & b31h);
    a21l = b21l ^ (~b31l & b41l);
    a21h = b21h ^ (~b31h & b41h);
    a31l = b31l ^ (~b41l & b01l);
    a31h = b31h ^ (~b41h & b01h);
    a41l = b41l ^ (~b01l & b11l);
    a41h = b41h ^ (~b01h & b11h);
    a02l = b02l ^ (~b12l & b22l);
    a02h = b02h ^ (~b12h & b22h);
    a12l = b12l ^ (~b22l & b32l);
    a12h = b12h ^ (~b22h & b32h);
    a22l = b22l ^ (~b32l & b42l);
    a22h = b22h ^ (~b32h & b42h);
    a32l = b32l ^ (~b42l & b02l);
    a32h = b32h ^ (~b42h & b02h);
    a42l = b42l ^ (~b02l & b12l);
    a42h = b42h ^ (~b02h & b12h);
    a03l = b03l ^ (~b13l & b23l);
    a03h = b03h ^ (~b13h & b23h);
    a13l = b13l ^ (~b23l & b33l);
    a13h = b13h ^ (~b23h & b33h);
    a23l = b23l ^ (~b33l & b43l);
    a23h = b23h ^ (~b33h & b43h);
    a33l = b33l ^ (~b43l & b03l);
    a33h = b33h ^ (~b43h & b03h);
    a43l = b43l ^ (~b03l & b13l);
    a43h = b43h ^ (~b03h & b13h);
    a04l = b04l ^ (~b14l & b24l);
    a04h = b04h ^ (~b14h & b24h);
    a14l = b14l ^ (~b24l & b34l);
    a14h = b14h ^ (~b24h & b34h);
    a24l = b24l ^ (~b34l & b44l);
    a24h = b24h ^ (~b34h & b44h);
    a34l = b34l ^ (~b44l & b04l);
    a34h = b34h ^ (~b44h & b04h);
    a44l = b44l ^ (~b04l & b14l);
    a44h = b44h ^ (~b04h & b14h);

    // iota
    a00l ^= RC_LO[round];
    a00h ^= RC_HI[round];
  }

  s[0] = a00l; s[1] = a00h;
  s[2] = a10l; s[3] = a10h;
  s[4] = a20l; s[5] = a20h;
  s[6] = a30l; s[7] = a30h;
  s[8] = a40l; s[9] = a40h;
  s[10] = a01l; s[11] = a01h;
  s[12] = a11l; s[13] = a11h;
  s[14] = a21l; s[15] = a21h;
  s[16] = a31l; s[17] = a31h;
  s[18] = a41l; s[19] = a41h;
  s[20] = a02l; s[21] = a02h;
  s[22] = a12l; s[23] = a12h;
  s[24] = a22l; s[25] = a22h;
  s[26] = a32l; s[27] = a32h;
  s[28] = a42l; s[29] = a42h;
  s[30] = a03l; s[31] = a03h;
  s[32] = a13l; s[33] = a13h;
  s[34] = a23l; s[35] = a23h;
  s[36] = a33l; s[37] = a33h;
  s[38] = a43l; s[39] = a43h;
  s[40] = a04l; s[41] = a04h;
  s[42] = a14l; s[43] = a14h;
  s[44] = a24l; s[45] = a24h;
  s[46] = a34l; s[47] = a34h;
  s[48] = a44l; s[49] = a44h;
}

/** XORs `words` little-endian 32-bit words of `data` starting at byte `offset` into state[0..words). */
function absorbWords(data: Uint8Array, offset: number, words: number): void {
  const s = state;
  for (let i = 0; i < words; i++, offset += 4) {
    s[i] ^= data[offset] | (data[offset + 1] << 8) | (data[offset + 2] << 16) | (data[offset + 3] << 24);
  }
}

/** Keccak-256 of `data` (any length, not modified): a new 32-byte array. */
export function keccak256(data: Uint8Array): Uint8Array {
  const s = state;
  s.fill(0);
  const length = data.length;
  let offset = 0;

  // Whole blocks.
  for (; length - offset >= RATE; offset += RATE) {
    absorbWords(data, offset, RATE_WORDS);
    permute();
  }

  // Last block: the remaining 0..135 bytes, then Keccak padding: 0x01 right
  // after the message and 0x80 in the block's last byte (one byte 0x81 when
  // 135 bytes remain).
  const rest = length - offset;
  const words = rest >>> 2;
  absorbWords(data, offset, words);
  offset += words * 4;
  const tailBytes = rest & 3;
  let last = 0;
  for (let k = 0; k < tailBytes; k++) last |= data[offset + k] << (8 * k);
  s[words] ^= last | (0x01 << (8 * tailBytes));
  s[RATE_WORDS - 1] ^= 0x80 << 24;
  permute();

  // Squeeze: the digest is the first 32 bytes (lanes 0..3) of the state, little-endian.
  const out = new Uint8Array(32);
  for (let i = 0, j = 0; i < 8; i++, j += 4) {
    const w = s[i];
    out[j] = w;
    out[j + 1] = w >>> 8;
    out[j + 2] = w >>> 16;
    out[j + 3] = w >>> 24;
  }
  return out;
}
