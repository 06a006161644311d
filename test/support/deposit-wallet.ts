/**
 * Test-side ERC-7739 signing for deposit wallets (signature type 3), built with viem alone (its
 * EIP-712 encoder, not ours): the owner EOA signs `TypedDataSign{contents: Order, name:
 * "DepositWallet", version: "1", chainId, verifyingContract: wallet, salt: 0}` under the order's
 * exchange domain, and the signature is innerSig ‖ appDomainSeparator ‖ contentsHash ‖ Order type
 * string ‖ uint16 length, the layout of the official client (exchangeOrderBuilderV2.js).
 */
import { concatHex, hashDomain, hashStruct, type LocalAccount, stringToHex, toHex } from "viem";

const ORDER_FIELDS = [
  { name: "salt", type: "uint256" },
  { name: "maker", type: "address" },
  { name: "signer", type: "address" },
  { name: "tokenId", type: "uint256" },
  { name: "makerAmount", type: "uint256" },
  { name: "takerAmount", type: "uint256" },
  { name: "side", type: "uint8" },
  { name: "signatureType", type: "uint8" },
  { name: "timestamp", type: "uint256" },
  { name: "metadata", type: "bytes32" },
  { name: "builder", type: "bytes32" },
] as const;
const DOMAIN_FIELDS = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
] as const;
export const ORDER_TYPE_STRING =
  "Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)";

/** The owner's ERC-7739 wrapped signature of an unsigned order whose signer is the deposit wallet. */
export async function signDepositWalletOrder(owner: LocalAccount, unsigned: { domain: any; message: any }): Promise<`0x${string}`> {
  const { domain, message } = unsigned;
  const inner = await owner.signTypedData({
    domain,
    types: {
      TypedDataSign: [
        { name: "contents", type: "Order" },
        { name: "name", type: "string" },
        { name: "version", type: "string" },
        { name: "chainId", type: "uint256" },
        { name: "verifyingContract", type: "address" },
        { name: "salt", type: "bytes32" },
      ],
      Order: [...ORDER_FIELDS],
    },
    primaryType: "TypedDataSign",
    message: { contents: message, name: "DepositWallet", version: "1", chainId: domain.chainId, verifyingContract: message.signer, salt: `0x${"0".repeat(64)}` },
  });
  const appDomainSeparator = hashDomain({ domain, types: { EIP712Domain: [...DOMAIN_FIELDS] } });
  const contentsHash = hashStruct({ data: message, primaryType: "Order", types: { Order: [...ORDER_FIELDS] } });
  return concatHex([inner, appDomainSeparator, contentsHash, stringToHex(ORDER_TYPE_STRING), toHex(ORDER_TYPE_STRING.length, { size: 2 })]);
}
