/**
 * placeIntent's answer narrowed as the README does it (`mode === "payload"`, no cast) and given to
 * signAndSubmit, against the live service: an approved intent is signed and submitted; one pending a
 * person's approval is refused by signAndSubmit (nothing sent) until a person approves it, then the
 * same pending answer is signed from the order as read again.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { sharedPglite } from "../support/databases.ts";
import { DEM_YES } from "../support/payload.ts";
import { newOrgClient, serveTestApp, type LiveService } from "./serve.ts";

let live: LiveService;
beforeAll(async () => {
  live = await serveTestApp(await sharedPglite());
});
afterAll(() => live?.stop());

test("mode === 'payload' narrows to what signAndSubmit takes: an approved intent is signed and submitted", async () => {
  const { client } = await newOrgClient(live.url);
  const wallet = privateKeyToAccount(generatePrivateKey());
  const agent = await client.createAgent({ wallet_address: wallet.address });
  const answer = await client.placeIntent({ agent_id: agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.45 });
  if (answer.mode !== "payload") throw new Error(`expected payload mode, got ${answer.mode}`);
  expect(answer.status).toBe("awaiting_signature");
  if (answer.status === "awaiting_signature") expect(answer.unsigned_order.primaryType).toBe("Order");
  const submitted = await client.signAndSubmit(answer, wallet);
  expect(submitted).toMatchObject({ order_id: answer.order_id, status: "open" });
});

test("a payload answer pending approval: signAndSubmit refuses it while pending, then signs it once a person approved it", async () => {
  const { client } = await newOrgClient(live.url);
  const wallet = privateKeyToAccount(generatePrivateKey());
  const agent = await client.createAgent({ wallet_address: wallet.address, limits: { approval_threshold_usdc: 4 } });
  const answer = await client.placeIntent({ agent_id: agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.45 });
  if (answer.mode !== "payload") throw new Error(`expected payload mode, got ${answer.mode}`);
  expect(answer.status).toBe("pending_approval");
  expect(answer.unsigned_order).toBeUndefined();

  const early = await client.signAndSubmit(answer, wallet).catch((e) => e);
  expect(early).toBeInstanceOf(TypeError);
  expect(early.message).toContain(`order ${answer.order_id} is pending_approval`);
  const still = await client.getOrder(answer.order_id);
  expect(still.status).toBe("pending_approval");
  expect(still.history.map((h) => h.status)).toEqual(["pending_approval"]);

  await client.approveOrder(answer.order_id, { reason: "looked at it" });
  const submitted = await client.signAndSubmit(answer, wallet);
  expect(submitted).toMatchObject({ order_id: answer.order_id, status: "open" });
  const order = await client.getOrder(answer.order_id);
  expect(order.status).toBe("open");
  expect(order.order_hash).toMatch(/^0x[0-9a-f]{64}$/);
});
