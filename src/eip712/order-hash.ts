/**
 * order_hash of docs/api.md#the-unsigned-order: keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(message)).
 *
 * Fast path: the type hashes and the domain separator (per chainId, version and exchange)
 * are computed once; the Order struct is 12 static 32-byte words (type hash and
 * 11 fields), encoded by hand into a reused buffer. Equal to viem's
 * hashTypedData for the same typed data (test/unit/order-hash.test.ts).
 */

import { keccak256 } from "./keccak256.ts";
import type { OrderMessage } from "../domain/order-message.ts";
import { type DomainSelector, EIP712_DOMAIN_TYPE_STRING, ORDER_DOMAIN_NAME, ORDER_TYPE_STRING, type OrderDomain, selectOrderDomain } from "./order-typed-data.ts";

const UTF8 = new TextEncoder();
const MAX_UINT256 = (1n << 256n) - 1n;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const BYTES32_RE = /^0x[0-9a-fA-F]{64}$/;
const DECIMAL_RE = /^(0|[1-9]\d*)$/;

const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) NIBBLE[48 + i] = i;
for (let i = 0; i < 6; i++) {
  NIBBLE[65 + i] = 10 + i;
  NIBBLE[97 + i] = 10 + i;
}

/** Writes `hex` (even length, no 0x, already validated) right-aligned into out[offset..offset+32). */
function writeHexWord(out: Uint8Array, offset: number, hex: string, from = 0): void {
  const bytes = (hex.length - from) >> 1;
  const start = offset + 32 - bytes;
  out.fill(0, offset, start);
  for (let i = 0, j = from; i < bytes; i++, j += 2) {
    out[start + i] = (NIBBLE[hex.charCodeAt(j)] << 4) | NIBBLE[hex.charCodeAt(j + 1)];
  }
}

/** Writes a safe non-negative integer as a big-endian uint256 word (the high 24 bytes zero). */
function writeSafeWord(out: Uint8Array, offset: number, n: number): void {
  out.fill(0, offset, offset + 24);
  let hi = Math.floor(n / 0x1_0000_0000);
  let lo = n >>> 0;
  for (let i = offset + 31; i >= offset + 28; i--) {
    out[i] = lo & 0xff;
    lo >>>= 8;
  }
  for (let i = offset + 27; i >= offset + 24; i--) {
    out[i] = hi & 0xff;
    hi >>>= 8;
  }
}

/**
 * The words of the last few large decimal strings (token ids: 77 digits, the same for every order of a
 * market), so each is converted through a bigint once.
 */
const bigWords = new Map<string, Uint8Array>();

function writeUint256(out: Uint8Array, offset: number, value: string | number | bigint, field: string): void {
  let v: bigint;
  if (typeof value === "string" && DECIMAL_RE.test(value)) {
    if (value.length <= 16) {
      // Up to 16 digits a safe integer parses exactly (and anything larger parses to an unsafe one).
      const n = Number(value);
      if (Number.isSafeInteger(n)) return writeSafeWord(out, offset, n);
    }
    const word = bigWords.get(value);
    if (word !== undefined) {
      out.set(word, offset);
      return;
    }
    v = BigInt(value);
  } else if (typeof value === "number" && Number.isSafeInteger(value)) {
    if (value < 0) throw new RangeError(`${field} is out of uint256 range`);
    return writeSafeWord(out, offset, value);
  } else if (typeof value === "bigint") v = value;
  else throw new TypeError(`${field} must be a uint256 decimal string`);
  if (v < 0n || v > MAX_UINT256) throw new RangeError(`${field} is out of uint256 range`);
  let hex = v.toString(16);
  if (hex.length & 1) hex = `0${hex}`;
  writeHexWord(out, offset, hex);
  if (typeof value === "string") {
    if (bigWords.size >= 4096) bigWords.clear();
    bigWords.set(value, out.slice(offset, offset + 32));
  }
}

function writeUint8(out: Uint8Array, offset: number, value: number, field: string): void {
  if (!Number.isInteger(value) || value < 0 || value > 255) throw new RangeError(`${field} must be a uint8`);
  out.fill(0, offset, offset + 31);
  out[offset + 31] = value;
}

/**
 * Words of hex texts already checked and decoded (an agent's addresses, the builder code, the zero
 * metadata: the same on every order), one map per type so a text is only ever reused as what it
 * was checked to be.
 */
const addressWords = new Map<string, Uint8Array>();
const bytes32Words = new Map<string, Uint8Array>();

function writeCheckedHex(out: Uint8Array, offset: number, value: string, words: Map<string, Uint8Array>, re: RegExp, field: string, must: string): void {
  const word = words.get(value);
  if (word !== undefined) {
    out.set(word, offset);
    return;
  }
  if (typeof value !== "string" || !re.test(value)) throw new TypeError(`${field} must be ${must}`);
  writeHexWord(out, offset, value, 2);
  if (words.size >= 4096) words.clear();
  words.set(value, out.slice(offset, offset + 32));
}

function writeAddress(out: Uint8Array, offset: number, value: string, field: string): void {
  writeCheckedHex(out, offset, value, addressWords, ADDRESS_RE, field, "a 20-byte hex address");
}

function writeBytes32(out: Uint8Array, offset: number, value: string, field: string): void {
  writeCheckedHex(out, offset, value, bytes32Words, BYTES32_RE, field, "32 bytes of hex");
}

/** Lowercase hex through the runtime's Uint8Array.prototype.toHex (ES2026). */
function toHex(bytes: Uint8Array): `0x${string}` {
  return `0x${(bytes as Uint8Array & { toHex(): string }).toHex()}`;
}

