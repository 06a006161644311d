/**
 * The order an approved intent becomes (docs/api.md#the-unsigned-order): the EIP-712 message from the exact amounts,
 * its typed data and its hash. Pure: the actor calls it inside its reservation, with the
 * timestamp it assigned.
 */
import { getAddress } from "viem";
import type { OrderAmounts } from "../src/domain/amounts.ts";
import type { OrderMessage } from "../src/domain/order-message.ts";
import type { OrderSide } from "../src/domain/order-status.ts";
import { orderHash } from "../src/eip712/order-hash.ts";
import { buildUnsignedOrder, randomSalt, type UnsignedOrder, ZERO_BYTES32 } from "../src/eip712/order-typed-data.ts";
import type { AgentProfile } from "./ports.ts";

export interface BuiltOrder {
  message: OrderMessage;
  typedData: UnsignedOrder;
  hash: `0x${string}`;
}

export function buildOrder(args: {
  profile: AgentProfile;
  chainId: number;
  builderCode: `0x${string}`;
  negRisk: boolean;
  /** The market's protocol version (default v1): v2 orders are signed for ExchangeV3. */
  version?: "v1" | "v2";
  tokenId: string;
  side: OrderSide;
  amounts: OrderAmounts;
  timestampMs: number;
}): BuiltOrder {
  const { profile, chainId, negRisk, version, amounts } = args;
  const message: OrderMessage = {
    salt: randomSalt(),
    // EIP-55 checksummed, as the official client writes them (the hash does not depend on the case).
    maker: getAddress(profile.walletAddress),
    signer: getAddress(profile.signerAddress),
    tokenId: args.tokenId,
    makerAmount: amounts.makerAmount.toString(),
    takerAmount: amounts.takerAmount.toString(),
    side: args.side === "buy" ? 0 : 1,
    signatureType: profile.signatureType,
    timestamp: String(args.timestampMs),
    metadata: ZERO_BYTES32,
    builder: args.builderCode,
  };
  return { message, typedData: buildUnsignedOrder({ chainId, negRisk, version, message }), hash: orderHash({ chainId, negRisk, version, message }) };
}
