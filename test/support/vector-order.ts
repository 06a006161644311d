/**
 * The order of the CONTRACT's section 6 hash vector and its EIP-712 hash on Polygon (chain 137) under
 * the standard exchange's v1 domain.
 */
import type { OrderMessage } from "../../src/venues/venue.ts";

export const VECTOR_ORDER: OrderMessage = Object.freeze({
  salt: "123456789",
  maker: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
  signer: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
  tokenId: "71321045679252212594626385532706912750332728571942532289631379312455583992563",
  makerAmount: "100000000",
  takerAmount: "50000000",
  side: 0,
  signatureType: 0,
  timestamp: "1713398400000",
  metadata: `0x${"0".repeat(64)}`,
  builder: `0x${"0".repeat(64)}`,
});

export const VECTOR_ORDER_HASH = "0x32961c48ddac87ed3582f8e02097cd0eff4fcf80460306bd44b3710438dfa64c";
