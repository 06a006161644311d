/**
 * A CLOB order message (src/venues/venue.ts) of `shares` at `price`, its amounts computed exactly as
 * CONTRACT 6 does, signed by `signer` for itself, with the `salt` and `timestamp` (ms) given.
 */
import { toUnits } from "../../src/domain/units.ts";
import type { OrderMessage } from "../../src/venues/venue.ts";

const ZERO32 = `0x${"00".repeat(32)}` as const;

export function orderMessage(
  tokenId: string,
  signer: `0x${string}`,
  side: "buy" | "sell",
  price: string,
  shares: string,
  at: { salt: number; timestamp: number },
): OrderMessage {
  const p = toUnits(price, 6);
  const s = toUnits(shares, 6);
  const usdc = (s * p) / 1_000_000n;
  return {
    salt: String(at.salt),
    maker: signer,
    signer,
    tokenId,
    makerAmount: String(side === "buy" ? usdc : s),
    takerAmount: String(side === "buy" ? s : usdc),
    side: side === "buy" ? 0 : 1,
    signatureType: 0,
    timestamp: String(at.timestamp),
    metadata: ZERO32,
    builder: ZERO32,
  };
}
