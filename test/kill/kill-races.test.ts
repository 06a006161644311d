/** the kill switch racing a delegated placement (agent-actor.ts intent, place and kill). */
import { beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { orders } from "../../src/db/schema.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { DEM_YES, getAgent, newTrader, sleep } from "../support/payload.ts";
import { caller, hookedVenue } from "../support/hooked-venue.ts";

async function delegatedTrader(t: TestApp) {
  const tr = await newTrader(t);
  const creds = await t.call("POST", `/v1/agents/${tr.agent.id}/creds`, {
    key: tr.key,
    body: { api_key: "k-r", api_secret: "s-r", passphrase: "p-r", scopes: ["order:place", "order:cancel"] },
  });
  expect(creds.status).toBe(200);
  return tr;
}

describe("kill vs delegated placement", () => {
  let t: TestApp;
  let h: ReturnType<typeof hookedVenue>;
  beforeAll(async () => {
    h = hookedVenue();
    t = await createTestApp(await sharedPglite(), { venue: h.venue, config: { killDeadlineMs: 400 } });
  });

  test("no delegated order is sent to the venue after the kill switch tripped the breaker", async () => {
    const tr = await delegatedTrader(t);
    const agentId = tr.agent.id;
    const services = t.app.services;
    const actor = (await services.agents.registry.get(agentId))!;
    const placedWhile: string[] = [];
    h.overrides.placeDelegatedOrder = async (req: any, opts: any) => {
      placedWhile.push(actor.view().breaker.state);
      return h.paper.placeDelegatedOrder(req, opts);
    };
    // The kill arrives right after the intent was approved and reserved, while its row is being written.
    const reserve = actor.reserve.bind(actor);
    let kill: Promise<any> | undefined;
    (actor as any).reserve = async (req: any) => {
      const r = await reserve(req);
      if (r.approved) kill = services.kill.kill(caller(tr.agent.org_id), agentId, null);
      return r;
    };
    try {
      const res = await t.call("POST", "/v1/orders/intent", {
        key: tr.key,
        body: { agent_id: agentId, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.47 },
      });
      const killed = await kill!;
      // The breaker was tripped before the placement went out, yet the order went to the venue.
      expect(placedWhile).toEqual([]); // what should happen: nothing is placed once the breaker tripped
      expect(res.status).not.toBe(201);
      expect(killed.failed).toEqual([]);
    } finally {
      delete (actor as any).reserve;
      delete h.overrides.placeDelegatedOrder;
    }
  });

  test("an order whose row is written after the kill deadline ends in the state the kill reported (failed), not stuck awaiting_signature", async () => {
    const tr = await newTrader(t); // payload mode
    const agentId = tr.agent.id;
    const services = t.app.services;
    const repo = services.orderRepo;
    const insert = repo.insert.bind(repo);
    // A slow commit (a database stall): the row lands 700 ms later, after the 400 ms kill deadline.
    (repo as any).insert = async (...args: Parameters<typeof repo.insert>) => {
      await sleep(700);
      return insert(...args);
    };
    let intent: Promise<any>;
    try {
      intent = t.call("POST", "/v1/orders/intent", {
        key: tr.key,
        body: { agent_id: agentId, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.47 },
      });
      await sleep(100); // the intent is approved and reserved; its write is in progress
    } finally {
      delete (repo as any).insert;
    }
    const kill = await t.call("POST", `/v1/agents/${agentId}/kill`, { key: tr.key });
    expect(kill.status).toBe(200);
    const res = await intent;
    expect(res.status).toBe(201);
    const orderId = res.body.order_id;
    expect(kill.body.failed).toEqual([orderId]);
    // The sweep runs; the order's deadline is long gone by then.
    await services.orders.expireDue(new Date(Date.now() + 3600_000));
    const [row] = await (await sharedPglite()).db.select().from(orders).where(eq(orders.id, orderId));
    const agent = await getAgent(t, tr);
    // The actor dropped the order (failed); the database must say the same.
    expect(agent.open_orders).toBe(0);
    expect(row.status).toBe("failed"); // actual: awaiting_signature, and the sweep cannot expire it
  });
});
