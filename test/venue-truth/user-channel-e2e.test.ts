/**
 * The venue's truth end to end through the real service process (`bun src/main.ts`, VENUE=clob at the
 * venue simulator, VENUE_WS_URL derived from VENUE_URL), on PGlite (DATA_DIR) and, with
 * TEST_DATABASE_URL, PostgreSQL (DATABASE_URL): Polymarket's official client is the agent's owner (its
 * L2 credentials stored through POST /v1/agents/{id}/creds) and the counterparty.
 *
 * - delegated: a resting order filled by a counterparty is `filled` within 2 s of the trade, with its
 *   fill (source user_channel, the trade id), an `order` event and the position;
 * - a partial fill, then the rest; a resting sell filled (the position shrinks);
 * - a dropped user channel: the reconnect's REST catch-up repairs a fill and a cancel made meanwhile;
 * - a cancel done at the venue by the owner → `cancelled`, its open-order slot released; a GTD order
 *   expiring at the venue → `expired`;
 * - a trade the venue marks FAILED → the fill is taken back;
 * - a restart after venue changes: the REST catch-up repairs them;
 * - payload: a GTD order unfilled at its expiry → `expired` by the service;
 * - market channel: steady-state payload intents read no `GET /book` (simulator at 50 ms); a dropped
 *   market channel makes books stale (GET /book again) and they recover.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ClobClient, createL2Headers, OrderType, orderToJsonV2, Side } from "@polymarket/clob-client-v2";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { officialSigner } from "../support/official-client.ts";
import type { ServiceProcess } from "../support/service-process.ts";
import {
  call,
  delegatedAgent,
  eventMatching,
  KINDS,
  newOrg,
  OPEN_LIMITS,
  type ServiceHome,
  sells,
  serviceHome,
  simPost,
  simStats,
  startClobService,
  TOKEN,
  type Trader,
  traderOf,
  until,
  untilFollowed,
} from "./e2e-support.ts";

let sim: VenueSim;
beforeAll(() => {
  sim = startVenueSim({ port: 0, hostname: "127.0.0.1" });
});
afterAll(async () => {
  await sim?.stop();
});

for (const kind of KINDS) {
  describe(`the venue's truth through the service process [${kind}]`, () => {
    let home: ServiceHome;
    let svc: ServiceProcess;
    let key: string;
    let alice: Trader; // the delegated agent's owner (its credentials are stored in the service)
    let bob: Trader; // the counterparty
    let agent: string;
    let gtdExpiry: number;
    let gtdDelegated: { order_id: string; venue_order_id: string };
    let gtdPayload: { order_id: string; agent_id: string };

    const order = async (id: string) => {
      const r = await call(svc.url, key, "GET", `/v1/orders/${id}`);
      expect(r.status).toBe(200);
      return r.body;
    };
    /** A delegated buy through the service at `price` for `usdc`; it rests at the venue. */
    const restingBuy = async (price: number, usdc: number, extra: Record<string, unknown> = {}, agentId = agent) => {
      const r = await call(svc.url, key, "POST", "/v1/orders/intent", { agent_id: agentId, market_id: TOKEN, side: "buy", size_usdc: usdc, price, ...extra });
      expect({ status: r.status, body: r.status === 201 ? null : r.body }).toMatchObject({ status: 201 });
      expect(r.body).toMatchObject({ mode: "delegated", status: "open" });
      return r.body as { order_id: string; venue_order_id: string };
    };

    /** A payload agent's GTD order, signed and submitted with a venue_auth the official client computed; it rests. */
    const payloadGtd = async (expires_at: string) => {
      const pk = generatePrivateKey();
      const wallet = officialSigner(privateKeyToAccount(pk));
      const creds = await new ClobClient({ host: sim.url, chain: 137, signer: wallet }).createOrDeriveApiKey();
      const a = await call(svc.url, key, "POST", "/v1/agents", { wallet_address: wallet.account.address, limits: OPEN_LIMITS });
      expect(a.status).toBe(201);
      const intent = await call(svc.url, key, "POST", "/v1/orders/intent", { agent_id: a.body.id, market_id: TOKEN, side: "buy", size_usdc: 3, price: 0.42, order_type: "GTD", expires_at });
      expect({ status: intent.status, body: intent.status === 201 ? null : intent.body }).toMatchObject({ status: 201 });
      expect(intent.body).toMatchObject({ mode: "payload", order_type: "GTD" });
      const unsigned = intent.body.unsigned_order;
      const signature = await privateKeyToAccount(pk).signTypedData(unsigned);
      const m = unsigned.message;
      const payload = orderToJsonV2({ ...m, side: m.side === 0 ? "BUY" : "SELL", expiration: intent.body.expiration, signature } as any, creds.key, OrderType.GTD);
      const h = await createL2Headers(wallet, creds, { method: "POST", requestPath: "/order", body: JSON.stringify(payload) });
      const venue_auth = { address: h.POLY_ADDRESS, api_key: h.POLY_API_KEY, passphrase: h.POLY_PASSPHRASE, timestamp: h.POLY_TIMESTAMP, signature: h.POLY_SIGNATURE };
      const submitted = await call(svc.url, key, "POST", "/v1/orders/submit-signed", { order_id: intent.body.order_id, signature, venue_auth });
      expect({ status: submitted.status, body: submitted.body }).toMatchObject({ status: 200, body: { status: "open" } });
      return { order_id: intent.body.order_id as string, agent_id: a.body.id as string };
    };

    beforeAll(async () => {
      await simPost(sim, "/_sim/faults", { latency_ms: 0, trade_fail_ratio: 0, ws_refuse_ratio: 0 });
      home = await serviceHome(kind, "ws_e2e");
      svc = await startClobService(sim, home);
      key = await newOrg(svc.url, `e2e-${kind}`);
      alice = await traderOf(sim, generatePrivateKey());
      bob = await traderOf(sim, generatePrivateKey());
      const before = await simStats(sim);
      agent = await delegatedAgent(svc.url, key, alice);
      await untilFollowed(sim, before);
      // GTD orders need expires_at at least a minute ahead: both are placed now and checked by the
      // last test, so their wait runs beside the other tests.
      gtdExpiry = Math.floor(Date.now() / 1000) + 63;
      const expires_at = new Date(gtdExpiry * 1000).toISOString();
      gtdDelegated = await restingBuy(0.42, 3, { order_type: "GTD", expires_at });
      expect((await order(gtdDelegated.order_id)).status).toBe("open");
      gtdPayload = await payloadGtd(expires_at);
    }, 120_000);
    afterAll(async () => {
      await svc?.stop();
      home?.cleanup();
    });

    test("delegated: a resting order filled by a counterparty (official client) is filled within 2 s, with its fill, event and position", async () => {
      const placed = await restingBuy(0.49, 4.9); // 10 shares inside the spread (bids 0.48, asks 0.50)
      expect((await alice.client.getOrder(placed.venue_order_id)).status).toBe("ORDER_STATUS_LIVE");
      const tradedAt = await sells(bob, 0.49, 10);
      const filled = await until("filled", async () => {
        const o = await order(placed.order_id);
        return o.status === "filled" ? o : null;
      }, 2000, 10);
      expect(Date.now() - tradedAt).toBeLessThan(2000);
      expect(filled).toMatchObject({ filled_usdc: 4.9, filled_shares: 10 });
      const trades: any[] = await alice.client.getTrades({ maker_address: alice.address } as any);
      const trade = trades.find((t) => t.maker_orders?.some((m: any) => m.order_id === placed.venue_order_id) || t.taker_order_id === placed.venue_order_id);
      expect(trade).toBeDefined();
      const userFills = filled.fills.filter((f: any) => f.status !== "failed");
      expect(userFills).toHaveLength(1);
      expect(userFills[0]).toMatchObject({ source: "user_channel", trade_id: trade.id, shares: "10", usdc: "4.9", price: "0.49" });
      // MINED and CONFIRMED move the same fill's status; still one fill.
      const confirmed = await until("confirmed", async () => {
        const o = await order(placed.order_id);
        return o.fills.length === 1 && o.fills[0].status === "confirmed" ? o : null;
      });
      expect(confirmed).toMatchObject({ status: "filled", filled_usdc: 4.9 });

      const event = await eventMatching(svc.url, key, agent, (e) => e.type === "order" && e.data?.fill?.trade_id === trade.id);
      expect(event.data.order.id).toBe(placed.order_id);
      expect(event.data.fill).toMatchObject({ source: "user_channel", shares: "10" });
      const positions = await call(svc.url, key, "GET", `/v1/agents/${agent}/positions`);
      expect(positions.status).toBe(200);
      expect(positions.body.positions).toHaveLength(1);
      expect(positions.body.positions[0]).toMatchObject({ token_id: TOKEN, shares: "10", avg_price: "0.49", cost_usdc: "4.9" });
    });

    test("a partial fill keeps the order open with what filled; the rest fills it", async () => {
      const placed = await restingBuy(0.49, 9.8); // 20 shares
      await sells(bob, 0.49, 6);
      const part = await until("partly filled", async () => {
        const o = await order(placed.order_id);
        return o.filled_shares === 6 ? o : null;
      }, 2000, 10);
      expect(part).toMatchObject({ status: "open", filled_usdc: 2.94 });
      await sells(bob, 0.49, 14);
      const all = await until("filled", async () => {
        const o = await order(placed.order_id);
        return o.status === "filled" ? o : null;
      }, 2000, 10);
      expect(all).toMatchObject({ filled_shares: 20, filled_usdc: 9.8 });
      expect(all.fills.map((f: any) => f.shares).sort()).toEqual(["14", "6"]);
      expect(new Set(all.fills.map((f: any) => f.trade_id)).size).toBe(2);
      const positions = await call(svc.url, key, "GET", `/v1/agents/${agent}/positions`);
      expect(positions.body.positions[0]).toMatchObject({ shares: "30", cost_usdc: "14.7" });
    });

    test("a resting sell filled by a counterparty's buy takes its shares out of the position", async () => {
      const r = await call(svc.url, key, "POST", "/v1/orders/intent", { agent_id: agent, market_id: TOKEN, side: "sell", size_usdc: 4.9, price: 0.49 });
      expect({ status: r.status, body: r.status === 201 ? null : r.body }).toMatchObject({ status: 201 });
      expect(r.body.status).toBe("open");
      const buy = await bob.client.createOrder({ tokenID: TOKEN, price: 0.49, size: 10, side: Side.BUY });
      expect(((await bob.client.postOrder(buy, OrderType.FAK)) as any).success).toBe(true);
      const sold = await until("the sell filled", async () => {
        const o = await order(r.body.order_id);
        return o.status === "filled" ? o : null;
      }, 2000, 10);
      expect(sold).toMatchObject({ filled_shares: 10, filled_usdc: 4.9 });
      expect(sold.fills[0]).toMatchObject({ source: "user_channel", shares: "10" });
      const positions = await call(svc.url, key, "GET", `/v1/agents/${agent}/positions`);
      expect(positions.body.positions[0]).toMatchObject({ shares: "20", cost_usdc: "9.8", realized_pnl_usdc: "0" });
    });

    test("after the user channel drops, the reconnect's REST catch-up finds the fill and the cancel made meanwhile", async () => {
      const toFill = await restingBuy(0.49, 2.45); // 5 shares
      const toCancel = await restingBuy(0.42, 3);
      expect((await simPost(sim, "/_sim/faults", { ws_refuse_ratio: 1 })).status).toBe(200);
      try {
        const dropped = (await (await simPost(sim, "/_sim/ws/drop", { channel: "user" })).json()) as { dropped: number };
        expect(dropped.dropped).toBeGreaterThanOrEqual(1);
        await sells(bob, 0.49, 5);
        await alice.client.cancelOrder({ orderID: toCancel.venue_order_id });
        await Bun.sleep(300);
        expect((await order(toFill.order_id)).status).toBe("open");
        expect((await order(toCancel.order_id)).status).toBe("open");
      } finally {
        await simPost(sim, "/_sim/faults", { ws_refuse_ratio: 0 });
      }
      const filled = await until("filled after the reconnect", async () => {
        const o = await order(toFill.order_id);
        return o.status === "filled" ? o : null;
      }, 10_000);
      expect(filled).toMatchObject({ filled_shares: 5, filled_usdc: 2.45 });
      expect(filled.fills).toHaveLength(1);
      await until("cancelled after the reconnect", async () => (await order(toCancel.order_id)).status === "cancelled", 10_000);
    }, 30_000);

    test("a cancel at the venue by the owner (official client) cancels the order here and releases its open-order slot", async () => {
      // An agent with room for one open order.
      const before = await simStats(sim);
      const owner = await traderOf(sim, generatePrivateKey());
      const one = await delegatedAgent(svc.url, key, owner, { max_open_orders: 1 });
      await untilFollowed(sim, before);
      const placed = await restingBuy(0.42, 3, {}, one);
      const blocked = await call(svc.url, key, "POST", "/v1/orders/intent", { agent_id: one, market_id: TOKEN, side: "buy", size_usdc: 3, price: 0.43 });
      expect(blocked.status).toBe(422);
      expect(JSON.stringify(blocked.body)).toContain("max_open_orders");
      expect(await owner.client.cancelOrder({ orderID: placed.venue_order_id })).toMatchObject({ canceled: [placed.venue_order_id] });
      const cancelled = await until("cancelled", async () => {
        const o = await order(placed.order_id);
        return o.status === "cancelled" ? o : null;
      }, 2000, 10);
      expect(cancelled.filled_usdc).toBe(0);
      // The slot is free again.
      const next = await restingBuy(0.43, 3, {}, one);
      expect((await order(next.order_id)).status).toBe("open");
      const exposure = await call(svc.url, key, "GET", `/v1/agents/${one}/exposure`);
      expect(exposure.body.data[0].open_orders_usdc).toBeGreaterThan(2.9);
      expect(exposure.body.data[0].open_orders_usdc).toBeLessThan(3.01); // the new order alone
    });

    test("a trade the venue marks FAILED is taken back", async () => {
      expect((await simPost(sim, "/_sim/faults", { trade_fail_ratio: 1, trade_mine_ms: 300 })).status).toBe(200);
      try {
        const placed = await restingBuy(0.49, 2.94); // 6 shares
        const held = async () => ((await call(svc.url, key, "GET", `/v1/agents/${agent}/positions`)).body.positions[0]?.shares ?? "0") as string;
        const before = await held();
        await sells(bob, 0.49, 6);
        const back = await until("the fill taken back", async () => {
          const o = await order(placed.order_id);
          return o.fills.length === 1 && o.fills[0].status === "failed" ? o : null;
        }, 5000);
        expect(back).toMatchObject({ status: "open", filled_usdc: 0, filled_shares: 0 });
        // The event stream reports the take-back.
        const event = await eventMatching(svc.url, key, agent, (e) => e.type === "order" && e.data?.order?.id === placed.order_id && e.data?.fill?.status === "failed");
        expect(event.data.fill.trade_id).toBe(back.fills[0].trade_id);
        expect(await held()).toBe(before);
        await alice.client.cancelOrder({ orderID: placed.venue_order_id }).catch(() => undefined);
      } finally {
        await simPost(sim, "/_sim/faults", { trade_fail_ratio: 0, trade_mine_ms: 0 });
      }
    });

    test("a restart after venue changes: the REST catch-up repairs the fill and the cancel made meanwhile", async () => {
      const toFill = await restingBuy(0.49, 3.92); // 8 shares
      const toCancel = await restingBuy(0.42, 3);
      expect(await svc.stop()).toBe(0);
      // Meanwhile, at the venue: a counterparty fills one, the owner cancels the other.
      await sells(bob, 0.49, 8);
      await alice.client.cancelOrder({ orderID: toCancel.venue_order_id });
      const before = await simStats(sim);
      svc = await startClobService(sim, home);
      await untilFollowed(sim, before, 15_000);
      const filled = await until("filled after the restart", async () => {
        const o = await order(toFill.order_id);
        return o.status === "filled" ? o : null;
      }, 10_000);
      expect(filled).toMatchObject({ filled_shares: 8, filled_usdc: 3.92 });
      expect(filled.fills).toHaveLength(1);
      expect(filled.fills[0].trade_id).toBeTruthy();
      const cancelled = await until("cancelled after the restart", async () => {
        const o = await order(toCancel.order_id);
        return o.status === "cancelled" ? o : null;
      }, 10_000);
      expect(cancelled.filled_usdc).toBe(0);
    }, 60_000);

    test("a crash (SIGKILL) after venue changes: the restart's catch-up repairs them", async () => {
      const toFill = await restingBuy(0.49, 5.88); // 12 shares
      const toCancel = await restingBuy(0.42, 3);
      svc.signal("SIGKILL");
      await svc.exited;
      await sells(bob, 0.49, 5); // a partial fill, 5 of 12
      await alice.client.cancelOrder({ orderID: toCancel.venue_order_id });
      const before = await simStats(sim);
      svc = await startClobService(sim, home);
      await untilFollowed(sim, before, 15_000);
      const part = await until("the partial fill after the restart", async () => {
        const o = await order(toFill.order_id);
        return o.filled_shares === 5 ? o : null;
      }, 10_000);
      expect(part).toMatchObject({ status: "open", filled_usdc: 2.45 });
      await until("cancelled after the restart", async () => (await order(toCancel.order_id)).status === "cancelled", 10_000);
      // The rest fills on the live channel.
      await sells(bob, 0.49, 7);
      await until("filled", async () => (await order(toFill.order_id)).status === "filled", 2000, 10);
      expect((await order(toFill.order_id)).fills).toHaveLength(2);
    }, 60_000);

    test("a restart after an order was partly filled and then cancelled at the venue: cancelled, with what filled", async () => {
      const placed = await restingBuy(0.49, 7.35); // 15 shares
      expect(await svc.stop()).toBe(0);
      await sells(bob, 0.49, 6);
      await alice.client.cancelOrder({ orderID: placed.venue_order_id });
      const before = await simStats(sim);
      svc = await startClobService(sim, home);
      await untilFollowed(sim, before, 15_000);
      const o = await until("cancelled with its fill", async () => {
        const x = await order(placed.order_id);
        return x.status === "cancelled" && x.filled_shares === 6 ? x : null;
      }, 10_000);
      expect(o).toMatchObject({ filled_usdc: 2.94 });
      expect(o.fills).toHaveLength(1);
      expect(o.fills[0].trade_id).toBeTruthy();
    }, 60_000);

    test("cancels and kills keep what filled: a service cancel and a kill of partly filled orders", async () => {
      const before = await simStats(sim);
      const owner = await traderOf(sim, generatePrivateKey());
      const other = await delegatedAgent(svc.url, key, owner);
      await untilFollowed(sim, before);
      const a = await restingBuy(0.49, 9.8, {}, other); // 20 shares
      await sells(bob, 0.49, 6);
      await until("partly filled", async () => (await order(a.order_id)).filled_shares === 6, 2000, 10);
      const cancelled = await call(svc.url, key, "DELETE", `/v1/orders/${a.order_id}`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ status: "cancelled", filled_usdc: 2.94 });
      const b = await restingBuy(0.49, 9.8, {}, other);
      await sells(bob, 0.49, 8);
      await until("partly filled", async () => (await order(b.order_id)).filled_shares === 8, 2000, 10);
      const killed = await call(svc.url, key, "POST", `/v1/agents/${other}/kill`, { reason: "test" });
      expect(killed.status).toBe(200);
      expect(killed.body.cancelled).toEqual([b.order_id]);
      expect(await order(b.order_id)).toMatchObject({ status: "cancelled", filled_usdc: 3.92, filled_shares: 8 });
      const positions = await call(svc.url, key, "GET", `/v1/agents/${other}/positions`);
      expect(positions.body.positions[0]).toMatchObject({ shares: "14", cost_usdc: "6.86" });
      const agentView = (await call(svc.url, key, "GET", `/v1/agents/${other}`)).body;
      expect(agentView.daily_volume.used_usdc).toBeCloseTo(6.86, 6);
      expect(agentView.open_orders).toBe(0);
    }, 30_000);

    test("market channel: steady-state payload intents read no GET /book at 50 ms latency; a dropped channel makes books stale, then they recover", async () => {
      const a = await call(svc.url, key, "POST", "/v1/agents", { wallet_address: privateKeyToAccount(generatePrivateKey()).address, limits: OPEN_LIMITS });
      expect(a.status).toBe(201);
      const intent = async () => {
        const started = performance.now();
        const r = await call(svc.url, key, "POST", "/v1/orders/intent", { agent_id: a.body.id, market_id: TOKEN, side: "buy", size_usdc: 3, price: 0.42 });
        expect({ status: r.status, body: r.status === 201 ? null : r.body }).toMatchObject({ status: 201 });
        return performance.now() - started;
      };
      await simPost(sim, "/_sim/faults", { latency_ms: 50 });
      try {
        await intent(); // the token's first use subscribes it
        await Bun.sleep(500);
        await intent();
        const before = await simStats(sim);
        const took: number[] = [];
        for (let i = 0; i < 20; i++) took.push(await intent());
        const after = await simStats(sim);
        expect((after["GET /book"] ?? 0) - (before["GET /book"] ?? 0)).toBe(0);
        took.sort((x, y) => x - y);
        expect(took[10]).toBeLessThan(50); // no venue round trip in an intent
        // Delegated intents too: the placement is their one venue call.
        const d0 = await simStats(sim);
        for (let i = 0; i < 5; i++) await restingBuy(0.42, 3);
        const d1 = await simStats(sim);
        const delta = (route: string) => (d1[route] ?? 0) - (d0[route] ?? 0);
        expect(delta("GET /book")).toBe(0);
        expect(delta("POST /order")).toBe(5);

        // The market channel drops and cannot reconnect: the books are stale, intents read GET /book.
        await simPost(sim, "/_sim/faults", { ws_refuse_ratio: 1 });
        const dropped = (await (await simPost(sim, "/_sim/ws/drop", { channel: "market" })).json()) as { dropped: number };
        expect(dropped.dropped).toBeGreaterThanOrEqual(1);
        const b0 = (await simStats(sim))["GET /book"] ?? 0;
        await until("a GET /book while stale", async () => {
          await intent();
          return ((await simStats(sim))["GET /book"] ?? 0) > b0;
        }, 5000);
        // It reconnects: the resubscription's snapshot, no more GET /book.
        const ws0 = (await simStats(sim))["GET /ws/market"] ?? 0;
        await simPost(sim, "/_sim/faults", { ws_refuse_ratio: 0 });
        await until("the market channel back", async () => ((await simStats(sim))["GET /ws/market"] ?? 0) > ws0, 10_000);
        await Bun.sleep(300);
        const b1 = (await simStats(sim))["GET /book"] ?? 0;
        for (let i = 0; i < 10; i++) await intent();
        expect((await simStats(sim))["GET /book"] ?? 0).toBe(b1);
      } finally {
        await simPost(sim, "/_sim/faults", { latency_ms: 0, ws_refuse_ratio: 0 });
      }
    }, 60_000);
    test("GTD: the delegated order expiring at the venue and the payload order unfilled at its expiry are both expired", async () => {
      const waitMs = gtdExpiry * 1000 - Date.now() + 8000;
      const delegated = await until("the delegated GTD order expired", async () => {
        const o = await order(gtdDelegated.order_id);
        return o.status === "expired" ? o : null;
      }, Math.max(waitMs, 8000), 200);
      expect(Date.now()).toBeGreaterThanOrEqual(gtdExpiry * 1000);
      expect(delegated.filled_usdc).toBe(0);
      expect((await alice.client.getOrder(gtdDelegated.venue_order_id)).status).toBe("ORDER_STATUS_CANCELED");
      const payload = await until("the payload GTD order expired", async () => {
        const o = await order(gtdPayload.order_id);
        return o.status === "expired" ? o : null;
      }, 5000);
      expect(payload.filled_usdc).toBe(0);
      const exposure = await call(svc.url, key, "GET", `/v1/agents/${gtdPayload.agent_id}/exposure`);
      expect(exposure.body.data.reduce((n: number, d: any) => n + d.open_orders_usdc, 0)).toBe(0);
    }, 120_000);
  });
}
