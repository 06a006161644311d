/**
 * Optional x402 payment (the service's docs/x402.md): a fetch that answers a 402 by paying with the reference x402
 * client packages (@x402/fetch with @x402/evm's exact scheme, EIP-3009 USDC authorizations) and
 * retrying. Pass it as `fetch` to BrokerClient; leave out `apiKey`, and the paying wallet becomes
 * the agent's identity. Needs the optional peer dependencies @x402/fetch and @x402/evm.
 */
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPaymentFromConfig } from "@x402/fetch";

/** The signer @x402/evm needs: an address and EIP-712 signing (a viem local account is one). */
export interface X402Signer {
  address: `0x${string}`;
  signTypedData(args: any): Promise<`0x${string}`>;
}

export function x402Fetch(
  signer: X402Signer,
  o: { network?: `${string}:${string}`; fetch?: typeof globalThis.fetch } = {},
): typeof globalThis.fetch {
  const paying = wrapFetchWithPaymentFromConfig(o.fetch ?? globalThis.fetch.bind(globalThis), {
    schemes: [{ network: o.network ?? "eip155:*", client: new ExactEvmScheme(signer as any) }],
  });
  return paying as typeof globalThis.fetch;
}
