/**
 * Signing an `unsigned_order` (CONTRACT 6): the typed data goes to the signer exactly as the service
 * answered it, so the signature covers the order the risk engine approved and nothing else.
 */
import type { Hex, UnsignedOrder } from "./types.js";

/**
 * Anything that signs EIP-712 typed data: a viem account (`privateKeyToAccount`, `toAccount`), or a
 * wrapper around a wallet client or another EIP-712 signer (`eth_signTypedData_v4`).
 */
export interface TypedDataSigner {
  address?: Hex;
  signTypedData(typedData: UnsignedOrder): Promise<Hex>;
}

export async function signUnsignedOrder(signer: TypedDataSigner, unsigned: UnsignedOrder): Promise<Hex> {
  const signature = await signer.signTypedData(unsigned);
  if (typeof signature !== "string" || !/^0x[0-9a-fA-F]+$/.test(signature)) throw new TypeError("the signer did not answer a hex signature");
  return signature;
}

/**
 * A TypedDataSigner from a viem WalletClient (or anything with viem's `signTypedData({account, ...})`),
 * for wallets that are not local accounts (JSON-RPC, browser or hardware wallets).
 */
export function walletClientSigner(client: { signTypedData(args: any): Promise<Hex> }, account: Hex | { address: Hex }): TypedDataSigner {
  const address = typeof account === "string" ? account : account.address;
  return {
    address,
    signTypedData: (typedData) => {
      // viem derives the domain type itself; it refuses an explicit EIP712Domain only in some versions, so drop it.
      const { EIP712Domain: _domain, ...types } = typedData.types;
      return client.signTypedData({ account, domain: typedData.domain, types, primaryType: typedData.primaryType, message: typedData.message });
    },
  };
}
