/**
 * Signing an `unsigned_order` (the service's docs/api.md#the-unsigned-order): the typed data goes to the signer exactly as the
 * service answered it, so the signature covers the order the risk engine approved and nothing else.
 * Signature types 0, 1 and 2: the EIP-712 signature of the order. Type 3 (deposit wallet, ERC-1271
 * with ERC-7739 nesting): the owner EOA signs `TypedDataSign{contents: Order, name: "DepositWallet",
 * version: "1", chainId, verifyingContract: the deposit wallet, salt: 0}` under the order's exchange
 * domain, wrapped by viem's ERC-7739 helper as innerSig ‖ appDomainSeparator ‖ contentsHash ‖ type ‖ length.
 */
import { wrapTypedDataSignature } from "viem/experimental/erc7739";
import type { Hex, UnsignedOrder } from "./types.js";

/** EIP-712 typed data as `eth_signTypedData_v4` and viem's `signTypedData` take it. */
export interface TypedDataDefinition {
  domain: Record<string, unknown>;
  types: Record<string, readonly { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

/**
 * Anything that signs EIP-712 typed data: a viem account (`privateKeyToAccount`, `toAccount`), or a
 * wrapper around a wallet client or another EIP-712 signer (`eth_signTypedData_v4`). For a deposit
 * wallet (signature type 3) this is the wallet's owner EOA.
 */
export interface TypedDataSigner {
  address?: Hex;
  signTypedData(typedData: any): Promise<Hex>;
}

const ZERO32 = `0x${"0".repeat(64)}` as const;

export async function signUnsignedOrder(signer: TypedDataSigner, unsigned: UnsignedOrder): Promise<Hex> {
  const signature = unsigned.message.signatureType === 3 ? await signForDepositWallet(signer, unsigned) : await signer.signTypedData(unsigned);
  if (typeof signature !== "string" || !/^0x[0-9a-fA-F]+$/.test(signature)) throw new TypeError("the signer did not answer a hex signature");
  return signature;
}

async function signForDepositWallet(owner: TypedDataSigner, unsigned: UnsignedOrder): Promise<Hex> {
  const { EIP712Domain: _domain, ...types } = unsigned.types;
  const inner: Hex = await owner.signTypedData({
    domain: unsigned.domain,
    types: {
      ...types,
      TypedDataSign: [
        { name: "contents", type: "Order" },
        { name: "name", type: "string" },
        { name: "version", type: "string" },
        { name: "chainId", type: "uint256" },
        { name: "verifyingContract", type: "address" },
        { name: "salt", type: "bytes32" },
      ],
    },
    primaryType: "TypedDataSign",
    message: {
      contents: unsigned.message,
      name: "DepositWallet",
      version: "1",
      chainId: unsigned.domain.chainId,
      verifyingContract: unsigned.message.signer,
      salt: ZERO32,
    },
  });
  return wrapTypedDataSignature({ domain: unsigned.domain, types: types as any, primaryType: "Order", message: unsigned.message as any, signature: inner });
}

/**
 * A TypedDataSigner from a viem WalletClient (or anything with viem's `signTypedData({account, ...})`),
 * for wallets that are not local accounts (JSON-RPC, browser or hardware wallets).
 */
export function walletClientSigner(client: { signTypedData(args: any): Promise<Hex> }, account: Hex | { address: Hex }): TypedDataSigner {
  const address = typeof account === "string" ? account : account.address;
  return {
    address,
    signTypedData: (typedData: TypedDataDefinition) => {
      // viem derives the EIP712Domain type from the domain itself.
      const { EIP712Domain: _domain, ...types } = typedData.types;
      return client.signTypedData({ account, domain: typedData.domain, types, primaryType: typedData.primaryType, message: typedData.message });
    },
  };
}
