/**
 * The submit-signed check of docs/api.md#submit-signed, by the stored order's signature type:
 * 0 (EOA), 1 (proxy) and 2 (Safe): a 65-byte low-s signature recovering to the order's signer over
 * the stored order hash; 3 (deposit wallet): the ERC-7739 wrapped signature of the wallet's owner
 * (deposit-wallet-signature.ts). Any other type is refused.
 */
import { verifyDepositWalletSignature } from "./deposit-wallet-signature.ts";
import type { OrderDomain } from "./order-typed-data.ts";
import { type SignatureCheck, verifyOrderSignature } from "./verify-order-signature.ts";
import type { OrderMessage } from "../domain/order-message.ts";

export function verifySignedOrder(args: {
  domain: Pick<OrderDomain, "chainId" | "version" | "verifyingContract">;
  message: OrderMessage;
  /** The order hash stored at approval (the EIP-712 digest of domain and message). */
  orderHash: string;
  signature: string;
  /** The agent's owner EOA (type 3 only). */
  owner?: string | null;
}): SignatureCheck {
  const { message, signature } = args;
  switch (message.signatureType) {
    case 0:
    case 1:
    case 2:
      return verifyOrderSignature({ digest: args.orderHash, signature, expectedSigner: message.signer });
    case 3:
      return verifyDepositWalletSignature({ domain: args.domain, message, signature, owner: args.owner });
    default:
      return { ok: false, reason: `signature type ${message.signatureType} is not supported` };
  }
}
