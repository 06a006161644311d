/**
 * The official Polymarket client (@polymarket/clob-client-v2, pinned dev dependency) as a test
 * oracle: its order builder, its EIP-712 order typed data and hash, and its signatures for every
 * signature type (including the ERC-7739 wrapper of deposit wallets, type 3). Never imported by
 * src/. Its exchange builders are not exported from the package index, so they are imported by
 * file path from the installed package.
 */
import { OrderBuilder, getContractConfig } from "@polymarket/clob-client-v2";
import { createWalletClient, custom, type LocalAccount } from "viem";
import * as exchangeBuilders from "../../node_modules/@polymarket/clob-client-v2/dist/order-utils/exchangeOrderBuilderV2.js";

/** The exchange builders as used here (the package's .d.ts for this file declares nothing). */
type ExchangeBuilder = new (
  exchange: string,
  chainId: number,
  signer: unknown,
) => {
  buildOrderSignature(typedData: unknown): Promise<string>;
  buildOrderTypedData(order: unknown): any;
  buildOrderHash(typedData: unknown): string;
};
const { ExchangeOrderBuilderV2, ExchangeOrderBuilderV3 } = exchangeBuilders as unknown as {
  ExchangeOrderBuilderV2: ExchangeBuilder;
  ExchangeOrderBuilderV3: ExchangeBuilder;
};

export { OrderBuilder, getContractConfig };
export { Side, SignatureTypeV2 } from "@polymarket/clob-client-v2";

/** A viem wallet client over a local account, as the official client takes a signer; it never reaches a network. */
export function officialSigner(account: LocalAccount) {
  return createWalletClient({
    account,
    transport: custom({
      request: async () => {
        throw new Error("the test signer has no network");
      },
    }),
  });
}

/** The official exchange order builder for an order domain ("2": CTF Exchange V2 pair, "3": ExchangeV3). */
function exchangeBuilder(domain: { version: string; chainId: number; verifyingContract: string }, account: LocalAccount) {
  const Builder = domain.version === "3" ? ExchangeOrderBuilderV3 : ExchangeOrderBuilderV2;
  if (domain.version !== "2" && domain.version !== "3") throw new Error(`unknown domain version ${domain.version}`);
  return new Builder(domain.verifyingContract, domain.chainId, officialSigner(account));
}

/**
 * The official client's signature of exactly this unsigned order (as the service returned it), for
 * its signature type: an EIP-712 signature for types 0-2, the ERC-7739 wrapped signature for 3.
 */
export async function officialSignature(account: LocalAccount, unsigned: { domain: any; message: any; types?: any; primaryType?: string }): Promise<`0x${string}`> {
  const builder = exchangeBuilder(unsigned.domain, account);
  const copy = structuredClone({ primaryType: "Order", types: { EIP712Domain: [], Order: unsigned.types?.Order ?? [] }, domain: unsigned.domain, message: unsigned.message });
  if (!copy.types.Order.length) throw new Error("the unsigned order has no Order type");
  return (await builder.buildOrderSignature(copy as any)) as `0x${string}`;
}

/** The official client's typed data and EIP-712 hash of an order it built (side "BUY"/"SELL"). */
export function officialTypedData(domain: { version: string; chainId: number; verifyingContract: string }, order: any, account: LocalAccount) {
  const builder = exchangeBuilder(domain, account);
  const typedData = builder.buildOrderTypedData(order);
  return { typedData, hash: builder.buildOrderHash(typedData) as `0x${string}` };
}
