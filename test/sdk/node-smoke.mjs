// Run by test/sdk/node-import.test.ts under Node.js: the built SDK, imported by its package name
// (the "import" condition of its exports map, i.e. dist/), against a live service.
import { BrokerClient, RiskRejectedError, buildL2Signature } from "@agent-brokerage/sdk";
import { x402Fetch } from "@agent-brokerage/sdk/x402";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const { BROKER_URL, ADMIN_TOKEN, MARKET_ID } = process.env;
const admin = new BrokerClient({ baseUrl: BROKER_URL, adminToken: ADMIN_TOKEN });
const org = await admin.createOrg({ name: "node smoke" });
const client = new BrokerClient({ baseUrl: BROKER_URL, apiKey: org.api_key.key });
const account = privateKeyToAccount(generatePrivateKey());
const agent = await client.createAgent({ wallet_address: account.address });
let rejected = null;
try {
  await client.placeIntent({ agent_id: agent.id, market_id: MARKET_ID, side: "buy", size_usdc: 500, price: 0.5 });
} catch (e) {
  if (e instanceof RiskRejectedError) rejected = e.failures.map((f) => f.code);
  else throw e;
}
const answer = await client.placeIntent({ agent_id: agent.id, market_id: MARKET_ID, side: "buy", size_usdc: 5, price: 0.5 });
const submitted = await client.signAndSubmit(answer, account);
console.log(
  JSON.stringify({
    node: process.versions.node,
    rejected,
    status: submitted.status,
    orderId: submitted.order_id,
    x402: typeof x402Fetch(account),
    vector: buildL2Signature({ secret: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", timestamp: 1000000, method: "test-sign", path: "/orders", body: '{"hash": "0x123"}' }),
  }),
);
