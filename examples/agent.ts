/**
 * An agent's whole round trip through @agent-brokerage/sdk:
 *   BROKER_URL=http://localhost:8080 BROKER_API_KEY=bk_... bun examples/agent.ts
 * creates an agent with a fresh viem wallet, checks an intent that fails and prints the failures,
 * places an approved one, signs and submits it, follows it on the event stream until it is open or
 * filled, and kills the agent. Exits non-zero if any step fails. An intent above the agent's
 * `approval_threshold_usdc` waits for a person's approval (the dashboard, or POST
 * /v1/orders/{id}/approve); the example waits with it, then signs what was approved.
 */
import { BrokerClient, BrokerError, type Order, RiskRejectedError, type SignableAnswer } from "@agent-brokerage/sdk";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const { BROKER_URL, BROKER_API_KEY } = process.env;
if (!BROKER_URL || !BROKER_API_KEY) {
  console.error("set BROKER_URL and BROKER_API_KEY");
  process.exit(2);
}
async function main(): Promise<void> {
  const step = (msg: string) => console.log(`\n== ${msg}`);
  const broker = new BrokerClient({ baseUrl: BROKER_URL!, apiKey: BROKER_API_KEY });

  // 1. An agent whose wallet is a fresh key that never leaves this process.
  const wallet = privateKeyToAccount(generatePrivateKey());
  const agent = await broker.createAgent({ name: "example agent", wallet_address: wallet.address });
  step(`agent ${agent.id}, wallet ${wallet.address}, mode ${agent.mode}`);

  // 2. A market accepting orders, with a two-sided book.
  const { data: markets } = await broker.listMarkets({ limit: 200 });
  const market = markets.find((m) => m.accepting_orders && m.active && !m.closed && m.best_bid && m.best_ask && Number(m.best_ask) - Number(m.best_bid) <= 0.05);
  if (!market) throw new Error("no market accepting orders with a two-sided book");
  const tick = Number(market.tick_size);
  const bid = Number(market.best_bid);
  step(`market ${market.market_id}: ${market.question} (${market.outcome}), bid ${market.best_bid} ask ${market.best_ask}`);

  // 3. An intent that fails: too large and priced far from the mid. Every failed check is reported.
  const tooBig = { agent_id: agent.id, market_id: market.market_id, side: "buy" as const, size_usdc: 5_000, price: Math.min(0.99, bid + 0.3) };
  const dry = await broker.checkIntent(tooBig);
  if (dry.risk.approved) throw new Error("expected the oversized intent to fail its checks");
  step("dry run refused:");
  for (const f of dry.risk.failures ?? []) console.log(`  ${f.check}/${f.code}: ${f.message} (limit ${f.limit}, actual ${f.actual})`);

  // 4. Follow the event stream from now on (connected before the order exists, so nothing is missed).
  let connected!: () => void;
  const opened = new Promise<void>((r) => (connected = r));
  const stop = new AbortController();
  const events = broker.events({ agent_id: agent.id, signal: stop.signal, onOpen: () => connected() });
  const first = events.next(); // starts the connection
  await Promise.race([opened, first.then(() => undefined)]);

  // 5. An approved intent: a small buy resting one tick under the best bid, signed by the wallet and submitted.
  const price = Math.round((bid - tick) / tick) * tick;
  let answer: SignableAnswer;
  try {
    const placed = await broker.placeIntent({ agent_id: agent.id, market_id: market.market_id, side: "buy", size_usdc: 5, price: Number(price.toFixed(6)) });
    if (placed.mode !== "payload") throw new Error(`expected a payload-mode agent, got ${placed.mode}`);
    if (placed.status === "pending_approval") {
      // Above the agent's approval threshold: reserved, and waiting for a person until its deadline.
      step(`order ${placed.order_id} waits for a person's approval (dashboard, or POST /v1/orders/${placed.order_id}/approve) until ${placed.approval_deadline}`);
      const decided = await waitWhilePending(broker, placed.order_id, Date.parse(placed.approval_deadline));
      if (decided.status !== "awaiting_signature" || !decided.unsigned_order) throw new Error(`order ${decided.id} was not approved: ${decided.status}`);
      answer = { order_id: decided.id, mode: "payload", unsigned_order: decided.unsigned_order, order_type: decided.order_type, expiration: "0" };
      step(`approved by a person: order ${decided.id}, sign before ${decided.signature_deadline}`);
    } else {
      answer = placed;
      step(`approved: order ${placed.order_id}, ${placed.status}, hash ${placed.order_hash}, sign before ${placed.signature_deadline}`);
    }
  } catch (err) {
    if (err instanceof RiskRejectedError) for (const f of err.failures) console.error(`  ${f.check}/${f.code}: ${f.message}`);
    throw err;
  }
  const submitted = await broker.signAndSubmit(answer, wallet);
  step(`submitted: ${submitted.status}, venue order ${submitted.venue_order_id}`);

  // 6. Wait on the stream until the order is open or filled.
  const deadline = setTimeout(() => stop.abort(new Error("no open/filled event within 15 s")), 15_000);
  let seen: string | null = null;
  for (let next = await first; !next.done; next = await events.next()) {
    const ev = next.value;
    if (ev.type !== "order" || ev.data.order.id !== answer.order_id) continue;
    console.log(`  event ${ev.id}: order ${ev.data.order.id} is ${ev.data.order.status}`);
    if (ev.data.order.status === "open" || ev.data.order.status === "filled") {
      seen = ev.data.order.status;
      break;
    }
  }
  clearTimeout(deadline);
  stop.abort();
  if (!seen) throw new Error("the event stream ended before the order was open or filled");
  step(`order ${answer.order_id} is ${seen} (from the event stream)`);

  // 7. Kill switch: the breaker trips, every open order is cancelled.
  const kill = await broker.kill(agent.id, { reason: "example finished" });
  step(`killed in ${kill.duration_ms} ms: cancelled ${kill.cancelled.length}, failed ${kill.failed.length}, breaker ${kill.agent.breaker.state}`);
  if (kill.failed.length) throw new Error(`orders not confirmed cancelled: ${kill.failed.join(", ")}`);
}

/** Polls an order until it leaves `pending_approval` (a person approved or rejected it, or it expired). */
async function waitWhilePending(broker: BrokerClient, orderId: string, deadlineMs: number): Promise<Order> {
  for (;;) {
    const order = await broker.getOrder(orderId);
    if (order.status !== "pending_approval") return order;
    if (Date.now() > deadlineMs + 10_000) throw new Error(`order ${orderId} is still pending after its approval deadline`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

main().then(
  () => {
    console.log("\nok");
    process.exit(0);
  },
  (err) => {
    console.error("\nFAILED:", err instanceof BrokerError ? `${err.status} ${err.code}: ${err.detail ?? err.title}` : err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
