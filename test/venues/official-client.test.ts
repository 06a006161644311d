/**
 * Polymarket's official client (@polymarket/clob-client-v2, pinned dev dependency) trading against the
 * venue simulator over real HTTP: L1 key creation and derivation, market metadata, order creation and
 * posting (single and batch) with real EIP-712 signatures of all four signature types, open orders,
 * cancels (one, a market's, all), trades, heartbeats, and refusals of wrongly signed orders.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ApiKeyCreds, ClobClient, OrderBuilder, OrderType, Side, SignatureTypeV2 } from "@polymarket/clob-client-v2";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { ClobVenue } from "../../src/venues/clob/clob-venue.ts";
import { orderHash } from "../../src/venues/paper/paper-venue.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import markets from "../../fixtures/markets.json" with { type: "json" };
import { officialSigner } from "../support/official-client.ts";

const KEYS = {
  alice: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  bob: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  carol: "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  dave: "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
} as const;
const PROXY = "0x1111111111111111111111111111111111111111";
const SAFE = "0x2222222222222222222222222222222222222222";
const DEPOSIT = "0x3333333333333333333333333333333333333333";
const UNREGISTERED = "0x4444444444444444444444444444444444444444";

// The first plain 0.01-tick market (Yes: bids 0.48, asks 0.50) and the neg-risk 0.001-tick one.
const PLAIN = (markets as any[]).find((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
const YES: string = PLAIN.tokens[0].token_id;
const NO: string = PLAIN.tokens[1].token_id;
const NEG = (markets as any[]).find((m) => m.accepting_orders && m.neg_risk);
const NEG_YES: string = NEG.tokens[0].token_id;

const signer = (key: Hex) => officialSigner(privateKeyToAccount(key));

let sim: VenueSim;

/** A client of `key` with API credentials created over L1. */
async function clientOf(key: Hex, opts: { signatureType?: SignatureTypeV2; funderAddress?: string; url?: string } = {}) {
  const host = opts.url ?? sim.url;
  const l1 = new ClobClient({ host, chain: 137, signer: signer(key) });
  const creds = await l1.createOrDeriveApiKey();
  const client = new ClobClient({ host, chain: 137, signer: signer(key), creds, signatureType: opts.signatureType, funderAddress: opts.funderAddress, throwOnError: false });
  return { client, creds };
}

