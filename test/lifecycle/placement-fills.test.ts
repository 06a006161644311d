/**
 * A placement's answer that says the order matched is a fill (source `rest`, key
 * `order:<venue order id>:placement`, covering the trades and transactions the answer names), so a
 * taker's fill counts in its position and exposure on a venue with no source of fills (VENUE=clob
 * without the chain or the user channel). When a source later reports the same trade (fed here
 * through the venue report sink, as the user channel and the chain hand their reports), it replaces
 * that fill and nothing counts twice; a trade the answer did not name counts besides it. Against the
 * venue simulator over HTTP, the order signed and its POST /order authorized as Polymarket's official
 * client does. PGlite and, with TEST_DATABASE_URL, PostgreSQL.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ApiKeyCreds, ClobClient, createL2Headers, type OrderType, orderToJsonV2 } from "@polymarket/clob-client-v2";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { FillReport } from "../../src/domain/venue-report.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";
import { type LiveService, serveTestApp } from "../sdk/serve.ts";
import { agentOfWallet, clobVenueAt, TOKEN, walletOf } from "../venues/clob-service.ts";

const LIMITS = { daily_volume_usdc: 100_000, capital_usdc: 100_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600, duplicate_window_s: 0 };

let sim: VenueSim;
beforeAll(() => {
  sim = startVenueSim({ port: 0 });
});
afterAll(async () => {
  await sim?.stop();
});

describeEachDatabase("placement answers as fills, merged with the sources' reports (VENUE=clob, simulator)", (_kind, database) => {
  let live: LiveService;
  const call = (method: string, path: string, o: { key?: string; body?: unknown } = {}) => live.t.call(method, path, o);
  const sink = () => live.t.app.services.venueReports;

  beforeAll(async () => {
    const { venue, env } = await clobVenueAt(sim.url);
    live = await serveTestApp(await database(), { venue, env });
  });
  afterAll(async () => {
    await live?.t.app.stop();
    await live?.stop();
  });

  /** A payload agent of a fresh wallet, and a function that places its signed orders with the owner's own L2 headers. */
  async function newAgent() {
    const pk: Hex = generatePrivateKey();
    const wallet = walletOf(pk);
    const creds: ApiKeyCreds = await new ClobClient({ host: sim.url, chain: 137, signer: wallet }).createOrDeriveApiKey();
    const { key, agentId } = await agentOfWallet(live.t, wallet.account.address, LIMITS);
    const place = async (body: Record<string, unknown>) => {
      const intent = await call("POST", "/v1/orders/intent", { key, body: { agent_id: agentId, market_id: TOKEN, ...body } });
      expect(intent.status).toBe(201);
      const m = intent.body.unsigned_order.message;
      const signature = await privateKeyToAccount(pk).signTypedData(intent.body.unsigned_order);
      const payload = orderToJsonV2({ ...m, side: m.side === 0 ? "BUY" : "SELL", expiration: intent.body.expiration, signature } as any, creds.key, intent.body.order_type as OrderType);
      const h = await createL2Headers(wallet, creds, { method: "POST", requestPath: "/order", body: JSON.stringify(payload) });
      const venue_auth = { address: h.POLY_ADDRESS, api_key: h.POLY_API_KEY, passphrase: h.POLY_PASSPHRASE, timestamp: h.POLY_TIMESTAMP, signature: h.POLY_SIGNATURE };
      const submitted = await call("POST", "/v1/orders/submit-signed", { key, body: { order_id: intent.body.order_id, signature, venue_auth } });
      expect(submitted.status).toBe(200);
      return { id: intent.body.order_id as string, hash: intent.body.order_hash as `0x${string}`, status: submitted.body.status as string };
    };
    return { key, agentId, place };
  }

  const order = async (key: string, id: string) => (await call("GET", `/v1/orders/${id}`, { key })).body;
  const position = async (key: string, agentId: string) => {
    const res = await call("GET", `/v1/agents/${agentId}/positions`, { key });
    expect(res.status).toBe(200);
    return res.body.positions.find((p: any) => p.token_id === TOKEN) ?? null;
  };
  const exposure = async (key: string, agentId: string) => {
    const res = await call("GET", `/v1/agents/${agentId}/exposure`, { key });
    expect(res.status).toBe(200);
    return res.body.data.find((r: any) => r.market_ids.includes(TOKEN)) ?? null;
  };
  const coversOf = async (orderId: string): Promise<string[]> => {
    const [row] = await rowsOf(live.t.app.services.database, `select covers from fills where order_id = '${orderId}' and covers is not null`);
    return (typeof row.covers === "string" ? JSON.parse(row.covers) : row.covers) as string[];
  };
  const fill = (hash: `0x${string}`, f: Partial<FillReport> & { sharesUnits: bigint; usdcUnits: bigint }): FillReport => ({
    kind: "fill",
    ref: { orderHash: hash },
    source: "user_channel",
    fillKey: f.tradeId ? `trade:${f.tradeId}` : `tx:${f.txHash}:${f.logIndex}`,
    feeUnits: 0n,
    price: "0.5",
    status: "matched",
    at: new Date(),
    ...f,
  });

  test("a taker's match at placement is its fill; the user channel's and the chain's reports of that trade replace it, counted once", async () => {
    const a = await newAgent();
    // 5 USDC at 0.50 crosses the book's best ask (0.50): 10 shares matched at placement.
    const o = await a.place({ side: "buy", size_usdc: 5, price: 0.5 });
    expect(o.status).toBe("filled");
    let got = await order(a.key, o.id);
    expect(got.filled_shares).toBe(10);
    expect(got.filled_usdc).toBe(5);
    expect(got.fills).toHaveLength(1);
    expect(got.fills[0]).toMatchObject({ source: "rest", shares: "10", usdc: "5", price: "0.5", status: "matched", trade_id: null });
    expect(await position(a.key, a.agentId)).toMatchObject({ shares: "10", avg_price: "0.5", cost_usdc: "5" });
    expect(await exposure(a.key, a.agentId)).toMatchObject({ exposure_usdc: 5, positions_cost_usdc: 5, open_orders_usdc: 0 });

    // The answer named its trade and transaction (the simulator, as Polymarket, gives tradeIDs).
    const covers = await coversOf(o.id);
    const tradeId = covers.find((c) => c.startsWith("trade:"))!.slice("trade:".length);
    const txHash = covers.find((c) => c.startsWith("tx:"))!.slice("tx:".length) as `0x${string}`;
    expect(covers).toEqual([`trade:${tradeId}`, `tx:${txHash}`]);

    // The user channel reports that trade (MATCHED, no transaction yet): it replaces the answer's fill.
    expect(await sink().deliver(fill(o.hash, { tradeId, sharesUnits: 10_000_000n, usdcUnits: 5_000_000n }))).toBe("applied");
    got = await order(a.key, o.id);
    expect(got.filled_shares).toBe(10);
    expect(got.fills).toHaveLength(1);
    // It is one of the answer's matches, and the answer named one transaction: that is its transaction.
    expect(got.fills[0]).toMatchObject({ source: "user_channel", shares: "10", usdc: "5", trade_id: tradeId, tx_hash: txHash, log_index: null });
    // The chain reports its log (transaction and log index, no trade id): the same fill.
    const chain = fill(o.hash, { source: "chain", txHash, logIndex: 4, status: "confirmed", sharesUnits: 10_000_000n, usdcUnits: 5_000_000n });
    expect(await sink().deliver(chain)).toBe("applied");
    // And the user channel's MINED of it, with its transaction: nothing new.
    expect(await sink().deliver(fill(o.hash, { tradeId, txHash, status: "mined", sharesUnits: 10_000_000n, usdcUnits: 5_000_000n }))).toBe("repeat");
    expect(await sink().deliver(chain)).toBe("repeat");
    got = await order(a.key, o.id);
    expect(got.fills).toHaveLength(1);
    expect(got.fills[0]).toMatchObject({ source: "user_channel", sources: ["user_channel", "chain"], trade_id: tradeId, tx_hash: txHash, log_index: 4, status: "confirmed", shares: "10" });
    expect(got.filled_shares).toBe(10);
    expect(await position(a.key, a.agentId)).toMatchObject({ shares: "10", avg_price: "0.5", cost_usdc: "5" });
    expect(await exposure(a.key, a.agentId)).toMatchObject({ exposure_usdc: 5, positions_cost_usdc: 5, open_orders_usdc: 0 });
    const agent = (await call("GET", `/v1/agents/${a.agentId}`, { key: a.key })).body;
    expect(agent.daily_volume.used_usdc).toBe(5);
  });

  test("the chain first, against an answer that named its trade only; then a later trade the answer did not name", async () => {
    const a = await newAgent();
    // A resting bid (0.49, 20 shares = 9.8 USDC) on which the placement's answer is made to say 6
    // shares matched as trade P-1 (Polymarket's answers name trade ids, not transactions).
    const o = await a.place({ side: "buy", size_usdc: 9.8, price: 0.49 });
    expect(o.status).toBe("open");
    const placed: FillReport = { ...fill(o.hash, { sharesUnits: 6_000_000n, usdcUnits: 2_940_000n }), source: "rest", fillKey: `order:${o.hash}:placement`, price: "0.49", covers: ["trade:P-1"] };
    expect(await sink().deliver(placed)).toBe("applied");
    expect(await position(a.key, a.agentId)).toMatchObject({ shares: "6", cost_usdc: "2.94" });
    expect(await exposure(a.key, a.agentId)).toMatchObject({ exposure_usdc: 9.8, positions_cost_usdc: 2.94, open_orders_usdc: 6.86 });

    // The chain's log of it (no trade id to compare): taken as that trade, and named after it.
    const tx = `0x${"7a".repeat(32)}` as const;
    expect(await sink().deliver(fill(o.hash, { source: "chain", txHash: tx, logIndex: 1, status: "confirmed", price: "0.49", sharesUnits: 6_000_000n, usdcUnits: 2_940_000n }))).toBe("applied");
    let got = await order(a.key, o.id);
    expect(got.fills).toHaveLength(1);
    expect(got.fills[0]).toMatchObject({ source: "chain", trade_id: "P-1", tx_hash: tx, shares: "6" });
    // The user channel's report of P-1 is that row, not a second fill.
    expect(await sink().deliver(fill(o.hash, { tradeId: "P-1", price: "0.49", sharesUnits: 6_000_000n, usdcUnits: 2_940_000n }))).toBe("repeat");
    got = await order(a.key, o.id);
    expect(got.filled_shares).toBe(6);
    expect(got.fills).toHaveLength(1);
    expect(got.fills[0].sources).toEqual(["chain", "user_channel"]);

    // A later trade of the resting order (another id): it counts besides.
    expect(await sink().deliver(fill(o.hash, { tradeId: "Q-2", price: "0.49", sharesUnits: 4_000_000n, usdcUnits: 1_960_000n }))).toBe("applied");
    got = await order(a.key, o.id);
    expect(got.status).toBe("open");
    expect(got.filled_shares).toBe(10);
    expect(got.filled_usdc).toBe(4.9);
    expect(await position(a.key, a.agentId)).toMatchObject({ shares: "10", avg_price: "0.49", cost_usdc: "4.9" });
    expect(await exposure(a.key, a.agentId)).toMatchObject({ exposure_usdc: 9.8, positions_cost_usdc: 4.9, open_orders_usdc: 4.9 });
  });

  test("two rows a later report shows to be one fill (the user channel before its transaction, the chain's log) are folded", async () => {
    const a = await newAgent();
    const o = await a.place({ side: "buy", size_usdc: 9.8, price: 0.49 });
    expect(o.status).toBe("open");
    const tx = `0x${"5c".repeat(32)}` as const;
    // The user channel's MATCHED (no transaction yet) and the chain's log of the same shares: taken as
    // one trade before anything names the transaction (the chain's row counts, the report is its twin).
    expect(await sink().deliver(fill(o.hash, { tradeId: "U-1", price: "0.49", sharesUnits: 5_000_000n, usdcUnits: 2_450_000n }))).toBe("applied");
    expect(await sink().deliver(fill(o.hash, { source: "chain", txHash: tx, logIndex: 2, price: "0.49", status: "confirmed", sharesUnits: 5_000_000n, usdcUnits: 2_450_000n }))).toBe("applied");
    const before = await order(a.key, o.id);
    expect(before.fills).toHaveLength(1);
    expect(before.fills[0]).toMatchObject({ source: "chain", sources: ["chain", "user_channel"], trade_id: "U-1", tx_hash: tx, log_index: 2, shares: "5" });
    expect(before.filled_shares).toBe(5);
    expect(before.filled_usdc).toBe(2.45);
    expect(await position(a.key, a.agentId)).toMatchObject({ shares: "5", cost_usdc: "2.45" });
    // The user channel's MINED names the transaction: one fill.
    expect(await sink().deliver(fill(o.hash, { tradeId: "U-1", txHash: tx, status: "mined", price: "0.49", sharesUnits: 5_000_000n, usdcUnits: 2_450_000n }))).toBe("applied");
    const got = await order(a.key, o.id);
    expect(got.fills).toHaveLength(1);
    expect(got.fills[0]).toMatchObject({ trade_id: "U-1", tx_hash: tx, log_index: 2, status: "confirmed", shares: "5" });
    expect(got.filled_shares).toBe(5);
    expect(await position(a.key, a.agentId)).toMatchObject({ shares: "5", cost_usdc: "2.45" });
  });
});
