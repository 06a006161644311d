/**
 * Test-side ERC-7739 signing for deposit wallets (signature type 3), built with viem alone (its
 * EIP-712 encoder, not ours): the owner EOA signs `TypedDataSign{contents: Order, name:
 * "DepositWallet", version: "1", chainId, verifyingContract: wallet, salt: 0}` under the order's
 * exchange domain, and the signature is innerSig ‖ appDomainSeparator ‖ contentsHash ‖ Order type
 * string ‖ uint16 length, the layout of the official client (exchangeOrderBuilderV2.js).
 */
import { concatHex, hashDomain, hashStruct, type LocalAccount, stringToHex, toHex } from "viem";
import { DOMAIN_TYPE_FIELDS, ORDER_TYPE_FIELDS } from "./payload.ts";

export const ORDER_TYPE_STRING =
  "Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)";

/** The ERC-7739 wrapper's struct: the order as its contents, then the deposit wallet's own domain fields. */
export const TYPED_DATA_SIGN_FIELDS = [
  { name: "contents", type: "Order" },
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
  { name: "salt", type: "bytes32" },
];

/** The owner's ERC-7739 wrapped signature of an unsigned order whose signer is the deposit wallet. */
export async function signDepositWalletOrder(owner: LocalAccount, unsigned: { domain: any; message: any }): Promise<`0x${string}`> {
  const { domain, message } = unsigned;
  const inner = await owner.signTypedData({
    domain,
    types: {
      TypedDataSign: TYPED_DATA_SIGN_FIELDS,
      Order: ORDER_TYPE_FIELDS,
    },
    primaryType: "TypedDataSign",
    message: { contents: message, name: "DepositWallet", version: "1", chainId: domain.chainId, verifyingContract: message.signer, salt: `0x${"0".repeat(64)}` },
  });
  const appDomainSeparator = hashDomain({ domain, types: { EIP712Domain: DOMAIN_TYPE_FIELDS } });
  const contentsHash = hashStruct({ data: message, primaryType: "Order", types: { Order: ORDER_TYPE_FIELDS } });
  return concatHex([inner, appDomainSeparator, contentsHash, stringToHex(ORDER_TYPE_STRING), toHex(ORDER_TYPE_STRING.length, { size: 2 })]);
}
