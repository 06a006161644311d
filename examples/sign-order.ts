/**
 * Signs the unsigned order of an approved payload-mode intent with a viem account and prints the
 * signature, for the README's quickstart:
 *
 *   echo "$INTENT" | PRIVATE_KEY=0x… bun examples/sign-order.ts
 *
 * stdin: the 201 answer of POST /v1/orders/intent (or just its `unsigned_order`). The typed data is
 * signed exactly as received, as `eth_signTypedData_v4` would sign it (docs/api.md#submit-signed).
 */
import { privateKeyToAccount } from "viem/accounts";

const key = process.env.PRIVATE_KEY;
if (!key || !/^0x[0-9a-fA-F]{64}$/.test(key)) {
  console.error("set PRIVATE_KEY to the 0x-prefixed private key of the agent's signer");
  process.exit(2);
}
const answer = JSON.parse(await Bun.stdin.text());
const typed = answer.unsigned_order ?? answer;
if (!typed?.domain || !typed?.message) {
  console.error("stdin holds no unsigned_order: was the intent approved?");
  process.exit(1);
}
const { domain, types, primaryType, message } = typed;
const { EIP712Domain: _domainType, ...orderTypes } = types;
const signature = await privateKeyToAccount(key as `0x${string}`).signTypedData({ domain, types: orderTypes, primaryType, message });
console.log(signature);
