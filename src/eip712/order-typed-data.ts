/**
 * The unsigned order of docs/api.md#the-unsigned-order: EIP-712 typed data for the
 * Polymarket exchanges, in the JSON shape that viem's `signTypedData` and
 * `eth_signTypedData_v4` accept as they are (uint256 as decimal strings, uint8
 * as numbers).
 *
 * The domain follows the market's protocol version: `v1` markets (CTF token ids) trade on the CTF
 * Exchange V2 or the Neg Risk CTF Exchange V2 (domain version "2"); `v2` markets (Protocol V2
 * position ids) on ExchangeV3 (domain version "3", one address per chain, neg risk too). Addresses
 * as in the official client's configuration (@polymarket/clob-client-v2 1.1.0, dist/config.js).
 */

import type { OrderMessage } from "../domain/order-message.ts";

/** CTF Exchange V2 (standard markets). */
export const EXCHANGE_V2 = "0xE111180000d2663C0091e4f400237545B87B996B" as const;
/** Neg Risk CTF Exchange V2 (markets whose neg_risk is true). */
export const NEG_RISK_EXCHANGE_V2 = "0xe2222d279d744050d28e00520010520000310F59" as const;

/** ExchangeV3 (Protocol V2 markets) on Polygon (137) and Amoy (80002). */
export const EXCHANGE_V3: Readonly<Record<number, `0x${string}`>> = {
  137: "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa",
  80002: "0x9fE6e61422AdB6F610d8597F9684b16912D50C3D",
};

export const ORDER_DOMAIN_NAME = "Polymarket CTF Exchange";
/** The domain version of `v1` markets' exchanges (kept under its old name for callers). */
export const ORDER_DOMAIN_VERSION = "2";
/** The domain version of ExchangeV3 (`v2` markets). */
export const ORDER_DOMAIN_VERSION_V3 = "3";

/** A market's protocol version (docs/architecture.md#the-markets-file); a market without one is `v1`. */
export type MarketVersion = "v1" | "v2";

/** What selects an order's EIP-712 domain. */
export interface DomainSelector {
  chainId: number;
  negRisk: boolean;
  /** Default "v1". */
  version?: MarketVersion;
}

/** 32 zero bytes (the order's metadata). */
export const ZERO_BYTES32 = `0x${"0".repeat(64)}` as const;

/** The largest salt the venue reads exactly (it parses it as a JSON number). */
export const MAX_SALT = 2 ** 53 - 1;

export const EIP712_DOMAIN_TYPE_STRING = "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)";
export const ORDER_TYPE_STRING =
  "Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)";

export type TypedDataField = { name: string; type: string };

/** EIP712Domain and Order, field order exactly as in the type strings above. */
export const ORDER_TYPES = {
  EIP712Domain: [
    { name: "name", type: "string" },
    { name: "version", type: "string" },
    { name: "chainId", type: "uint256" },
    { name: "verifyingContract", type: "address" },
  ],
  Order: [
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
  ],
} as const satisfies Record<string, readonly TypedDataField[]>;

export interface OrderDomain {
  name: typeof ORDER_DOMAIN_NAME;
  version: typeof ORDER_DOMAIN_VERSION | typeof ORDER_DOMAIN_VERSION_V3;
  chainId: number;
  verifyingContract: `0x${string}`;
}

/** OrderMessage as a plain object type (assignable to viem's Record<string, unknown> message). */
export type UnsignedOrderMessage = { [K in keyof OrderMessage]: OrderMessage[K] };

export interface UnsignedOrder {
  domain: OrderDomain;
  /** Typed loosely on purpose: viem then accepts decimal strings for uint256. */
  types: Record<string, TypedDataField[]>;
  primaryType: "Order";
  message: UnsignedOrderMessage;
}

/**
 * The exchange contract that verifies orders of a market: for `v1` the (neg risk) CTF Exchange V2,
 * the same on every chain; for `v2` ExchangeV3 of the chain (RangeError on a chain without one).
 */
export function exchangeAddress(negRisk: boolean, version: MarketVersion = "v1", chainId = 137): `0x${string}` {
  if (version === "v1") return negRisk ? NEG_RISK_EXCHANGE_V2 : EXCHANGE_V2;
  if (version !== "v2") throw new RangeError('market version must be "v1" or "v2"');
  const v3 = EXCHANGE_V3[chainId];
  if (!v3) throw new RangeError(`no ExchangeV3 address is known for chain ${chainId}`);
  return v3;
}

/** The EIP-712 domain of an order, by chain, neg risk and the market's protocol version (docs/api.md#the-unsigned-order). */
export function selectOrderDomain(sel: DomainSelector): OrderDomain {
  const { chainId, negRisk } = sel;
  const version = sel.version ?? "v1";
  if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new RangeError("chainId must be a positive integer");
  return {
    name: ORDER_DOMAIN_NAME,
    version: version === "v2" ? ORDER_DOMAIN_VERSION_V3 : ORDER_DOMAIN_VERSION,
    chainId,
    verifyingContract: exchangeAddress(negRisk, version, chainId),
  };
}

/** The domain of a `v1` market's order (kept for callers; selectOrderDomain takes the version). */
export function orderDomain(chainId: number, negRisk: boolean, version: MarketVersion = "v1"): OrderDomain {
  return selectOrderDomain({ chainId, negRisk, version });
}

/**
 * The typed data to sign, as a fresh plain JSON object: pass it as is to
 * `account.signTypedData(...)` or `eth_signTypedData_v4`.
 */
export function buildUnsignedOrder(args: DomainSelector & { message: OrderMessage }): UnsignedOrder {
  const m = args.message;
  return {
    domain: selectOrderDomain(args),
    types: orderTypes(),
    primaryType: "Order",
    message: {
      salt: m.salt,
      maker: m.maker,
      signer: m.signer,
      tokenId: m.tokenId,
      makerAmount: m.makerAmount,
      takerAmount: m.takerAmount,
      side: m.side,
      signatureType: m.signatureType,
      timestamp: m.timestamp,
      metadata: m.metadata,
      builder: m.builder,
    },
  };
}

/** ORDER_TYPES as fresh objects, for an answer its receiver may change. */
export function orderTypes(): { EIP712Domain: TypedDataField[]; Order: TypedDataField[] } {
  return { EIP712Domain: copyFields(ORDER_TYPES.EIP712Domain), Order: copyFields(ORDER_TYPES.Order) };
}

function copyFields(fields: readonly TypedDataField[]): TypedDataField[] {
  const out = new Array<TypedDataField>(fields.length);
  for (let i = 0; i < fields.length; i++) out[i] = { name: fields[i].name, type: fields[i].type };
  return out;
}

/** Random words from the system's CSPRNG, drawn 2,048 at a time and used once each. */
const saltWords = new Uint32Array(2048);
let saltNext = saltWords.length;

/** A random salt in [1, 2^53 − 1], as a decimal string. */
export function randomSalt(): string {
  for (;;) {
    if (saltNext + 2 > saltWords.length) {
      crypto.getRandomValues(saltWords);
      saltNext = 0;
    }
    const value = (saltWords[saltNext] & 0x1fffff) * 2 ** 32 + saltWords[saltNext + 1]; // 21 + 32 bits
    saltWords[saltNext] = 0;
    saltWords[saltNext + 1] = 0;
    saltNext += 2;
    if (value !== 0) return String(value);
  }
}
