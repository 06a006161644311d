// @ts-check
/**
 * A user's ESM script against @agent-brokerage/sdk as installed from its npm tarball: run with `node`
 * (BROKER_URL, BROKER_API_KEY) and type-checked with `tsc --checkJs` in the same directory, by
 * .ci/packages.sh and test/packages/packages.test.ts. It creates an agent, sends an intent, narrows
 * the answer on `mode` (no cast), signs it with a fresh viem wallet, submits it, reads the order's
 * events from the stream, and kills the agent. Prints one JSON line with what happened; exits non-zero
 * on any failure.
 */
import { BrokerClient, RiskRejectedError } from "@agent-brokerage/sdk";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const baseUrl = process.env.BROKER_URL;
const apiKey = process.env.BROKER_API_KEY;
if (!baseUrl || !apiKey) throw new Error("set BROKER_URL and BROKER_API_KEY");

const broker = new BrokerClient({ baseUrl, apiKey });
const wallet = privateKeyToAccount(generatePrivateKey());
const agent = await broker.createAgent({ name: "package consumer", wallet_address: wallet.address });

const { data: markets } = await broker.listMarkets({ active: true, closed: false, limit: 1 });
const market = markets[0];
if (!market) throw new Error("no active market");

// A refusal is a typed error with every failed check.
/** @type {string[]} */
let refused = [];
try {
  await broker.placeIntent({ agent_id: agent.id, market_id: market.market_id, side: "buy", size_usdc: 500, price: 0.49 });
} catch (e) {
  if (!(e instanceof RiskRejectedError)) throw e;
  refused = e.failures.map((f) => f.code);
}

// Follow the agent's events from before the order exists, so none is missed.
const stop = new AbortController();
const timer = setTimeout(() => stop.abort(new Error("no open or filled event within 20 s")), 20_000);
/** @type {() => void} */
let connected = () => {};
const opened = new Promise((resolve) => (connected = () => resolve(undefined)));
const events = broker.events({ agent_id: agent.id, signal: stop.signal, onOpen: () => connected() });
const first = events.next();
await Promise.race([opened, first]);

const answer = await broker.placeIntent({ agent_id: agent.id, market_id: market.market_id, side: "buy", size_usdc: 5, price: 0.49 });
if (answer.mode !== "payload") throw new Error(`expected a payload-mode agent, got ${answer.mode}`);
const submitted = await broker.signAndSubmit(answer, wallet);

/** @type {string[]} */
const seen = [];
for (let next = await first; !next.done; next = await events.next()) {
  const ev = next.value;
  if (ev.type !== "order" || ev.data.order.id !== answer.order_id) continue;
  seen.push(ev.data.order.status);
  if (ev.data.order.status === "open" || ev.data.order.status === "filled") break;
}
clearTimeout(timer);
stop.abort();

const kill = await broker.kill(agent.id, { reason: "package consumer finished" });
console.log(
  JSON.stringify({
    node: process.versions.node,
    agent_id: agent.id,
    refused,
    order_id: answer.order_id,
    submitted: submitted.status,
    events: seen,
    kill: { cancelled: kill.cancelled, failed: kill.failed, breaker: kill.agent.breaker.state },
  }),
);
