/**
 * The venue simulator's check of a posted order's signature, for the four signature types of
 * CTF Exchange V2 / ExchangeV3, written on viem independently of the service's codec (src/eip712),
 * so the simulator is a second oracle for what the service forwards:
 *
 * - 0 EOA: a 65-byte low-s ECDSA signature over the order's EIP-712 digest by `signer`; `maker` is `signer`.
 * - 1 POLY_PROXY, 2 POLY_GNOSIS_SAFE: the same signature by `signer`; `maker` is a wallet registered
 *   with the simulator (POST /_sim/wallets) whose owner is `signer`. The simulator does not derive proxy
 *   or Safe addresses (the official client does not either: its funder address is given to it).
 * - 3 POLY_1271 (deposit wallet, ERC-1271 with ERC-7739 nesting): `maker` = `signer` = a registered
 *   wallet; the signature is innerSig (65) ‖ appDomainSeparator (32) ‖ contentsHash (32) ‖ the Order
 *   type string ‖ its length (2 bytes); innerSig recovers to the wallet's owner over the digest of
 *   TypedDataSign{contents: order, name "DepositWallet", version "1", chainId, verifyingContract: wallet,
 *   salt 0} under the exchange's domain, and the three trailing parts equal the order's own.
 */
import { hashDomain, hashStruct, hashTypedData, type Hex, recoverAddress, toHex } from "viem";
import { ORDER_TYPE_STRING, ORDER_TYPES } from "../../eip712/order-typed-data.ts";
import type { OrderDomain as VenueOrderDomain } from "../../eip712/order-typed-data.ts";
import type { OrderMessage } from "../venue.ts";

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = N / 2n;
const ZERO32 = `0x${"00".repeat(32)}` as const;
const ECDSA_RE = /^0x[0-9a-fA-F]{130}$/;
const HEX_RE = /^0x(?:[0-9a-fA-F]{2})*$/;

const DOMAIN_TYPE = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
] as const;

const TYPED_DATA_SIGN = [
  { name: "contents", type: "Order" },
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
  { name: "salt", type: "bytes32" },
] as const;

export type SignatureVerdict = { ok: true } | { ok: false; reason: string };

/** The order as viem typed-data values (uint256 as bigint). */
function orderValues(o: OrderMessage) {
  return {
    salt: BigInt(o.salt),
    maker: o.maker,
    signer: o.signer,
    tokenId: BigInt(o.tokenId),
    makerAmount: BigInt(o.makerAmount),
    takerAmount: BigInt(o.takerAmount),
    side: o.side,
    signatureType: o.signatureType,
    timestamp: BigInt(o.timestamp),
    metadata: o.metadata,
    builder: o.builder,
  };
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Recovers the signer of a 65-byte signature over `hash`, refusing the malleable high-s form. */
async function recoverLowS(hash: Hex, signature: string): Promise<string | null> {
  if (!ECDSA_RE.test(signature)) return null;
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130, 132), 16);
  if (s === 0n || s > HALF_N || ![0, 1, 27, 28].includes(v)) return null;
  try {
    return await recoverAddress({ hash, signature: signature as Hex });
  } catch {
    return null;
  }
}

/**
 * Verifies `signature` for `order` under `domain`. `ownerOf(wallet)` answers the owner registered for
 * a proxy, Safe or deposit wallet (lowercase or checksummed), or undefined.
 */
export async function verifyPostedOrder(args: {
  order: OrderMessage;
  signature: string;
  domain: VenueOrderDomain;
  ownerOf: (wallet: string) => string | undefined;
}): Promise<SignatureVerdict> {
  const { order, signature, domain, ownerOf } = args;
  if (typeof signature !== "string" || !HEX_RE.test(signature)) return { ok: false, reason: "signature is not hex" };
  const type = order.signatureType;
  if (type === 0 || type === 1 || type === 2) {
    const digest = hashTypedData({ domain, types: { Order: ORDER_TYPES.Order }, primaryType: "Order", message: orderValues(order) });
    const recovered = await recoverLowS(digest, signature);
    if (!recovered || !same(recovered, order.signer)) return { ok: false, reason: "the signature is not the order signer's" };
    if (type === 0) return same(order.maker, order.signer) ? { ok: true } : { ok: false, reason: "an EOA order's maker must be its signer" };
    const owner = ownerOf(order.maker);
    if (!owner || !same(owner, order.signer)) return { ok: false, reason: "the maker is not a wallet of the signer" };
    return { ok: true };
  }
  if (type === 3) {
    if (!same(order.maker, order.signer)) return { ok: false, reason: "a deposit wallet order's maker must be its signer" };
    const owner = ownerOf(order.signer);
    if (!owner) return { ok: false, reason: "the signer is not a registered deposit wallet" };
    const typeHex = toHex(ORDER_TYPE_STRING).slice(2);
    const expectedLength = 2 + (65 + 32 + 32) * 2 + typeHex.length + 4;
    if (signature.length !== expectedLength) return { ok: false, reason: "malformed deposit wallet signature" };
    const inner = signature.slice(0, 2 + 130);
    const appDomain = `0x${signature.slice(132, 196)}`;
    const contents = `0x${signature.slice(196, 260)}`;
    const typeString = signature.slice(260, 260 + typeHex.length);
    const length = Number.parseInt(signature.slice(260 + typeHex.length), 16);
    const message = orderValues(order);
    if (!same(appDomain, hashDomain({ domain: { ...domain, chainId: BigInt(domain.chainId) }, types: { EIP712Domain: DOMAIN_TYPE } }))) return { ok: false, reason: "wrong app domain separator" };
    if (!same(contents, hashStruct({ data: message, primaryType: "Order", types: { Order: ORDER_TYPES.Order } }))) {
      return { ok: false, reason: "wrong contents hash" };
    }
    if (!same(typeString, typeHex) || length !== ORDER_TYPE_STRING.length) return { ok: false, reason: "wrong contents type" };
    const digest = hashTypedData({
      domain,
      types: { TypedDataSign: TYPED_DATA_SIGN, Order: ORDER_TYPES.Order },
      primaryType: "TypedDataSign",
      message: { contents: message, name: "DepositWallet", version: "1", chainId: BigInt(domain.chainId), verifyingContract: order.signer, salt: ZERO32 },
    });
    const recovered = await recoverLowS(digest as Hex, inner);
    if (!recovered || !same(recovered, owner)) return { ok: false, reason: "the signature is not the deposit wallet owner's" };
    return { ok: true };
  }
  return { ok: false, reason: `unknown signature type ${type}` };
}