export const EIP712_DOMAIN_TYPEHASH: Uint8Array = keccak256(UTF8.encode(EIP712_DOMAIN_TYPE_STRING));
export const ORDER_TYPEHASH: Uint8Array = keccak256(UTF8.encode(ORDER_TYPE_STRING));
const NAME_HASH = keccak256(UTF8.encode(ORDER_DOMAIN_NAME));

/** Domain separators by "chainId:version:verifyingContract" (a handful: two chains, three exchanges). */
const domainSeparators = new Map<string, Uint8Array>();

/** The domain separator of an order domain (name fixed to ORDER_DOMAIN_NAME), cached. */
export function domainSeparatorOf(domain: Pick<OrderDomain, "chainId" | "version" | "verifyingContract">): Uint8Array {
  // Orders come in runs on one exchange: the last domain answers without building its key.
  const last = lastDomain;
  if (last !== null && domain.chainId === last.chainId && domain.version === last.version && domain.verifyingContract === last.verifyingContract) return last.sep;
  const sep = domainSeparatorByKey(domain);
  lastDomain = { chainId: domain.chainId, version: domain.version, verifyingContract: domain.verifyingContract, sep };
  return sep;
}

let lastDomain: { chainId: number; version: string; verifyingContract: string; sep: Uint8Array } | null = null;

function domainSeparatorByKey(domain: Pick<OrderDomain, "chainId" | "version" | "verifyingContract">): Uint8Array {
  const key = `${domain.chainId}:${domain.version}:${String(domain.verifyingContract).toLowerCase()}`;
  let sep = domainSeparators.get(key);
  if (sep === undefined) {
    if (!Number.isSafeInteger(domain.chainId) || domain.chainId <= 0) throw new RangeError("chainId must be a positive integer");
    if (domain.version !== "2" && domain.version !== "3") throw new RangeError('domain version must be "2" or "3"');
    const buf = new Uint8Array(5 * 32);
    buf.set(EIP712_DOMAIN_TYPEHASH, 0);
    buf.set(NAME_HASH, 32);
    buf.set(keccak256(UTF8.encode(domain.version)), 64);
    writeUint256(buf, 96, domain.chainId, "chainId");
    writeAddress(buf, 128, domain.verifyingContract, "verifyingContract");
    sep = keccak256(buf);
    if (domainSeparators.size < 64) domainSeparators.set(key, sep);
  }
  return sep;
}

function domainSeparatorBytes(sel: DomainSelector): Uint8Array {
  return domainSeparatorOf(selectOrderDomain(sel));
}

/** The EIP-712 domain separator of the exchange of a market (version default "v1"), cached. */
export function orderDomainSeparator(chainId: number, negRisk: boolean, version: DomainSelector["version"] = "v1"): `0x${string}` {
  return toHex(domainSeparatorBytes({ chainId, negRisk, version }));
}

// Reused buffers: everything below is synchronous, so no call can interleave.
const structBuf = new Uint8Array(12 * 32);
structBuf.set(ORDER_TYPEHASH, 0);
const digestBuf = new Uint8Array(66);
digestBuf[0] = 0x19;
digestBuf[1] = 0x01;

function structHashBytes(m: OrderMessage): Uint8Array {
  if (m === null || typeof m !== "object") throw new TypeError("message must be an object");
  writeUint256(structBuf, 32, m.salt, "salt");
  writeAddress(structBuf, 64, m.maker, "maker");
  writeAddress(structBuf, 96, m.signer, "signer");
  writeUint256(structBuf, 128, m.tokenId, "tokenId");
  writeUint256(structBuf, 160, m.makerAmount, "makerAmount");
  writeUint256(structBuf, 192, m.takerAmount, "takerAmount");
  writeUint8(structBuf, 224, m.side, "side");
  writeUint8(structBuf, 256, m.signatureType, "signatureType");
  writeUint256(structBuf, 288, m.timestamp, "timestamp");
  writeBytes32(structBuf, 320, m.metadata, "metadata");
  writeBytes32(structBuf, 352, m.builder, "builder");
  return keccak256(structBuf);
}

/** hashStruct(message) of the Order type. Throws TypeError/RangeError on a malformed field. */
export function orderStructHash(message: OrderMessage): `0x${string}` {
  return toHex(structHashBytes(message));
}

/** hashStruct(message) as 32 fresh bytes. */
export function orderStructHashBytes(message: OrderMessage): Uint8Array {
  return structHashBytes(message).slice();
}

/** keccak256(0x1901 ‖ domainSeparator ‖ structHash) as 32 fresh bytes. */
export function typedDataDigest(domainSeparator: Uint8Array, structHash: Uint8Array): Uint8Array {
  digestBuf.set(domainSeparator, 2);
  digestBuf.set(structHash, 34);
  return keccak256(digestBuf);
}

/**
 * The EIP-712 digest that the order's signer signs (the order_hash):
 * keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(message)), lowercase hex.
 */
export function orderHash(args: DomainSelector & { message: OrderMessage }): `0x${string}` {
  return toHex(typedDataDigest(domainSeparatorBytes(args), structHashBytes(args.message)));
}

/** The order hash under a stored domain (as buildUnsignedOrder returned it). */
export function orderHashInDomain(domain: Pick<OrderDomain, "chainId" | "version" | "verifyingContract">, message: OrderMessage): `0x${string}` {
  return toHex(typedDataDigest(domainSeparatorOf(domain), structHashBytes(message)));
}
