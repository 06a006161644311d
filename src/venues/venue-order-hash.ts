/**
 * The venue's order id: the EIP-712 digest of the order under its market's exchange domain
 * (CONTRACT 6), by the market's protocol version:
 * - v1 (CTF token ids): domain version "2", CTF Exchange V2 or, for neg-risk markets, Neg Risk CTF Exchange V2;
 * - v2 (Protocol V2 position ids): domain version "3", ExchangeV3 of the chain, neg-risk markets too.
 *
 * v1 goes through the codec's fast order hash; v2 through viem's hashTypedData, until the codec
 * carries the ExchangeV3 domain itself.
 */
import { hashTypedData } from "viem";
import { orderHash } from "../eip712/order-hash.ts";
import { exchangeAddress, ORDER_DOMAIN_NAME, ORDER_TYPES } from "../eip712/order-typed-data.ts";
import type { MarketVersion, OrderMessage } from "./venue.ts";

/** ExchangeV3 (Polymarket Protocol V2) by chain id. */
export const EXCHANGE_V3: Readonly<Record<number, `0x${string}`>> = Object.freeze({
  137: "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa",
  80002: "0x9fE6e61422AdB6F610d8597F9684b16912D50C3D",
});

export interface VenueOrderDomain {
  name: string;
  version: "2" | "3";
  chainId: number;
  verifyingContract: `0x${string}`;
}

/** The exchange domain orders of a market are signed under. Throws RangeError for a v2 market on a chain without ExchangeV3. */
export function venueOrderDomain(chainId: number, market: { negRisk: boolean; version?: MarketVersion }): VenueOrderDomain {
  if ((market.version ?? "v1") === "v2") {
    const verifyingContract = EXCHANGE_V3[chainId];
    if (!verifyingContract) throw new RangeError(`no ExchangeV3 known on chain ${chainId}`);
    return { name: ORDER_DOMAIN_NAME, version: "3", chainId, verifyingContract };
  }
  return { name: ORDER_DOMAIN_NAME, version: "2", chainId, verifyingContract: exchangeAddress(market.negRisk) };
}

/** The order's EIP-712 digest under its market's domain (lowercase hex). Throws on a malformed order. */
export function venueOrderHash(order: OrderMessage, opts: { chainId: number; negRisk: boolean; version?: MarketVersion }): `0x${string}` {
  if ((opts.version ?? "v1") === "v1") return orderHash({ chainId: opts.chainId, negRisk: opts.negRisk, message: order });
  return hashTypedData({
    domain: venueOrderDomain(opts.chainId, opts),
    types: { Order: ORDER_TYPES.Order },
    primaryType: "Order",
    message: {
      salt: BigInt(order.salt),
      maker: order.maker,
      signer: order.signer,
      tokenId: BigInt(order.tokenId),
      makerAmount: BigInt(order.makerAmount),
      takerAmount: BigInt(order.takerAmount),
      side: order.side,
      signatureType: order.signatureType,
      timestamp: BigInt(order.timestamp),
      metadata: order.metadata,
      builder: order.builder,
    },
  });
}
