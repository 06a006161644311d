/**
 * secp256k1 arithmetic on plain bigints, for the submit-signed signature check
 * (verify-order-signature.ts): public key recovery, and verification against a
 * signer's key whose multiples are precomputed once.
 *
 * It is written here rather than taken from viem / @noble/curves because those
 * run ~600 / ~2,400 recoveries per second on the development machine, and the
 * service must sustain more. The speed comes from:
 *   - e·G from a fixed-base table (32 tables of 255 affine multiples of
 *     256^i·G, built once on first use): 32 mixed additions, no doublings;
 *   - the variable-base product split with the secp256k1 endomorphism (GLV)
 *     into two ~128-bit scalars in width-w NAF: ~130 doublings, plus ~45
 *     additions (recovery, w = 5, table of R built per call) or ~30 mixed
 *     additions (a known signer, w = 8, affine table built once per signer);
 *   - Jacobian coordinates, so one field inversion at the end (plus one mod N);
 *   - verification against a known key needs no square root.
 * test/unit/verify-order-signature.test.ts and test/unit/secp256k1.test.ts check
 * it against viem and against each other on random keys, digests and signatures.
 */

// secp256k1: y² = x³ + 7 over F_P, group order N.
export const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;
export const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
export const HALF_N = N >> 1n;
const GX = 0x79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798n;
const GY = 0x483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8n;
/** β: cube root of unity mod P; (x, y) ↦ (βx, y) is multiplication by λ. */
const BETA = 0x7ae96a2b657c07106e64479eac3434e99cf0497512f58995c1396c28719501een;
// GLV lattice basis (as in @noble/curves' secp256k1 splitScalar).
const A1 = 0x3086d221a7d46bcde86c90e49284eb15n;
const B1 = -0xe4437ed6010e88286f547fa90abfe4c3n;
const A2 = 0x114ca50f7a8e2f3f657c1108d9d44cfd8n;
const B2 = A1;
const POW_2_128 = 1n << 128n;

/** A point in Jacobian coordinates (x = X/Z², y = Y/Z³); Z = 0 is the point at infinity. */
type Jac = [bigint, bigint, bigint];
const INF: Jac = [0n, 1n, 0n];

/** Multiplicative inverse mod m (a ≠ 0 mod m), extended Euclid. */
function invert(a: bigint, m: bigint): bigint {
  let r0 = a % m;
  if (r0 < 0n) r0 += m;
  let r1 = m;
  let x0 = 1n;
  let x1 = 0n;
  while (r1 !== 0n) {
    const q = r0 / r1;
    let t = r0 - q * r1;
    r0 = r1;
    r1 = t;
    t = x0 - q * x1;
    x0 = x1;
    x1 = t;
  }
  if (r0 !== 1n) throw new RangeError("not invertible");
  return x0 < 0n ? x0 + m : x0;
}

function pow2(x: bigint, k: number): bigint {
  for (let i = 0; i < k; i++) x = (x * x) % P;
  return x;
}

/** √c mod P (P ≡ 3 mod 4: c^((P+1)/4), by the addition chain of libsecp256k1), or -1n if c is not a square. */
function sqrtModP(c: bigint): bigint {
  const b2 = (((c * c) % P) * c) % P;
  const b3 = (((b2 * b2) % P) * c) % P;
  const b6 = (pow2(b3, 3) * b3) % P;
  const b9 = (pow2(b6, 3) * b3) % P;
  const b11 = (pow2(b9, 2) * b2) % P;
  const b22 = (pow2(b11, 11) * b11) % P;
  const b44 = (pow2(b22, 22) * b22) % P;
  const b88 = (pow2(b44, 44) * b44) % P;
  const b176 = (pow2(b88, 88) * b88) % P;
  const b220 = (pow2(b176, 44) * b44) % P;
  const b223 = (pow2(b220, 3) * b3) % P;
  const t1 = (pow2(b223, 23) * b22) % P;
  const t2 = (pow2(t1, 6) * b2) % P;
  const root = pow2(t2, 2);
  return (root * root) % P === c ? root : -1n;
}

/** 2·p (a = 0; written for few bigint operations, which cost more here than their size). */
function dbl(p: Jac): Jac {
  const X = p[0];
  const Y = p[1];
  const Z = p[2];
  if (Z === 0n) return INF;
  const YY = (Y * Y) % P;
  const S = (X * YY * 4n) % P;
  const M = (X * X * 3n) % P;
  let X3 = (M * M - 2n * S) % P;
  if (X3 < 0n) X3 += P;
  let Y3 = (M * (S - X3) - YY * YY * 8n) % P;
  if (Y3 < 0n) Y3 += P;
  return [X3, Y3, (Y * Z * 2n) % P];
}

