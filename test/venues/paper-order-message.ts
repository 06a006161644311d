/** Order messages for the paper venue suites: `shares` at `price`, amounts computed exactly as CONTRACT 6 does, a new salt each. */
import type { OrderMessage } from "../../src/venues/venue.ts";
import { orderMessage } from "../support/order-message.ts";

export const PAPER_ADDR = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" as const;

let salt = 1;

export function paperOrderMessage(tokenId: string, side: "buy" | "sell", price: string, shares: string, signer: `0x${string}` = PAPER_ADDR): OrderMessage {
  const n = salt++;
  return orderMessage(tokenId, signer, side, price, shares, { salt: n, timestamp: 1_800_000_000_000 + n + 1 });
}
