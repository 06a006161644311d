/**
 * Fills from the chain, end to end (issue #22): the real service process (`bun src/main.ts`,
 * VENUE=clob at the venue simulator, CHAIN_RPC_URL at Anvil, on which the simulator settles every
 * match), an agent's resting order filled by a counterparty through Polymarket's official client, and
 * what the service then shows: GET /v1/orders/{id} (status, filled_usdc, filled_shares, fills), the
 * agent's event stream, its daily volume and its positions. Payload and delegated mode, a partial
 * fill, a reorg before confirmation, and a payload cancel after the fill. PGlite and, with
 * TEST_DATABASE_URL, PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OrderType, Side } from "@polymarket/clob-client-v2";
import { nextStatus } from "../../src/domain/order-lifecycle.ts";
import type { ServiceProcess } from "../support/service-process.ts";
import {
  Api,
  blockOf,
  CONF,
  counterpartySells,
  delegatedAgent,
  EventStream,
  kinds,
  newTrader,
  POLL_MS,
  payloadAgent,
  restDelegatedBuy,
  restPayloadBuy,
  ServiceDb,
  startBroker,
  startWorld,
  stopWorld,
  submitSigned,
  venueAuth,
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
  describe(`fills from the chain through the service [${kind}]`, () => {
    let db: ServiceDb;
    let svc: ServiceProcess;
    let api: Api;
    const streams: EventStream[] = [];

    beforeAll(async () => {
      db = await ServiceDb.create(kind, "venue_truth_fills");
      svc = await startBroker(w, db);
      api = await Api.newOrg(svc.url);
      api.logs = () => svc.lines;
    }, 90_000);
    afterAll(async () => {
      for (const s of streams) await s.close();
      if (svc) expect(await svc.stop()).toBe(0);
      db?.remove();
    });

    const stream = (agentId: string) => {
      const s = new EventStream(api, agentId);
      streams.push(s);
      return s;
    };

    /**
     * The whole path once an order rests: the counterparty sells 10 shares into it, the settlement is
     * mined (the fill counts, `mined`), and after CONF confirmations it is `confirmed` in the service
     * within 2 s; the event stream reports it, daily volume and positions reflect it.
     */
    async function fillsThroughTheChain(agentId: string, orderId: string, events: EventStream) {
      const tx = await counterpartySells(w.sim, 10);
      const block = await blockOf(w.anvil, tx);
      // Mined: the service counts the fill at once (the lifecycle table's fill_complete: open → filled).
      const mined = await api.waitOrder(orderId, "filled from a mined fill", (o) => o.fills?.length === 1, 5000);
      expect(nextStatus("open", "fill_complete")).toBe("filled");
      expect(mined.order).toMatchObject({ status: "filled", filled_usdc: 4.9, filled_shares: 10 });
      expect(mined.order.fills[0]).toMatchObject({ source: "chain", tx_hash: tx, status: "mined", shares: "10", usdc: "4.9", price: "0.49" });

      // One confirmation short: still mined.
      if (CONF > 2) await w.anvil.mine(CONF - 2);
      await Bun.sleep(POLL_MS * 6);
      expect((await api.order(orderId)).fills[0].status).toBe("mined");
      // The CONF-th confirmation: confirmed within 2 s.
      await w.anvil.mine(1);
      const confirmedAt = Date.now();
      expect(await w.anvil.blockNumber()).toBe(block + BigInt(CONF - 1));
      const confirmed = await api.waitOrder(orderId, "confirmed", (o) => o.fills?.[0]?.status === "confirmed", 5000);
      expect(confirmed.at - confirmedAt).toBeLessThan(2000);
      expect(confirmed.order).toMatchObject({ status: "filled", filled_usdc: 4.9, filled_shares: 10 });
      expect(confirmed.order.fills).toEqual([
        expect.objectContaining({ source: "chain", sources: ["chain"], tx_hash: tx, log_index: expect.any(Number), status: "confirmed", shares: "10", usdc: "4.9", price: "0.49", fee: "0" }),
      ]);

      // The event stream reported the fill, mined then confirmed, each once.
      await events.waitFor("the confirmed fill", () => events.fillsOf(orderId).find((e) => e.data.fill.status === "confirmed"));
      const reported = events.fillsOf(orderId);
      expect(reported.map((e) => [e.data.order.status, e.data.fill.status, e.data.fill.tx_hash])).toEqual([
        ["filled", "mined", tx],
        ["filled", "confirmed", tx],
      ]);
      expect(reported[1].data.order).toMatchObject({ filled_usdc: 4.9 });

      // Daily volume keeps the 4.9 USDC traded; nothing open; a position of 10 shares at 0.49.
      const agent = await api.agent(agentId);
      expect(agent.daily_volume.used_usdc).toBe(4.9);
      expect(agent.open_orders).toBe(0);
      expect(await api.positions(agentId)).toEqual([expect.objectContaining({ token_id: YES, shares: "10", avg_price: "0.49", cost_usdc: "4.9", realized_pnl_usdc: "0" })]);
      return tx;
    }

    test("payload mode: a resting order (intent, viem signature, submit-signed) filled by the official client is filled in the service within 2 s of its confirmation", async () => {
      const owner = await newTrader(w.sim);
      const agentId = await payloadAgent(api, owner);
      const events = stream(agentId);
      const { orderId, orderHash } = await restPayloadBuy(api, owner, agentId);
      expect((await api.agent(agentId)).open_orders).toBe(1);
      await fillsThroughTheChain(agentId, orderId, events);
      expect(w.sim.state.venue.order(orderHash)?.status).toBe("matched");
    }, 60_000);

    test("delegated mode: the same for an order the service placed with the agent's venue credentials", async () => {
      const { agentId } = await delegatedAgent(api, w.sim);
      const events = stream(agentId);
      const { orderId } = await restDelegatedBuy(api, agentId);
      await fillsThroughTheChain(agentId, orderId, events);
    }, 60_000);

    test("a partial fill leaves the order open with the partial amounts; the rest fills it", async () => {
      const owner = await newTrader(w.sim);
      const agentId = await payloadAgent(api, owner);
      const events = stream(agentId);
      // 7.35 USDC at 0.49: 15 shares; the counterparty sells 6 (the venue's minimum is 5), then 9.
      const { orderId } = await restPayloadBuy(api, owner, agentId, 7.35);

      const tx1 = await counterpartySells(w.sim, 6);
      await w.anvil.mine(CONF - 1);
      const part = await api.waitOrder(orderId, "partly filled (confirmed)", (o) => o.fills?.[0]?.status === "confirmed", 5000);
      expect(nextStatus("open", "fill")).toBe("open");
      expect(part.order).toMatchObject({ status: "open", filled_usdc: 2.94, filled_shares: 6 });
      expect(part.order.fills).toEqual([expect.objectContaining({ source: "chain", tx_hash: tx1, shares: "6", usdc: "2.94", status: "confirmed" })]);
      let agent = await api.agent(agentId);
      // The order still reserves its whole notional while open.
      expect(agent.daily_volume.used_usdc).toBe(7.35);
      expect(agent.open_orders).toBe(1);
      expect(await api.positions(agentId)).toEqual([expect.objectContaining({ token_id: YES, shares: "6", cost_usdc: "2.94" })]);

      const tx2 = await counterpartySells(w.sim, 9);
      await w.anvil.mine(CONF - 1);
      const full = await api.waitOrder(orderId, "filled (confirmed)", (o) => o.fills?.length === 2 && o.fills.every((f: any) => f.status === "confirmed"), 5000);
      expect(full.order).toMatchObject({ status: "filled", filled_usdc: 7.35, filled_shares: 15 });
      expect(full.order.fills.map((f: any) => [f.tx_hash, f.shares, f.usdc])).toEqual([
        [tx1, "6", "2.94"],
        [tx2, "9", "4.41"],
      ]);
      agent = await api.agent(agentId);
      expect(agent.daily_volume.used_usdc).toBe(7.35);
      expect(agent.open_orders).toBe(0);
      expect(await api.positions(agentId)).toEqual([expect.objectContaining({ token_id: YES, shares: "15", avg_price: "0.49", cost_usdc: "7.35" })]);
      await events.waitFor("the last fill", () => events.fillsOf(orderId).find((e) => e.data.fill.tx_hash === tx2 && e.data.fill.status === "confirmed"));
      // Each fill reported confirmed once (and mined at most once before, when a pass saw it unconfirmed).
      const reported = events.fillsOf(orderId);
      expect(reported.filter((e) => e.data.fill.status === "confirmed").map((e) => [e.data.order.status, e.data.fill.tx_hash])).toEqual([
        ["open", tx1],
        ["filled", tx2],
      ]);
      for (const tx of [tx1, tx2]) expect(reported.filter((e) => e.data.fill.tx_hash === tx && e.data.fill.status === "mined").length).toBeLessThanOrEqual(1);
      expect(reported.every((e) => ["mined", "confirmed"].includes(e.data.fill.status))).toBe(true);
    }, 60_000);

    test("a reorg before confirmation (evm_snapshot, evm_revert, new blocks) takes the fill back as the lifecycle table says: filled → open, position gone", async () => {
      const owner = await newTrader(w.sim);
      const agentId = await payloadAgent(api, owner);
      const events = stream(agentId);
      const { orderId } = await restPayloadBuy(api, owner, agentId);
      const volumeBefore = (await api.agent(agentId)).daily_volume.used_usdc;

      const snapshot = await w.anvil.rpc<string>("evm_snapshot");
      const tx = await counterpartySells(w.sim, 10);
      const mined = await api.waitOrder(orderId, "filled from the mined fill", (o) => o.fills?.length === 1, 5000);
      expect(mined.order).toMatchObject({ status: "filled", filled_usdc: 4.9, filled_shares: 10 });
      expect(await api.positions(agentId)).toEqual([expect.objectContaining({ shares: "10" })]);
      if (CONF > 2) await w.anvil.mine(CONF - 2); // not yet confirmed

      expect(await w.anvil.rpc<boolean>("evm_revert", [snapshot])).toBe(true);
      await w.anvil.mine(CONF + 2);
      // The table: fill_reverted from filled leads to open.
      expect(nextStatus("filled", "fill_reverted")).toBe("open");
      const back = await api.waitOrder(orderId, "open again", (o) => o.status === "open", 5000);
      expect(back.order).toMatchObject({ status: "open", filled_usdc: 0, filled_shares: 0 });
      expect(back.order.fills).toEqual([expect.objectContaining({ tx_hash: tx, status: "failed", shares: "10" })]);
      expect(back.order.history.at(-1)).toMatchObject({ status: "open", reason: expect.stringContaining("reorg") });
      // Volume back to what the open order reserves; no position; open again.
      const agent = await api.agent(agentId);
      expect(agent.daily_volume.used_usdc).toBe(volumeBefore);
      expect(agent.open_orders).toBe(1);
      expect(await api.positions(agentId)).toEqual([]);
      await events.waitFor("the fill taken back", () => events.fillsOf(orderId).find((e) => e.data.fill.status === "failed"));
      expect(events.fillsOf(orderId).map((e) => [e.data.order.status, e.data.fill.status])).toEqual([
        ["filled", "mined"],
        ["open", "failed"],
      ]);
      // Never confirmed, whatever more blocks come.
      await w.anvil.mine(CONF);
      await Bun.sleep(POLL_MS * 6);
      expect((await api.order(orderId)).fills.map((f: any) => f.status)).toEqual(["failed"]);
    }, 60_000);

    test("the payload cancel of an order the chain reported filled keeps its volume", async () => {
      const owner = await newTrader(w.sim);
      const agentId = await payloadAgent(api, owner);
      const { orderId, orderHash } = await restPayloadBuy(api, owner, agentId);
      await counterpartySells(w.sim, 10);
      await w.anvil.mine(CONF - 1);
      await api.waitOrder(orderId, "filled (confirmed)", (o) => o.status === "filled" && o.fills?.[0]?.status === "confirmed", 5000);

      const del = await venueAuth(owner, { method: "DELETE", requestPath: "/order", body: JSON.stringify({ orderID: orderHash }) });
      const res = await api.call("DELETE", `/v1/orders/${orderId}`, { venue_auth: del });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: "invalid_state", order_status: "filled" });
      expect(await api.order(orderId)).toMatchObject({ status: "filled", filled_usdc: 4.9, filled_shares: 10 });
      const agent = await api.agent(agentId);
      expect(agent.daily_volume.used_usdc).toBe(4.9);
      expect(await api.positions(agentId)).toEqual([expect.objectContaining({ shares: "10", cost_usdc: "4.9" })]);
      // The traded volume cannot be traded again: with a daily limit of 6, another 4.9 USDC is refused.
      expect((await api.call("PATCH", `/v1/agents/${agentId}/limits`, { daily_volume_usdc: 6 })).status).toBe(200);
      const again = await api.call("POST", "/v1/orders/intent", { agent_id: agentId, market_id: YES, side: "buy", size_usdc: 4.9, price: 0.49 });
      expect(again.status).toBe(422);
      expect(again.body.failures.map((f: any) => f.code)).toContain("daily_volume_exceeded");
    }, 60_000);

    test("the payload cancel of a partly filled order keeps the part the chain reported", async () => {
      const owner = await newTrader(w.sim);
      const agentId = await payloadAgent(api, owner);
      const { orderId, orderHash } = await restPayloadBuy(api, owner, agentId, 7.35);
      await counterpartySells(w.sim, 6);
      await w.anvil.mine(CONF - 1);
      await api.waitOrder(orderId, "partly filled (confirmed)", (o) => o.fills?.[0]?.status === "confirmed", 5000);

      const del = await venueAuth(owner, { method: "DELETE", requestPath: "/order", body: JSON.stringify({ orderID: orderHash }) });
      const res = await api.call("DELETE", `/v1/orders/${orderId}`, { venue_auth: del });
      expect(res.status).toBe(200);
      expect(w.sim.state.venue.order(orderHash)?.status).toBe("cancelled");
      const order = await api.order(orderId);
      expect(order.filled_usdc).toBe(2.94);
      expect(order.filled_shares).toBe(6);
      // The venue answered that it cancelled the live order (docs/decisions.md, "a payload cancel the
      // venue confirmed"): cancelled, keeping the part the chain reported (never "nothing filled"); the
      // unfilled rest is released.
      expect(nextStatus("open", "cancel_confirmed")).toBe("cancelled");
      expect(order.status).toBe("cancelled");
      expect(order.fills).toEqual([expect.objectContaining({ source: "chain", shares: "6", status: "confirmed" })]);
      const agent = await api.agent(agentId);
      expect(agent.daily_volume.used_usdc).toBe(2.94);
      expect(agent.open_orders).toBe(0);
      expect(await api.positions(agentId)).toEqual([expect.objectContaining({ shares: "6", cost_usdc: "2.94" })]);
    }, 60_000);

    test("a delegated cancel of a partly filled order: cancelled, the part the chain reported kept once (not added to the venue's own count)", async () => {
      const { agentId } = await delegatedAgent(api, w.sim);
      const { orderId } = await restDelegatedBuy(api, agentId, 7.35);
      await counterpartySells(w.sim, 6);
      await w.anvil.mine(CONF - 1);
      await api.waitOrder(orderId, "partly filled (confirmed)", (o) => o.fills?.[0]?.status === "confirmed", 5000);
      const res = await api.call("DELETE", `/v1/orders/${orderId}`);
      expect(res.status).toBe(200);
      const order = await api.order(orderId);
      expect(order).toMatchObject({ status: "cancelled", filled_usdc: 2.94, filled_shares: 6 });
      const agent = await api.agent(agentId);
      expect(agent.daily_volume.used_usdc).toBe(2.94);
      expect(agent.open_orders).toBe(0);
      expect(await api.positions(agentId)).toEqual([expect.objectContaining({ shares: "6", cost_usdc: "2.94" })]);
    }, 60_000);

    test("a kill without venue_auth of a partly filled payload order keeps what the chain reported filled", async () => {
      const owner = await newTrader(w.sim);
      const agentId = await payloadAgent(api, owner);
      const { orderId } = await restPayloadBuy(api, owner, agentId, 7.35);
      await counterpartySells(w.sim, 6);
      await w.anvil.mine(CONF - 1);
      await api.waitOrder(orderId, "partly filled (confirmed)", (o) => o.fills?.[0]?.status === "confirmed", 5000);
      const kill = await api.call("POST", `/v1/agents/${agentId}/kill`, {});
      expect(kill.status).toBe(200);
      // The service cannot cancel it (no owner's keys): failed and flagged, still resting at the venue.
      const order = await api.order(orderId);
      expect(order).toMatchObject({ status: "failed", flagged_for_review: true, filled_usdc: 2.94, filled_shares: 6 });
      const agent = await api.agent(agentId);
      expect(agent.daily_volume.used_usdc).toBe(7.35);
      expect(await api.positions(agentId)).toEqual([expect.objectContaining({ shares: "6", cost_usdc: "2.94" })]);
      // The rest fills later at the venue: the chain reports it and the order becomes filled (fill_complete from failed).
      expect(nextStatus("failed", "fill_complete")).toBe("filled");
      await counterpartySells(w.sim, 9);
      await w.anvil.mine(CONF - 1);
      const full = await api.waitOrder(orderId, "filled after the kill", (o) => o.status === "filled", 5000);
      expect(full.order).toMatchObject({ filled_usdc: 7.35, filled_shares: 15 });
      expect((await api.agent(agentId)).daily_volume.used_usdc).toBe(7.35);
      expect(await api.positions(agentId)).toEqual([expect.objectContaining({ shares: "15", cost_usdc: "7.35" })]);
    }, 60_000);

    test("a taker order filled by its placement: the chain's fill of it counts once beside the placement's answer; sells are checked against the position", async () => {
      const owner = await newTrader(w.sim);
      const agentId = await payloadAgent(api, owner);
      const events = stream(agentId);
      // 5 USDC at 0.50 crosses the book's ask at 0.50: matched at once (10 shares).
      const intent = await api.call("POST", "/v1/orders/intent", { agent_id: agentId, market_id: YES, side: "buy", size_usdc: 5, price: 0.5 });
      expect(intent.status).toBe(201);
      const submitted = await submitSigned(api, owner, intent.body);
      expect(submitted.status).toBe(200);
      expect(submitted.body.status).toBe("filled");
      const orderId = intent.body.order_id;
      await w.anvil.mine(CONF - 1);
      const confirmed = await api.waitOrder(orderId, "its chain fill confirmed", (o) => o.fills?.some((f: any) => f.status === "confirmed"), 5000);
      expect(confirmed.order).toMatchObject({ status: "filled", filled_usdc: 5, filled_shares: 10 });
      expect(confirmed.order.fills).toEqual([expect.objectContaining({ source: "chain", shares: "10", usdc: "5", price: "0.5", status: "confirmed" })]);
      const agent = await api.agent(agentId);
      expect(agent.daily_volume.used_usdc).toBe(5);
      expect(agent.open_orders).toBe(0);
      expect(await api.positions(agentId)).toEqual([expect.objectContaining({ token_id: YES, shares: "10", avg_price: "0.5", cost_usdc: "5" })]);
      await events.waitFor("the confirmed fill", () => events.fillsOf(orderId).find((e) => e.data.fill.status === "confirmed"));
      // The agent holds 10 shares: a sell of 11 is refused (insufficient_position), one of 10 approved.
      const tooMany = await api.call("POST", "/v1/orders/intent", { agent_id: agentId, market_id: YES, side: "sell", size_usdc: 5.5, price: 0.5 });
      expect(tooMany.status).toBe(422);
      expect(tooMany.body.failures.map((f: any) => f.code)).toContain("insufficient_position");
      const ten = await api.call("POST", "/v1/orders/intent", { agent_id: agentId, market_id: YES, side: "sell", size_usdc: 5, price: 0.5 });
      expect(ten.status).toBe(201);
      expect(ten.body.status).toBe("awaiting_signature");
    }, 60_000);

    test("shares the wallet bought outside the service (its on-chain balance, no fills here) may be sold", async () => {
      const owner = await newTrader(w.sim);
      const agentId = await payloadAgent(api, owner);
      // Before: nothing held, a sell is refused.
      const before = await api.call("POST", "/v1/orders/intent", { agent_id: agentId, market_id: YES, side: "sell", size_usdc: 5, price: 0.5 });
      expect(before.status).toBe(422);
      expect(before.body.failures.map((f: any) => f.code)).toContain("insufficient_position");
      // The owner buys 10 shares at the venue directly with the official client.
      const bought: any = await owner.client.postOrder(await owner.client.createOrder({ tokenID: YES, price: 0.5, size: 10, side: Side.BUY }), OrderType.FAK);
      expect(bought).toMatchObject({ success: true, status: "matched" });
      expect(await api.positions(agentId)).toEqual([]);
      const sell = await api.call("POST", "/v1/orders/intent", { agent_id: agentId, market_id: YES, side: "sell", size_usdc: 5, price: 0.5 });
      expect(sell.status).toBe(201);
      const tooMany = await api.call("POST", "/v1/orders/intent", { agent_id: agentId, market_id: YES, side: "sell", size_usdc: 5.5, price: 0.5 });
      expect(tooMany.status).toBe(422);
      expect(tooMany.body.failures.map((f: any) => f.code)).toContain("insufficient_position");
    }, 60_000);
  });
}