/** p + (x2, y2) with (x2, y2) affine; y2 negated when `neg`. */
function addAffine(p: Jac, x2: bigint, y2: bigint, neg: boolean): Jac {
  if (neg) y2 = P - y2;
  const X1 = p[0];
  const Y1 = p[1];
  const Z1 = p[2];
  if (Z1 === 0n) return [x2, y2, 1n];
  const Z1Z1 = (Z1 * Z1) % P;
  const U2 = (x2 * Z1Z1) % P;
  const S2 = (((y2 * Z1) % P) * Z1Z1) % P;
  let H = U2 - X1;
  if (H < 0n) H += P;
  let R = S2 - Y1;
  if (R < 0n) R += P;
  if (H === 0n) return R === 0n ? dbl(p) : INF;
  return addTail(X1, Y1, H, R, Z1);
}

/** p + q, both Jacobian; q's y negated when `neg` (add-1998-cmo-2). */
function add(p: Jac, q: Jac, neg: boolean): Jac {
  const X2 = q[0];
  const Y2 = neg ? P - q[1] : q[1];
  const Z2 = q[2];
  if (Z2 === 0n) return p;
  const X1 = p[0];
  const Y1 = p[1];
  const Z1 = p[2];
  if (Z1 === 0n) return [X2, Y2, Z2];
  const Z1Z1 = (Z1 * Z1) % P;
  const Z2Z2 = (Z2 * Z2) % P;
  const U1 = (X1 * Z2Z2) % P;
  const U2 = (X2 * Z1Z1) % P;
  const S1 = (((Y1 * Z2) % P) * Z2Z2) % P;
  const S2 = (((Y2 * Z1) % P) * Z1Z1) % P;
  let H = U2 - U1;
  if (H < 0n) H += P;
  let R = S2 - S1;
  if (R < 0n) R += P;
  if (H === 0n) return R === 0n ? dbl(p) : INF;
  return addTail(U1, S1, H, R, (Z1 * Z2) % P);
}

/**
 * The end both additions share, from U1, S1, H = U2 − U1 ≠ 0 and R = S2 − S1 (all mod P):
 * X3 = R² − H³ − 2·U1·H², Y3 = R·(U1·H² − X3) − S1·H³, Z3 = zH·H.
 */
function addTail(U1: bigint, S1: bigint, H: bigint, R: bigint, zH: bigint): Jac {
  const HH = (H * H) % P;
  const HHH = (H * HH) % P;
  const V = (U1 * HH) % P;
  let X3 = (R * R - HHH - 2n * V) % P;
  if (X3 < 0n) X3 += P;
  let Y3 = (R * (V - X3) - S1 * HHH) % P;
  if (Y3 < 0n) Y3 += P;
  return [X3, Y3, (zH * H) % P];
}

// ---- Fixed-base table for multiples of G: G_X/G_Y[i*256 + d] = d · 256^i · G (affine), d in 1..255.

let G_X: bigint[] | null = null;
let G_Y: bigint[] | null = null;

function buildGTable(): void {
  const xs: bigint[] = new Array(32 * 256).fill(0n);
  const ys: bigint[] = new Array(32 * 256).fill(0n);
  let bx = GX;
  let by = GY;
  const pts: Jac[] = new Array(256);
  for (let i = 0; i < 32; i++) {
    pts[1] = [bx, by, 1n];
    for (let d = 2; d < 256; d++) pts[d] = addAffine(pts[d - 1], bx, by, false);
    pts[0] = addAffine(pts[255], bx, by, false); // 256 · base, the next table's base
    const affine = toAffineAll(pts);
    for (let d = 1; d < 256; d++) {
      xs[i * 256 + d] = affine.xs[d];
      ys[i * 256 + d] = affine.ys[d];
    }
    bx = affine.xs[0];
    by = affine.ys[0];
  }
  G_X = xs;
  G_Y = ys;
}

/** The affine forms of Jacobian points (none at infinity), with one field inversion for all of them. */
function toAffineAll(pts: Jac[]): { xs: bigint[]; ys: bigint[] } {
  const n = pts.length;
  const prefix: bigint[] = new Array(n);
  let acc = 1n;
  for (let i = 0; i < n; i++) {
    prefix[i] = acc;
    acc = (acc * pts[i][2]) % P;
  }
  let inv = invert(acc, P);
  const xs: bigint[] = new Array(n);
  const ys: bigint[] = new Array(n);
  for (let i = n - 1; i >= 0; i--) {
    const zi = (inv * prefix[i]) % P;
    inv = (inv * pts[i][2]) % P;
    const zi2 = (zi * zi) % P;
    xs[i] = (pts[i][0] * zi2) % P;
    ys[i] = (((pts[i][1] * zi2) % P) * zi) % P;
  }
  return { xs, ys };
}

