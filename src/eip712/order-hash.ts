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

const HEX_BYTE: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
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

function writeUint256(out: Uint8Array, offset: number, value: string | number | bigint, field: string): void {
  let v: bigint;
  if (typeof value === "bigint") v = value;
  else if (typeof value === "number" && Number.isSafeInteger(value)) v = BigInt(value);
  else if (typeof value === "string" && DECIMAL_RE.test(value)) v = BigInt(value);
  else throw new TypeError(`${field} must be a uint256 decimal string`);
  if (v < 0n || v > MAX_UINT256) throw new RangeError(`${field} is out of uint256 range`);
  let hex = v.toString(16);
  if (hex.length & 1) hex = `0${hex}`;
  writeHexWord(out, offset, hex);
}

function writeUint8(out: Uint8Array, offset: number, value: number, field: string): void {
  if (!Number.isInteger(value) || value < 0 || value > 255) throw new RangeError(`${field} must be a uint8`);
  out.fill(0, offset, offset + 31);
  out[offset + 31] = value;
}

function writeAddress(out: Uint8Array, offset: number, value: string, field: string): void {
  if (typeof value !== "string" || !ADDRESS_RE.test(value)) throw new TypeError(`${field} must be a 20-byte hex address`);
  writeHexWord(out, offset, value, 2);
}

function writeBytes32(out: Uint8Array, offset: number, value: string, field: string): void {
  if (typeof value !== "string" || !BYTES32_RE.test(value)) throw new TypeError(`${field} must be 32 bytes of hex`);
  writeHexWord(out, offset, value, 2);
}

function toHex(bytes: Uint8Array): `0x${string}` {
  let s = "0x";
  for (let i = 0; i < bytes.length; i++) s += HEX_BYTE[bytes[i]];
  return s as `0x${string}`;
}

export const EIP712_DOMAIN_TYPEHASH: Uint8Array = keccak256(UTF8.encode(EIP712_DOMAIN_TYPE_STRING));
export const ORDER_TYPEHASH: Uint8Array = keccak256(UTF8.encode(ORDER_TYPE_STRING));
const NAME_HASH = keccak256(UTF8.encode(ORDER_DOMAIN_NAME));

/** Domain separators by "chainId:version:verifyingContract" (a handful: two chains, three exchanges). */
const domainSeparators = new Map<string, Uint8Array>();

/** The domain separator of an order domain (name fixed to ORDER_DOMAIN_NAME), cached. */
export function domainSeparatorOf(domain: Pick<OrderDomain, "chainId" | "version" | "verifyingContract">): Uint8Array {
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
