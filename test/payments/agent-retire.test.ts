/**
 * Removing an agent's rows through its actor (AgentService.retire, used by x402 to undo an unpaid
 * request's agent): the orders table has no foreign key to agents, so the actor guarantees that no
 * order is written for an agent after its removal.
 */
import { expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { AgentRetiredError } from "../../actors/agent-retired-error.ts";
import type { Database } from "../../src/db/database.ts";
import { agents, orders } from "../../src/db/schema.ts";
import { createTestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { expectProblem, intentBody, newTrader } from "../support/payload.ts";

describeEachDatabase("retiring an agent", (_kind, database) => {
  test("waits for the order writes under way, removes the rows, then refuses intents (404) and writes no order", async () => {
    const real = await database();
    // The batch insert held at a gate, to catch an intent between its reservation and its commit.
    let open!: () => void;
    let gate = new Promise<void>((resolve) => (open = resolve));
    const gated: Database = { ...real, run: async (text, params) => (await gate, real.run(text, params)) };
    const t = await createTestApp(gated);
    const tr = await newTrader(t);
    const agentId: string = tr.agent.id;
    const service = t.app.services.agents;
    const caller = { kind: "api_key" as const, orgId: tr.agent.org_id, keyId: "key_test", agentId: null };
    const actor = await service.actorFor(caller, agentId);

    const inFlight = t.call("POST", "/v1/orders/intent", { key: tr.key, body: intentBody(tr) });
    for (let i = 0; i < 200 && actor.writes.size === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(actor.writes.size).toBe(1);

    let ordersSeenByRemove = -1;
    const retired = service.retire(agentId, async () => {
      ordersSeenByRemove = (await real.db.select().from(orders).where(eq(orders.agentId, agentId))).length;
      await real.db.delete(orders).where(eq(orders.agentId, agentId));
      await real.db.delete(agents).where(eq(agents.id, agentId));
      return true;
    });
    await new Promise((r) => setTimeout(r, 30));
    expect(ordersSeenByRemove).toBe(-1); // not before the write under way has committed
    open();
    expect((await inFlight).status).toBe(201);
    expect(await retired).toBe(true);
    expect(ordersSeenByRemove).toBe(1); // the committed order was there to remove

    // A caller still holding the actor is refused; a new lookup finds no agent.
    await expect(actor.reserve({} as never)).rejects.toBeInstanceOf(AgentRetiredError);
    expectProblem(await t.call("POST", "/v1/orders/intent", { key: tr.key, body: intentBody(tr) }), 404, "not_found");
    expect(await real.db.select().from(orders).where(eq(orders.agentId, agentId))).toEqual([]);
    gate = Promise.resolve();
  });

  test("a removal that does not happen leaves the agent working", async () => {
    const t = await createTestApp(await database());
    const tr = await newTrader(t);
    expect(await t.app.services.agents.retire(tr.agent.id, async () => false)).toBe(false);
    expect((await t.call("POST", "/v1/orders/intent", { key: tr.key, body: intentBody(tr) })).status).toBe(201);
  });
});