/** Builds the G table now instead of on the first verification (it takes a few ms). */
export function warmUpSecp256k1(): void {
  if (G_X === null) buildGTable();
}

// ---- Scalars.

/** k ≡ k1 + k2·λ (mod N) with |k1|, |k2| < 2^128 (GLV). */
function splitScalar(k: bigint): { k1: bigint; k1neg: boolean; k2: bigint; k2neg: boolean } {
  const c1 = (B2 * k + N / 2n) / N;
  const c2 = (-B1 * k + N / 2n) / N;
  let k1 = (k - c1 * A1 - c2 * A2) % N;
  if (k1 < 0n) k1 += N;
  let k2 = (-c1 * B1 - c2 * B2) % N;
  if (k2 < 0n) k2 += N;
  const k1neg = k1 > POW_2_128;
  const k2neg = k2 > POW_2_128;
  if (k1neg) k1 = N - k1;
  if (k2neg) k2 = N - k2;
  if (k1 > POW_2_128 || k2 > POW_2_128) throw new RangeError("scalar split failed");
  return { k1, k1neg, k2, k2neg };
}

/** Window of s·R's on-the-fly table (odd multiples R … 15R) and of a signer's precomputed one (Q … 127Q). */
const WINDOW = 5;
const KEY_WINDOW = 8;
const NAF_LEN = 140; // ≥ 129 bits + 1 (a digit is written at most at the scalar's bit length)

/** Width-`window` NAF of k ≥ 0 into out (odd digits in ±1..±(2^(window−1) − 1)); returns the number of digits. */
function wnaf(k: bigint, out: Int8Array, window: number): number {
  out.fill(0);
  if (k === 0n) return 0;
  const bits = k.toString(2);
  const L = bits.length;
  const bitAt = (i: number): number => (i < L ? bits.charCodeAt(L - 1 - i) - 48 : 0);
  let bit = 0;
  let carry = 0;
  let last = 0;
  while (bit < L || carry) {
    if (bitAt(bit) === carry) {
      bit++;
      continue;
    }
    let word = 0;
    for (let j = window - 1; j >= 0; j--) word = (word << 1) | bitAt(bit + j);
    word += carry;
    carry = (word >> (window - 1)) & 1;
    word -= carry << window;
    out[bit] = word;
    last = bit;
    bit += window;
  }
  return last + 1;
}

const naf1 = new Int8Array(NAF_LEN);
const naf2 = new Int8Array(NAF_LEN);

const NIBBLE = new Int8Array(128).fill(0);
for (let i = 0; i < 10; i++) NIBBLE[48 + i] = i;
for (let i = 0; i < 6; i++) {
  NIBBLE[65 + i] = 10 + i;
  NIBBLE[97 + i] = 10 + i;
}

/** acc + u·G from the fixed-base table, one byte of u at a time. */
function addMulG(acc: Jac, u: bigint): Jac {
  if (u === 0n) return acc;
  if (G_X === null) buildGTable();
  const gx = G_X as bigint[];
  const gy = G_Y as bigint[];
  const hex = u.toString(16).padStart(64, "0");
  for (let i = 0; i < 32; i++) {
    const j = 62 - 2 * i;
    const byte = (NIBBLE[hex.charCodeAt(j)] << 4) | NIBBLE[hex.charCodeAt(j + 1)];
    if (byte !== 0) acc = addAffine(acc, gx[i * 256 + byte], gy[i * 256 + byte], false);
  }
  return acc;
}

/** The affine form of a Jacobian point, or null for the point at infinity. */
function toAffine(p: Jac): { x: bigint; y: bigint } | null {
  if (p[2] === 0n) return null;
  const zi = invert(p[2], P);
  const zi2 = (zi * zi) % P;
  return { x: (p[0] * zi2) % P, y: (((p[1] * zi2) % P) * zi) % P };
}

/**
 * The public key Q that (r, s, yParity) recovers to over digest e:
 * Q = r⁻¹(s·R − e·G), R the curve point with x = r and y of that parity.
 * Null when r is not the x of a curve point (or Q would be the point at
 * infinity). Requires 0 < r < N and 0 < s < N (checked by the caller).
 */
