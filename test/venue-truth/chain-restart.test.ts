/**
 * Fills from the chain across restarts of the real service process (issue #22, items 4 and 10): a
 * resting order filled at the venue and confirmed on the chain while the service is down is repaired
 * from the stored cursor at the next start; the same logs read again (the cursor moved back) count
 * once. VENUE=clob at the venue simulator settling on Anvil; the counterparty is Polymarket's official
 * client. PGlite and, with TEST_DATABASE_URL, PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ServiceProcess } from "../support/service-process.ts";
import {
  Api,
  blockOf,
  CONF,
  counterpartySells,
  EventStream,
  kinds,
  newTrader,
  payloadAgent,
  restPayloadBuy,
  ServiceDb,
  startBroker,
  startWorld,
  stopWorld,
  type World,
  YES,
} from "./harness.ts";

let w: World;
beforeAll(async () => {
  w = await startWorld();
}, 60_000);
afterAll(async () => {
  await stopWorld(w);
});

for (const kind of kinds) {
  describe(`fills from the chain across restarts [${kind}]`, () => {
    let db: ServiceDb;
    let svc: ServiceProcess | null = null;
    let api: Api;
    // Carried from the first test to the second.
    let agentId: string;
    let orderId: string;
    let fillTx: string;

    beforeAll(async () => {
      db = await ServiceDb.create(kind, "venue_truth_restart");
    });
    afterAll(async () => {
      if (svc) expect(await svc.stop()).toBe(0);
      db?.remove();
    });

    const start = async () => {
      svc = await startBroker(w, db);
      if (api) api.url = svc.url;
      else api = await Api.newOrg(svc.url);
    };
    const stop = async () => {
      expect(await svc!.stop()).toBe(0);
      svc = null;
    };

    test("a fill confirmed while the service is down is repaired from the stored cursor at the next start", async () => {
      await start();
      const owner = await newTrader(w.sim);
      agentId = await payloadAgent(api, owner);
      ({ orderId } = await restPayloadBuy(api, owner, agentId));
      // A second order, at 0.48, that the counterparty's sell at 0.49 does not reach: open across the restart.
      const resting = await restPayloadBuy(api, owner, agentId, 4.8, 0.48);
      await api.waitCursor((await w.anvil.blockNumber()) - BigInt(CONF - 1));
      await stop();

      // While it is down: the counterparty fills the order, and the chain confirms the settlement.
      fillTx = await counterpartySells(w.sim, 10);
      await w.anvil.mine(CONF + 1);
      expect(w.sim.state.venue.order((await db.execute(`select order_hash from orders where id = '${orderId}'`))[0]!.order_hash as string)?.status).toBe("matched");
      // Nothing recorded it yet.
      expect(await db.execute(`select status from orders where id = '${orderId}'`)).toEqual([{ status: "open" }]);

      const startedAt = Date.now();
      await start();
      const repaired = await api.waitOrder(orderId, "filled after the restart", (o) => o.status === "filled", 10_000);
      console.log(`[${kind}] repaired ${repaired.at - startedAt} ms after the start`);
      expect(repaired.order).toMatchObject({ status: "filled", filled_usdc: 4.9, filled_shares: 10 });
      expect(repaired.order.fills).toEqual([expect.objectContaining({ source: "chain", tx_hash: fillTx, status: "confirmed", shares: "10", usdc: "4.9" })]);
      // Read as confirmed straight away: one fill event, not a mined one first.
      const events = new EventStream(api, agentId);
      try {
        await events.waitFor("the repaired fill", () => events.fillsOf(orderId)[0]);
        expect(events.fillsOf(orderId).map((e) => [e.data.order.status, e.data.fill.status, e.data.fill.tx_hash])).toEqual([["filled", "confirmed", fillTx]]);
      } finally {
        await events.close();
      }
      const agent = await api.agent(agentId);
      expect(agent.daily_volume.used_usdc).toBe(9.7);
      expect(agent.open_orders).toBe(1);
      expect(await api.order(resting.orderId)).toMatchObject({ status: "open", filled_usdc: 0, fills: [] });
      expect(await api.positions(agentId)).toEqual([expect.objectContaining({ token_id: YES, shares: "10", cost_usdc: "4.9" })]);
    }, 120_000);

    test("a fill read again (the stored cursor moved back below it, then a restart) counts once", async () => {
      expect(orderId).toBeDefined();
      const before = await api.order(orderId);
      await stop();
      const countEvents = async () => Number((await db.execute(`select count(*) as n from events where type = 'order' and agent_id = '${agentId}'`))[0]!.n);
      const eventCount = await countEvents();
      const fillBlock = await blockOf(w.anvil, fillTx);
      const below = fillBlock - 1n;
      const block = await w.anvil.rpc<{ hash: string } | null>("eth_getBlockByNumber", [`0x${below.toString(16)}`, false]).catch((e) => {
        throw new Error(`block ${below} (fill ${fillTx} in ${fillBlock}): ${e}`);
      });
      const hash = block!.hash.toLowerCase();
      await db.execute(`update chain_cursor set block_number = ${below}, block_hash = '${hash}', pending = '[]'::jsonb where id = 'order_filled'`);
      expect(await db.execute(`select block_number from chain_cursor where id = 'order_filled'`)).toEqual([{ block_number: expect.anything() }]);

      await start();
      // The cursor passes the fill's block again (the log is read and reported to the actor again)…
      const head = await w.anvil.blockNumber();
      expect(head - BigInt(CONF - 1)).toBeGreaterThan(fillBlock);
      await api.waitCursor(head - BigInt(CONF - 1));
      const delivered = async () => {
        const deadline = Date.now() + 5000;
        for (;;) {
          const found = svc!.lines.map((l) => JSON.parse(l)).filter((j) => j.msg === "venue report delivered" && j.order_id === orderId);
          if (found.length || Date.now() > deadline) return found;
          await Bun.sleep(50);
        }
      };
      // The actor was handed the same log again and found nothing new in it.
      expect(await delivered()).toEqual([expect.objectContaining({ kind: "fill", source: "chain", fill_key: expect.stringContaining(fillTx), result: "repeat" })]);

      // …and it counts once: one fill, the same amounts, no new event, the same position and volume.
      const after = await api.order(orderId);
      expect(after).toMatchObject({ status: "filled", filled_usdc: 4.9, filled_shares: 10 });
      expect(after.fills).toEqual(before.fills);
      expect(after.updated_at).toBe(before.updated_at);
      const agent = await api.agent(agentId);
      expect(agent.daily_volume.used_usdc).toBe(9.7);
      expect(await api.positions(agentId)).toEqual([expect.objectContaining({ token_id: YES, shares: "10", cost_usdc: "4.9" })]);
      await stop();
      expect(await countEvents()).toBe(eventCount);
      expect(Number((await db.execute(`select count(*) as n from fills where order_id = '${orderId}'`))[0]!.n)).toBe(1);
    }, 120_000);

    test("a fill mined before a stop and reorganised away while the service is down is taken back at the next start", async () => {
      await start();
      const owner = await newTrader(w.sim);
      const agent = await payloadAgent(api, owner);
      const { orderId: id } = await restPayloadBuy(api, owner, agent);
      const snapshot = await w.anvil.rpc<string>("evm_snapshot");
      const tx = await counterpartySells(w.sim, 10);
      const mined = await api.waitOrder(id, "filled from the mined fill", (o) => o.fills?.length === 1, 5000);
      expect(mined.order).toMatchObject({ status: "filled", fills: [expect.objectContaining({ tx_hash: tx, status: "mined" })] });
      await stop();

      expect(await w.anvil.rpc<boolean>("evm_revert", [snapshot])).toBe(true);
      await w.anvil.mine(CONF + 2);
      await start();
      // The pending fill was stored with the cursor: found nowhere now, it is taken back (filled → open).
      const back = await api.waitOrder(id, "open again", (o) => o.status === "open", 10_000);
      expect(back.order).toMatchObject({ filled_usdc: 0, filled_shares: 0, fills: [expect.objectContaining({ tx_hash: tx, status: "failed" })] });
      expect((await api.agent(agent)).open_orders).toBe(1);
      expect(await api.positions(agent)).toEqual([]);
    }, 120_000);
  });
}
