/**
 * Signature type 3 (POLY_1271, deposit wallets; docs/api.md#submit-signed): the wallet's owner EOA signs an
 * ERC-7739 `TypedDataSign` wrapper around the order, and the signature the exchange passes to the
 * wallet's isValidSignature is
 *
 *   innerSig (65) ‖ appDomainSeparator (32) ‖ contentsHash (32) ‖ contentsType (186) ‖ uint16 length (2)
 *
 * = 317 bytes, exactly as the official client builds it (@polymarket/clob-client-v2 1.1.0,
 * order-utils/exchangeOrderBuilderV2: `buildOrderSignature`). innerSig is the owner's signature over
 *
 *   keccak256(0x1901 ‖ appDomainSeparator ‖ hashStruct(TypedDataSign{contents: Order, name: "DepositWallet",
 *             version: "1", chainId, verifyingContract: the deposit wallet, salt: 0}))
 *
 * The check is offline and complete: the appended domain separator, contents hash, type string and
 * length must be those of the stored order, and innerSig must recover to the agent's owner.
 */
import { keccak256 } from "./keccak256.ts";
import { domainSeparatorOf, orderStructHashBytes, typedDataDigest } from "./order-hash.ts";
import { ORDER_TYPE_STRING, type OrderDomain } from "./order-typed-data.ts";
import { checkRecoverableSignature, type SignatureCheck } from "./verify-order-signature.ts";
import type { OrderMessage } from "../domain/order-message.ts";

const UTF8 = new TextEncoder();
const ORDER_TYPE_BYTES = UTF8.encode(ORDER_TYPE_STRING);

/** The deposit wallet's ERC-7739 domain (name and version) as the official client signs it. */
export const DEPOSIT_WALLET_DOMAIN_NAME = "DepositWallet";
export const DEPOSIT_WALLET_DOMAIN_VERSION = "1";

/** TypedDataSign's EIP-712 type string: its own fields, then the referenced Order type. */
export const TYPED_DATA_SIGN_TYPE_STRING =
  `TypedDataSign(Order contents,string name,string version,uint256 chainId,address verifyingContract,bytes32 salt)${ORDER_TYPE_STRING}`;
const TYPED_DATA_SIGN_TYPEHASH = keccak256(UTF8.encode(TYPED_DATA_SIGN_TYPE_STRING));
const NAME_HASH = keccak256(UTF8.encode(DEPOSIT_WALLET_DOMAIN_NAME));
const VERSION_HASH = keccak256(UTF8.encode(DEPOSIT_WALLET_DOMAIN_VERSION));

/** Bytes of a type-3 signature: 65 + 32 + 32 + 186 + 2. */
export const DEPOSIT_WALLET_SIGNATURE_BYTES = 65 + 32 + 32 + ORDER_TYPE_BYTES.length + 2;
/** Its length as a hex string with 0x (the largest signature submit-signed accepts). */
export const DEPOSIT_WALLET_SIGNATURE_HEX_LENGTH = 2 + 2 * DEPOSIT_WALLET_SIGNATURE_BYTES;

const WRAPPED_RE = new RegExp(`^0x[0-9a-fA-F]{${2 * DEPOSIT_WALLET_SIGNATURE_BYTES}}$`);
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The digest the owner signs for a deposit wallet's order: TypedDataSign under the order's
 * exchange domain. `wallet` is the deposit wallet (the order's signer).
 */
export function typedDataSignDigest(args: { domain: Pick<OrderDomain, "chainId" | "version" | "verifyingContract">; message: OrderMessage }): Uint8Array {
  return typedDataSignDigestOf(domainSeparatorOf(args.domain), orderStructHashBytes(args.message), args.domain.chainId, args.message.signer);
}

function typedDataSignDigestOf(appDomainSeparator: Uint8Array, contentsHash: Uint8Array, chainId: number, wallet: string): Uint8Array {
  if (!ADDRESS_RE.test(wallet)) throw new TypeError("the deposit wallet must be a 20-byte hex address");
  const buf = new Uint8Array(7 * 32);
  buf.set(TYPED_DATA_SIGN_TYPEHASH, 0);
  buf.set(contentsHash, 32);
  buf.set(NAME_HASH, 64);
  buf.set(VERSION_HASH, 96);
  new DataView(buf.buffer).setBigUint64(128 + 24, BigInt(chainId));
  buf.set(Buffer.from(wallet.slice(2), "hex"), 160 + 12);
  // salt: bytes32(0), already zero
  return typedDataDigest(appDomainSeparator, keccak256(buf));
}

/**
 * Checks a type-3 signature against the stored order (its domain and message) and the agent's
 * owner EOA. Reasons are short and never repeat the signature.
 */
export function verifyDepositWalletSignature(args: {
  domain: Pick<OrderDomain, "chainId" | "version" | "verifyingContract">;
  message: OrderMessage;
  signature: string;
  owner: string | null | undefined;
}): SignatureCheck {
  const { domain, message, signature, owner } = args;
  if (typeof owner !== "string" || !ADDRESS_RE.test(owner)) return { ok: false, reason: "the agent has no owner address for its deposit wallet" };
  if (typeof signature !== "string" || !WRAPPED_RE.test(signature)) {
    return {
      ok: false,
      reason: `a deposit wallet (signature type 3) signature must be the ERC-7739 wrapped form: 0x followed by ${2 * DEPOSIT_WALLET_SIGNATURE_BYTES} hex digits`,
    };
  }
  const sig = Buffer.from(signature.slice(2), "hex");
  const appDomainSeparator = domainSeparatorOf(domain);
  const contentsHash = orderStructHashBytes(message);
  const typeEnd = 129 + ORDER_TYPE_BYTES.length;
  if (!equalBytes(sig.subarray(65, 97), appDomainSeparator)) return { ok: false, reason: "the wrapped signature's domain separator is not the order's exchange domain" };
  if (!equalBytes(sig.subarray(97, 129), contentsHash)) return { ok: false, reason: "the wrapped signature's contents hash is not the order's" };
  if (!equalBytes(sig.subarray(129, typeEnd), ORDER_TYPE_BYTES)) return { ok: false, reason: "the wrapped signature's type string is not the Order type" };
  if (sig.readUInt16BE(typeEnd) !== ORDER_TYPE_BYTES.length) return { ok: false, reason: "the wrapped signature's type string length is wrong" };
  const digest = typedDataSignDigestOf(appDomainSeparator, contentsHash, domain.chainId, message.signer);
  const inner = checkRecoverableSignature(sig.subarray(0, 64), sig[64], digest, Buffer.from(owner.slice(2), "hex"));
  if (!inner.ok) {
    return { ok: false, reason: inner.reason === "signature is not by the order's signer" ? "the inner signature is not by the deposit wallet's owner" : `inner ${inner.reason}` };
  }
  return { ok: true };
}