async function sim_(path: string, body: unknown) {
  const res = await fetch(`${sim.url}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  expect(res.status).toBeLessThan(300);
}

beforeAll(() => {
  sim = startVenueSim({ port: 0, heartbeatTimeoutMs: 400 });
});

afterAll(async () => {
  await sim?.stop();
});

describe("the official ClobClient against the venue simulator", () => {
  test("L1: createApiKey, then createOrDeriveApiKey and deriveApiKey answer the same key; a foreign signature is refused", async () => {
    const l1 = new ClobClient({ host: sim.url, chain: 137, signer: signer(KEYS.carol) });
    const created = await l1.createApiKey();
    expect(created.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.secret.length).toBeGreaterThan(40);
    expect(created.passphrase).toMatch(/^[0-9a-f]{64}$/);
    expect(await l1.deriveApiKey()).toEqual(created);
    expect(await l1.createOrDeriveApiKey()).toEqual(created);
    // Another nonce is another key.
    expect((await l1.createApiKey(7)).key).not.toBe(created.key);
    // The keys work for L2 reads.
    const l2 = new ClobClient({ host: sim.url, chain: 137, signer: signer(KEYS.carol), creds: created });
    expect(await l2.getApiKeys()).toEqual({ apiKeys: [created.key] } as any);
    // A ClobAuth signed for another address is refused.
    const forged = await fetch(`${sim.url}/auth/derive-api-key`, {
      headers: {
        POLY_ADDRESS: privateKeyToAccount(KEYS.bob).address,
        POLY_SIGNATURE: `0x${"11".repeat(65)}`,
        POLY_TIMESTAMP: String(Math.floor(Date.now() / 1000)),
        POLY_NONCE: "0",
      },
    });
    expect(forged.status).toBe(401);
    // Wrong L2 credentials are refused.
    const wrong = new ClobClient({ host: sim.url, chain: 137, signer: signer(KEYS.carol), creds: { ...created, secret: Buffer.alloc(32, 9).toString("base64") } });
    expect(await wrong.getApiKeys()).toMatchObject({ status: 401 });
  });

  test("tick size, neg-risk and version", async () => {
    const { client } = await clientOf(KEYS.alice);
    expect(await client.getTickSize(YES)).toBe("0.01");
    expect(await client.getTickSize(NEG_YES)).toBe("0.001");
    expect(await client.getNegRisk(YES)).toBe(false);
    expect(await client.getNegRisk(NEG_YES)).toBe(true);
    expect(await client.getVersion()).toBe(2);
    expect(typeof (await client.getServerTime())).toBe("number");
    const info = await client.getClobMarketInfo(PLAIN.condition_id);
    expect(info).toMatchObject({ c: PLAIN.condition_id, mts: 0.01, nr: false });
  });

  test("create and post an order, post a batch, list open orders, cancel one, a market's, all", async () => {
    const { client, creds } = await clientOf(KEYS.alice);
    const order = await client.createOrder({ tokenID: YES, price: 0.4, size: 10, side: Side.BUY });
    const posted = await client.postOrder(order, OrderType.GTC);
    expect(posted).toMatchObject({ success: true, errorMsg: "", status: "live", makingAmount: "0", takingAmount: "0" });
    // The venue's order id is the EIP-712 hash of the order under its market's exchange domain.
    const message = {
      salt: order.salt,
      maker: order.maker as Hex,
      signer: order.signer as Hex,
      tokenId: order.tokenId,
      makerAmount: order.makerAmount,
      takerAmount: order.takerAmount,
      side: 0 as const,
      signatureType: Number(order.signatureType),
      timestamp: String(order.timestamp),
      metadata: order.metadata as Hex,
      builder: order.builder as Hex,
    };
    expect(posted.orderID).toBe(orderHash(message, { chainId: 137, negRisk: false }));
    const read = await client.getOrder(posted.orderID);
    expect(read).toMatchObject({ id: posted.orderID, status: "ORDER_STATUS_LIVE", side: "BUY", price: "0.4", original_size: "10", size_matched: "0", owner: creds.key });

    const batch = await client.postOrders([
      { order: await client.createOrder({ tokenID: YES, price: 0.39, size: 10, side: Side.BUY }), orderType: OrderType.GTC },
      { order: await client.createOrder({ tokenID: NO, price: 0.45, size: 20, side: Side.BUY }), orderType: OrderType.GTC },
      { order: await client.createOrder({ tokenID: NEG_YES, price: 0.2, size: 10, side: Side.BUY }, { tickSize: "0.001", negRisk: true }), orderType: OrderType.GTC },
    ]);
    expect(batch).toHaveLength(3);
    for (const r of batch as any[]) expect(r).toMatchObject({ success: true, status: "live" });
    const [y2, n1, neg] = (batch as any[]).map((r) => r.orderID as string);

    const open = await client.getOpenOrders();
    expect(open.map((o) => o.id).sort()).toEqual([posted.orderID, y2, n1, neg].sort());
    expect((await client.getOpenOrders({ asset_id: NO })).map((o) => o.id)).toEqual([n1]);

    expect(await client.cancelOrder({ orderID: posted.orderID })).toEqual({ canceled: [posted.orderID], not_canceled: {} });
    expect(await client.cancelOrder({ orderID: posted.orderID })).toEqual({
      canceled: [],
      not_canceled: { [posted.orderID]: "order can't be found - already canceled or matched" },
    });
    expect(await client.cancelMarketOrders({ asset_id: YES })).toEqual({ canceled: [y2], not_canceled: {} });
    expect(await client.cancelMarketOrders({ market: NEG.condition_id })).toEqual({ canceled: [neg], not_canceled: {} });
    expect(await client.cancelAll()).toEqual({ canceled: [n1], not_canceled: {} });
    expect(await client.getOpenOrders()).toEqual([]);
    expect((await client.getOrder(n1)).status).toBe("ORDER_STATUS_CANCELED");
  });

  test("a marketable order fills against the book; its trades carry transaction hashes and are listed", async () => {
    const { client, creds } = await clientOf(KEYS.bob);
    const r: any = await client.postOrder(await client.createOrder({ tokenID: YES, price: 0.51, size: 20, side: Side.BUY }), OrderType.FOK);
    expect(r).toMatchObject({ success: true, status: "matched", makingAmount: "10", takingAmount: "20" }); // 20 at the 0.50 ask
    expect(r.transactionsHashes).toHaveLength(1);
    expect(r.tradeIDs).toHaveLength(1);
    // As Polymarket, a trade names its transaction from MINED on ("" while MATCHED): read once it is mined.
    let trades = await client.getTrades();
    for (let i = 0; i < 100 && trades[0]?.status === "MATCHED"; i++) {
      await Bun.sleep(10);
      trades = await client.getTrades();
    }
    expect(trades).toHaveLength(1);
    expect(trades[0].status).not.toBe("MATCHED");
    expect(trades[0]).toMatchObject({
      id: r.tradeIDs[0],
      taker_order_id: r.orderID,
      market: PLAIN.condition_id,
      asset_id: YES,
      side: "BUY",
      size: "20",
      price: "0.5",
      owner: creds.key,
      trader_side: "TAKER",
      transaction_hash: r.transactionsHashes[0],
    });
    expect(await client.getTrades({ id: r.tradeIDs[0] })).toHaveLength(1);
    expect(await client.getTrades({ asset_id: NO })).toHaveLength(0);
    // The resting side of the match sees it as maker: Bob rests a sell that Carol takes.
    const { client: carol } = await clientOf(KEYS.carol);
    const ask: any = await client.createAndPostOrder({ tokenID: NO, price: 0.51, size: 10, side: Side.SELL });
    expect(ask).toMatchObject({ success: true, status: "live" });
    const took: any = await carol.postOrder(await carol.createOrder({ tokenID: NO, price: 0.51, size: 10, side: Side.BUY }), OrderType.FAK);
    expect(took).toMatchObject({ success: true, status: "matched" });
    const bobs = await client.getTrades({ asset_id: NO });
    expect(bobs).toHaveLength(1);
    expect(bobs[0]).toMatchObject({ trader_side: "MAKER", maker_orders: [{ order_id: ask.orderID, side: "SELL", matched_amount: "10" }] });
    expect((await client.getOrder(ask.orderID)).status).toBe("ORDER_STATUS_MATCHED");
  });

  test("tick size and minimum size are enforced by the venue", async () => {
    const { client } = await clientOf(KEYS.alice);
    // Under the 5-share minimum.
    const small: any = await client.createAndPostOrder({ tokenID: YES, price: 0.4, size: 2, side: Side.BUY });
    expect(small).toMatchObject({ success: false });
    expect(small.errorMsg).toContain("lower than the minimum");
    // Off the market's tick: built by the client's order builder with a finer tick than the market's
    // (the client itself refuses to, so a stale or foreign client is what the venue guards against).
    const builder = new OrderBuilder(signer(KEYS.alice), 137, SignatureTypeV2.EOA);
    const offTick = await builder.buildOrder({ tokenID: YES, price: 0.405, size: 10, side: Side.BUY }, { tickSize: "0.001", negRisk: false }, 2);
    const off: any = await client.postOrder(offTick);
    expect(off.errorMsg).toContain("tick size");
  });

  test("a wrongly signed order is refused and never rests", async () => {
    const { client } = await clientOf(KEYS.alice);
    const order = await client.createOrder({ tokenID: YES, price: 0.3, size: 10, side: Side.BUY });
    const tampered = { ...order, makerAmount: String(Number(order.makerAmount) + 10000) };
    const r: any = await client.postOrder(tampered);
    expect(r.status).toBe(400);
    expect(r.error).toContain("invalid signature");
    // Signed under the neg-risk exchange's domain for a plain market.
    const wrongDomain: any = await client.postOrder(await client.createOrder({ tokenID: YES, price: 0.3, size: 10, side: Side.BUY }, { tickSize: "0.01", negRisk: true }));
    expect(wrongDomain.error).toContain("invalid signature");
    expect(await client.getOpenOrders()).toEqual([]);
  });

  test("signature types 1 and 2: a proxy or Safe registered for the signer is accepted as maker; an unregistered one is refused", async () => {
    await sim_("/_sim/wallets", { wallet: PROXY, owner: privateKeyToAccount(KEYS.dave).address });
    await sim_("/_sim/wallets", { wallet: SAFE, owner: privateKeyToAccount(KEYS.dave).address });
    for (const [type, wallet] of [
      [SignatureTypeV2.POLY_PROXY, PROXY],
      [SignatureTypeV2.POLY_GNOSIS_SAFE, SAFE],
    ] as const) {
      const { client } = await clientOf(KEYS.dave, { signatureType: type, funderAddress: wallet });
      const r: any = await client.createAndPostOrder({ tokenID: YES, price: 0.3, size: 10, side: Side.BUY });
      expect(r).toMatchObject({ success: true, status: "live" });
      expect(await client.getOrder(r.orderID)).toMatchObject({ maker_address: wallet });
      await client.cancelAll();
    }
    const { client: stranger } = await clientOf(KEYS.dave, { signatureType: SignatureTypeV2.POLY_PROXY, funderAddress: UNREGISTERED });
    const refused: any = await stranger.createAndPostOrder({ tokenID: YES, price: 0.3, size: 10, side: Side.BUY });
    expect(refused.error).toContain("invalid signature: the maker is not a wallet of the signer");
  });

  test("signature type 3: a deposit wallet's ERC-7739 signature by its registered owner is accepted", async () => {
    const owner = privateKeyToAccount(KEYS.carol).address;
    const { client } = await clientOf(KEYS.carol, { signatureType: SignatureTypeV2.POLY_1271, funderAddress: DEPOSIT });
    // Not registered yet: the wallet has no owner the venue knows.
    const early: any = await client.createAndPostOrder({ tokenID: YES, price: 0.3, size: 10, side: Side.BUY });
    expect(early.success).not.toBe(true);
    await sim_("/_sim/wallets", { wallet: DEPOSIT, owner });
    const order = await client.createOrder({ tokenID: YES, price: 0.3, size: 10, side: Side.BUY });
    expect(order.signature.length).toBe(2 + (65 + 32 + 32) * 2 + 186 * 2 + 4);
    const r: any = await client.postOrder(order);
    expect(r).toMatchObject({ success: true, status: "live" });
    expect(await client.getOrder(r.orderID)).toMatchObject({ maker_address: DEPOSIT });
    // The same wrapped signature on another order is refused.
    const other = await client.createOrder({ tokenID: YES, price: 0.31, size: 10, side: Side.BUY });
    const swapped: any = await client.postOrder({ ...other, signature: order.signature });
    expect(swapped.error).toContain("invalid signature");
    await client.cancelAll();
  });

  test("heartbeats: each answers the next id; a wrong id is refused; when they stop, the key's orders are cancelled", async () => {
    const { client } = await clientOf(KEYS.bob);
    const r: any = await client.createAndPostOrder({ tokenID: YES, price: 0.3, size: 10, side: Side.BUY });
    expect(r.status).toBe("live");
    const first: any = await client.postHeartbeat();
    expect(first.heartbeat_id).toMatch(/^[0-9a-f-]{36}$/);
    let id = first.heartbeat_id;
    for (let i = 0; i < 3; i++) {
      await Bun.sleep(150);
      const next: any = await client.postHeartbeat(id);
      expect(next.heartbeat_id).not.toBe(id);
      id = next.heartbeat_id;
    }
    const wrong: any = await client.postHeartbeat("not-the-id");
    expect(wrong).toMatchObject({ status: 400, heartbeat_id: id });
    expect((await client.getOrder(r.orderID)).status).toBe("ORDER_STATUS_LIVE"); // 4 beats over 450 ms, 400 ms timeout
    await Bun.sleep(600);
    expect((await client.getOrder(r.orderID)).status).toBe("ORDER_STATUS_CANCELED");
    expect(await client.getOpenOrders()).toEqual([]);
    // A new session starts with any id.
    expect(((await client.postHeartbeat()) as any).heartbeat_id).toBeString();
  });
});

describe("a venue on ExchangeV3 (order version 3, v2 markets)", () => {
  let v3: VenueSim;
  beforeAll(() => {
    const v2Markets = (markets as any[]).map((m) => ({ ...m, version: "v2" }));
    v3 = startVenueSim({ port: 0, markets: v2Markets, orderVersion: 3 });
  });
  afterAll(async () => {
    await v3?.stop();
  });

  test("the client reads version 3 and signs under ExchangeV3; the order id is its hash there; a version 2 order is a mismatch", async () => {
    const { client } = await clientOf(KEYS.alice, { url: v3.url });
    expect(await client.getVersion()).toBe(3);
    const order = await client.createOrder({ tokenID: NEG_YES, price: 0.2, size: 10, side: Side.BUY });
    const r: any = await client.postOrder(order);
    expect(r).toMatchObject({ success: true, status: "live" });
    const message = { ...order, side: 0 as const } as any;
    expect(r.orderID).toBe(orderHash(message, { chainId: 137, negRisk: true, version: "v2" }));
    expect(r.orderID).not.toBe(orderHash(message, { chainId: 137, negRisk: true }));
    const v2Order = await client.createOrder({ tokenID: YES, price: 0.3, size: 10, side: Side.BUY }, { tickSize: "0.01", version: 2 });
    const mismatch: any = await client.postOrder(v2Order);
    expect(mismatch.error).toBe("order_version_mismatch");
  });

  test("the service's CLOB adapter reads these markets as v2", async () => {
    const adapter = new ClobVenue({ baseUrl: v3.url });
    const listed = await adapter.listMarkets();
    expect(listed).toHaveLength((markets as any[]).length);
    expect(new Set(listed.map((m) => m.version))).toEqual(new Set(["v2"]));
    expect((await adapter.getMarketByToken(YES))?.version).toBe("v2");
  });
});

export type { ApiKeyCreds };
