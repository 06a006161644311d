/**
 * What a paid request costs (docs/x402.md): one x402 `exact` payment option in USDC on the
 * configured network, for version 2 (PAYMENT-REQUIRED) and, for version 1 clients (X-PAYMENT), the
 * same option in version 1's shape. The USDC contract and its EIP-712 domain name and version come
 * from @x402/evm's table of default assets (the name differs: "USD Coin" on Base, "USDC" on Base Sepolia).
 */
import type { PaymentRequirements, PaymentRequirementsV1 } from "@x402/core/types";
import { getDefaultAsset } from "@x402/evm";
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";
import { getAddress } from "viem";
import { type Config, ConfigError } from "../../config.ts";
import { toUnits } from "../../domain/units.ts";

/** Seconds a client has to present its payment; the authorization's validBefore is set from it. */
export const MAX_TIMEOUT_SECONDS = 300;

export interface X402Terms {
  network: Config["x402"]["network"];
  /** The version 1 name of the network ("base", "base-sepolia"). */
  networkV1: string;
  chainId: number;
  asset: `0x${string}`;
  /** EIP-712 domain of the token. */
  name: string;
  version: string;
  payTo: `0x${string}`;
  amountUnits: bigint;
}

/** The terms from the configuration; throws ConfigError for a price of zero or an unknown network. */
export function termsFrom(x402: Config["x402"]): X402Terms {
  if (!x402.payTo) throw new ConfigError("invalid environment variable X402_PAY_TO: required when X402_ENABLED=true");
  const amountUnits = toUnits(x402.priceUsdc);
  if (amountUnits <= 0n) throw new ConfigError("invalid environment variable X402_PRICE_USDC: must be more than 0");
  const usdc = getDefaultAsset(x402.network, "USDC");
  const chainId = Number(x402.network.split(":")[1]);
  const networkV1 = Object.entries(EVM_NETWORK_CHAIN_ID_MAP).find(([name, id]) => id === chainId && !name.includes("skale"))?.[0];
  if (!networkV1) throw new ConfigError(`invalid environment variable X402_NETWORK: no x402 version 1 name for ${x402.network}`);
  return {
    network: x402.network,
    networkV1,
    chainId,
    asset: getAddress(usdc.asset),
    name: usdc.name,
    version: usdc.version,
    payTo: getAddress(x402.payTo),
    amountUnits,
  };
}

/** The version 2 payment option. */
export function requirementsV2(terms: X402Terms): PaymentRequirements {
  return {
    scheme: "exact",
    network: terms.network,
    amount: terms.amountUnits.toString(),
    asset: terms.asset,
    payTo: terms.payTo,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    extra: { name: terms.name, version: terms.version },
  };
}

/** The same option in version 1's shape, for X-PAYMENT clients and version 1 facilitator calls. */
export function requirementsV1(terms: X402Terms, resource: string): PaymentRequirementsV1 {
  return {
    scheme: "exact",
    network: terms.networkV1 as PaymentRequirementsV1["network"],
    maxAmountRequired: terms.amountUnits.toString(),
    resource,
    description: "one request to the agent brokerage API",
    mimeType: "application/json",
    outputSchema: {},
    payTo: terms.payTo,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    asset: terms.asset,
    extra: { name: terms.name, version: terms.version },
  };
}
