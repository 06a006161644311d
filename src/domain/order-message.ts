/** The signed order struct of docs/api.md#the-unsigned-order and the order types that travel beside it. */

/** uint256 as decimal strings, uint8 as numbers. */
export interface OrderMessage {
  salt: string;
  maker: `0x${string}`;
  signer: `0x${string}`;
  tokenId: string;
  makerAmount: string;
  takerAmount: string;
  side: 0 | 1;
  signatureType: number;
  timestamp: string;
  metadata: `0x${string}`;
  builder: `0x${string}`;
}

export type OrderType = "GTC" | "GTD" | "FOK" | "FAK";