export function recoverPublicKey(e: bigint, r: bigint, s: bigint, yParity: number): { x: bigint; y: bigint } | null {
  // R = (r, y) with y of the signed parity. (x = r + N, recovery ids 2 and 3, is not used by Ethereum.)
  const c = (((r * r) % P) * r + 7n) % P;
  let ry = sqrtModP(c);
  if (ry < 0n) return null;
  if (Number(ry & 1n) !== yParity) ry = P - ry;

  const rInv = invert(r, N);
  let u1 = (-(e % N) * rInv) % N; // −e·r⁻¹
  if (u1 < 0n) u1 += N;
  const u2 = (s * rInv) % N; // s·r⁻¹ (nonzero)

  // u2·R = k1·R + k2·φ(R), with odd multiples R, 3R, …, 15R.
  const { k1, k1neg, k2, k2neg } = splitScalar(u2);
  const table: Jac[] = new Array(1 << (WINDOW - 2));
  table[0] = [r, ry, 1n];
  const twoR = dbl(table[0]);
  for (let i = 1; i < table.length; i++) table[i] = add(twoR, table[i - 1], false);
  const tableEndo: Jac[] = table.map((p) => [(p[0] * BETA) % P, p[1], p[2]]);

  const len1 = wnaf(k1, naf1, WINDOW);
  const len2 = wnaf(k2, naf2, WINDOW);
  let acc: Jac = INF;
  for (let i = Math.max(len1, len2) - 1; i >= 0; i--) {
    acc = dbl(acc);
    const d1 = naf1[i];
    if (d1 !== 0) acc = d1 > 0 ? add(acc, table[(d1 - 1) >> 1], k1neg) : add(acc, table[(-d1 - 1) >> 1], !k1neg);
    const d2 = naf2[i];
    if (d2 !== 0) acc = d2 > 0 ? add(acc, tableEndo[(d2 - 1) >> 1], k2neg) : add(acc, tableEndo[(-d2 - 1) >> 1], !k2neg);
  }
  return toAffine(addMulG(acc, u1));
}

/** A public key with its odd multiples Q, 3Q, …, 127Q in affine form, and the x of their images under φ. */
export interface SignerKey {
  readonly x: bigint;
  readonly y: bigint;
  readonly xs: readonly bigint[];
  readonly xsEndo: readonly bigint[];
  readonly ys: readonly bigint[];
}

/** Precomputes a public key's table (once per signer: 63 additions and one inversion). Q must be on the curve. */
export function signerKey(x: bigint, y: bigint): SignerKey {
  const count = 1 << (KEY_WINDOW - 2);
  const pts: Jac[] = new Array(count);
  pts[0] = [x, y, 1n];
  const twoQ = dbl(pts[0]);
  for (let i = 1; i < count; i++) pts[i] = add(twoQ, pts[i - 1], false);
  const { xs, ys } = toAffineAll(pts);
  const xsEndo = xs.map((v) => (v * BETA) % P);
  return { x, y, xs, xsEndo, ys };
}

/**
 * Whether (r, s, yParity) over digest e recovers to exactly `key`, without
 * recovering: it does iff R' = s⁻¹(e·G + r·Q) is the point R that recovery
 * would use, i.e. x(R') = r and y(R') has the signed parity (s·R = e·G + r·Q
 * ⟺ Q = r⁻¹(s·R − e·G)). Same preconditions as recoverPublicKey.
 */
export function recoversTo(e: bigint, r: bigint, s: bigint, yParity: number, key: SignerKey): boolean {
  const sInv = invert(s, N);
  const u1 = ((e % N) * sInv) % N; // e·s⁻¹
  const u2 = (r * sInv) % N; // r·s⁻¹ (nonzero)

  // u2·Q = k1·Q + k2·φ(Q) from the signer's table.
  const { k1, k1neg, k2, k2neg } = splitScalar(u2);
  const len1 = wnaf(k1, naf1, KEY_WINDOW);
  const len2 = wnaf(k2, naf2, KEY_WINDOW);
  const { xs, xsEndo, ys } = key;
  let acc: Jac = INF;
  for (let i = Math.max(len1, len2) - 1; i >= 0; i--) {
    acc = dbl(acc);
    const d1 = naf1[i];
    if (d1 !== 0) {
      const j = ((d1 > 0 ? d1 : -d1) - 1) >> 1;
      acc = addAffine(acc, xs[j], ys[j], d1 > 0 === k1neg);
    }
    const d2 = naf2[i];
    if (d2 !== 0) {
      const j = ((d2 > 0 ? d2 : -d2) - 1) >> 1;
      acc = addAffine(acc, xsEndo[j], ys[j], d2 > 0 === k2neg);
    }
  }
  const point = toAffine(addMulG(acc, u1));
  return point !== null && point.x === r && Number(point.y & 1n) === yParity;
}
