/**
 * The SDK's guard methods against the real service over HTTP: the dead-man switch (setHeartbeat,
 * heartbeat, clearHeartbeat, a late beat that kills) and human approval (a 202 pending intent,
 * approveOrder with a reason then signAndSubmit of the approval's unsigned order, rejectOrder, an
 * agent-scoped key refused). The service's clock is a fake one, so a beat can be exactly 1 ms late.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolve } from "node:path";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BrokerClient, ConflictError, ForbiddenError, type IntentAnswer, type PayloadApproveAnswer } from "../../packages/sdk/src/client.ts";
import { PaperVenue } from "../../src/venues/paper/paper-venue.ts";
import { fakeClock, type FakeClock } from "../guards/guard-app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { DEM_YES } from "../support/payload.ts";
import { newOrgClient, serveTestApp, type LiveService } from "./serve.ts";

describeEachDatabase("sdk guard methods against the live service", (_kind, database) => {
  let live: LiveService;
  let clock: FakeClock;
  beforeAll(async () => {
    clock = fakeClock();
    const venue = PaperVenue.fromFile(resolve(import.meta.dir, "../../fixtures/markets.json"), { chainId: 137, now: () => clock.now() });
    live = await serveTestApp(await database(), { clock, venue });
  });
  afterAll(() => live?.stop());

  test("heartbeat: on, a beat moves the deadline, off, a beat while off is invalid_state", async () => {
    const { client } = await newOrgClient(live.url);
    const agent = await client.createAgent({ wallet_address: privateKeyToAccount(generatePrivateKey()).address });
    expect(agent.heartbeat).toBeNull();

    const on = await client.setHeartbeat(agent.id, { interval_s: 30 });
    expect(on.heartbeat).toEqual({ interval_s: 30, last_at: new Date(clock.now()).toISOString(), deadline_at: new Date(clock.now() + 30_000).toISOString() });

    clock.advance(10_000);
    const beat = await client.heartbeat(agent.id);
    expect(beat.heartbeat?.last_at).toBe(new Date(clock.now()).toISOString());
    expect(beat.heartbeat?.deadline_at).toBe(new Date(clock.now() + 30_000).toISOString());

    expect((await client.clearHeartbeat(agent.id)).heartbeat).toBeNull();
    const off = await client.heartbeat(agent.id).catch((e) => e);
    expect(off).toBeInstanceOf(ConflictError);
    expect(off.code).toBe("invalid_state");
  });

  test("heartbeat: a beat 1 ms after the deadline is agent_halted and the agent is killed (reason heartbeat)", async () => {
    const { client } = await newOrgClient(live.url);
    const agent = await client.createAgent({ wallet_address: privateKeyToAccount(generatePrivateKey()).address });
    await client.setHeartbeat(agent.id, { interval_s: 5 });
    clock.advance(5_001);
    const late = await client.heartbeat(agent.id).catch((e) => e);
    expect(late).toBeInstanceOf(ConflictError);
    expect(late.code).toBe("agent_halted");
    const after = await client.getAgent(agent.id);
    expect(after.breaker).toMatchObject({ state: "tripped", reason: "heartbeat" });
    expect(after.heartbeat).toBeNull();
  });

  test("approval: a 202 pending intent, approved with a reason, signed and submitted from the approval's answer; another rejected", async () => {
    const { client } = await newOrgClient(live.url);
    const account = privateKeyToAccount(generatePrivateKey());
    const agent = await client.createAgent({ wallet_address: account.address, limits: { approval_threshold_usdc: 4 } });

    const pending: IntentAnswer = await client.placeIntent({ agent_id: agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.45 });
    expect(pending.status).toBe("pending_approval");
    if (pending.status !== "pending_approval") throw new Error("not pending");
    expect(pending.approval_deadline).toBe(new Date(clock.now() + 3_600_000).toISOString());
    expect((await client.getOrder(pending.order_id)).status).toBe("pending_approval");

    // An agent-scoped key cannot approve its own order: approvals are for people.
    const scoped = await client.createApiKey({ name: "the agent's own", agent_id: agent.id });
    const agentClient = new BrokerClient({ baseUrl: live.url, apiKey: scoped.key });
    expect(await agentClient.approveOrder(pending.order_id).catch((e) => e)).toBeInstanceOf(ForbiddenError);

    const approved = await client.approveOrder(pending.order_id, { reason: "size checked" });
    expect(approved.mode).toBe("payload");
    expect(approved.status).toBe("awaiting_signature");
    expect(approved.order.history.at(-1)).toMatchObject({ status: "awaiting_signature", reason: expect.stringContaining("size checked") });
    const submitted = await client.signAndSubmit(approved as PayloadApproveAnswer, account);
    expect(submitted.status).toBe("open");

    const second = await client.placeIntent({ agent_id: agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.44 });
    expect(second.status).toBe("pending_approval");
    const rejected = await client.rejectOrder(second.order_id, { reason: "not now" });
    expect(rejected.status).toBe("rejected");
    expect(rejected.history.at(-1)).toMatchObject({ status: "rejected", reason: expect.stringContaining("not now") });
    // A decided order is no longer pending: a second decision is invalid_state.
    const again = await client.rejectOrder(second.order_id).catch((e) => e);
    expect(again).toBeInstanceOf(ConflictError);
    expect(again.code).toBe("invalid_state");
  });
});
