/** Order messages for the paper venue suites: `shares` at `price`, amounts computed exactly as CONTRACT 6 does, a new salt each. */
import { toUnits } from "../../src/domain/units.ts";
import type { OrderMessage } from "../../src/venues/venue.ts";

export const PAPER_ADDR = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" as const;
const ZERO32 = `0x${"00".repeat(32)}` as const;

let salt = 1;

export function paperOrderMessage(tokenId: string, side: "buy" | "sell", price: string, shares: string, signer: `0x${string}` = PAPER_ADDR): OrderMessage {
  const p = toUnits(price, 6);
  const s = toUnits(shares, 6);
  const usdc = (s * p) / 1_000_000n;
  const n = salt++;
  return {
    salt: String(n),
    maker: signer,
    signer,
    tokenId,
    makerAmount: String(side === "buy" ? usdc : s),
    takerAmount: String(side === "buy" ? s : usdc),
    side: side === "buy" ? 0 : 1,
    signatureType: 0,
    timestamp: String(1_800_000_000_000 + n + 1),
    metadata: ZERO32,
    builder: ZERO32,
  };
}
