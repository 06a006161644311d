/**
 * The unsigned order the service returns (POST /v1/orders/intent through app.handle) equals what
 * the official client's order builder (@polymarket/clob-client-v2, pinned) makes for the same
 * inputs, for a few hundred random intents: v1 and v2 markets, neg risk or not, tick sizes 0.01
 * and 0.001, sizes from the market minimum to a million USDC, buys and sells, signature types 0-3.
 * Compared: domain, types, maker, signer, token, amounts, side, signature type, builder, metadata,
 * the typed-data hash, and the official client's own signature checked under our domain.
 *
 * The official builder takes a share count, the service a USDC size: the test converts with the
 * CONTRACT's rule (shares = floor₂(size / price)) in exact integers. Where the official client's
 * float arithmetic (shares × price in IEEE doubles, then rounding) gives another amount than the
 * exact product, the test says so and asserts the service's exact value instead. Up to a million
 * USDC none was found (3 million random cases searched while writing this test); the last test
 * shows one above that range, where the official client is a unit (0.0001 USDC) short.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { recoverTypedDataAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { verifyDepositWalletSignature } from "../../src/eip712/deposit-wallet-signature.ts";
import type { Market, OrderBook } from "../../src/venues/venue.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { hookedVenue } from "../support/hooked-venue.ts";
import { getContractConfig, OrderBuilder, officialSigner, officialTypedData, Side } from "../support/official-client.ts";

const CHAIN_ID = 137;
const INTENTS = 320;
const ZERO32 = `0x${"0".repeat(64)}`;

/** mulberry32, seeded: a failure names its seed and case and can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface SynthMarket {
  market: Market & { version: "v1" | "v2" };
  token: string;
  tick: "0.01" | "0.001";
}

function synthMarkets(rand: () => number): SynthMarket[] {
  const out: SynthMarket[] = [];
  for (const version of ["v1", "v2"] as const) {
    for (const negRisk of [false, true]) {
      for (const tick of ["0.01", "0.001"] as const) {
        const token = BigInt(`0x${Array.from({ length: 64 }, () => Math.floor(rand() * 16).toString(16)).join("")}`).toString();
        out.push({
          token,
          tick,
          market: {
            condition_id: `0x${out.length.toString(16).padStart(64, "0")}`,
            question: `synthetic ${version} ${negRisk ? "neg-risk" : "standard"} tick ${tick}`,
            category: "test",
            end_date: "2099-01-01T00:00:00Z",
            active: true,
            closed: false,
            accepting_orders: true,
            neg_risk: negRisk,
            tick_size: tick,
            min_order_size: "5",
            tokens: [{ token_id: token, outcome: "Yes" }],
            version,
          },
        });
      }
    }
  }
  return out;
}

describe("unsigned orders equal the official client's order builder", () => {
  let t: TestApp;
  const books = new Map<string, OrderBook>();
  const markets = new Map<string, SynthMarket>();

  beforeAll(async () => {
    const h = hookedVenue();
    h.overrides.getMarketByToken = async (token: string) => markets.get(token)?.market ?? null;
    h.overrides.getBook = async (token: string) => {
      const b = books.get(token);
      return b ? { ...b, timestamp_ms: Date.now() } : null;
    };
    // The wallets hold every outcome token on the chain (the chain source's balance read, here a
    // fixed answer): sells of any size may hand shares over, so every intent is approved.
    t = await createTestApp(await sharedPglite(), { venue: h.venue, balances: { heldShares: async () => 10n ** 18n } });
  });
  afterAll(async () => {
    await t?.app.stop();
  });

  test(`${INTENTS} random intents across markets, sizes, sides and signature types`, async () => {
    const seed = 20261124;
    const rand = prng(seed);
    for (const m of synthMarkets(rand)) markets.set(m.token, m);
    const all = [...markets.values()];

    // One organization, one agent per signature type, limits wide enough for a million USDC.
    const { key } = await t.newOrg("official builder");
    const agents = [];
    for (const type of [0, 1, 2, 3] as const) {
      const eoa = privateKeyToAccount(generatePrivateKey());
      const wallet = type === 0 ? eoa.address : privateKeyToAccount(generatePrivateKey()).address;
      const body: Record<string, unknown> = { wallet_address: wallet, signature_type: type };
      if (type === 1 || type === 2) body.signer_address = eoa.address;
      if (type === 3) body.owner_address = eoa.address;
      const { agent } = await t.newAgent({ key, body });
      const patched = await t.call("PATCH", `/v1/agents/${agent.id}/limits`, {
        key,
        body: { max_order_usdc: 2_000_000, daily_volume_usdc: 1e9, capital_usdc: 1e9, max_market_exposure_pct: 1 },
      });
      if (patched.status !== 200) throw new Error(`limits: ${patched.status} ${patched.text}`);
      agents.push({ type, eoa, wallet, agent, builder: new OrderBuilder(officialSigner(eoa) as any, CHAIN_ID, type, type === 0 ? undefined : wallet) });
    }

    let floatDivergences = 0;
    const divergenceExamples: string[] = [];
    const covered = new Set<string>();
    for (let i = 0; i < INTENTS; i++) {
      const m = all[i % all.length];
      const a = agents[Math.floor(rand() * agents.length)];
      const side = rand() < 0.5 ? "buy" : "sell";
      const tickMicro = m.tick === "0.01" ? 10_000n : 1_000n;
      // A price 2 ticks or more from either end; the book is quoted one tick around it (mid = price).
      const ticks = 1_000_000n / tickMicro;
      const priceMicro = tickMicro * (2n + BigInt(Math.floor(rand() * Number(ticks - 4n))));
      const price = Number(priceMicro) / 1e6;
      const fmt = (micro: bigint) => (Number(micro) / 1e6).toString();
      books.set(m.token, {
        token_id: m.token,
        bids: [{ price: fmt(priceMicro - tickMicro), size: "1000000000000" }],
        asks: [{ price: fmt(priceMicro + tickMicro), size: "1000000000000" }],
        last_trade_price: fmt(priceMicro),
        timestamp_ms: Date.now(),
      });
      // Size: from the minimum (5 shares, the market's, rounded up to the cent, and at least the
      // agent's min_order_usdc of 1) to a million USDC, log-uniform; every fourth one with 6 decimals.
      const fiveShares = (5n * priceMicro + 9_999n) / 10_000n;
      const minCents = fiveShares > 100n ? fiveShares : 100n;
      const cents = BigInt(Math.round(Math.exp(Math.log(Number(minCents)) + rand() * (Math.log(1e8) - Math.log(Number(minCents))))));
      const sizeMicro = i % 4 === 3 ? cents * 10_000n + BigInt(Math.floor(rand() * 10_000)) : cents * 10_000n;
      const size = Number(sizeMicro) / 1e6;
      const sharesCenti = (sizeMicro * 100n) / priceMicro; // floor₂(size / price), exact
      if (sharesCenti < 500n) continue; // below the market minimum once floored
      const notionalMicro = (sharesCenti * priceMicro) / 100n; // exact: priceMicro is a multiple of 1000
      const sharesMicro = sharesCenti * 10_000n;

      const res = await t.call("POST", "/v1/orders/intent", { key, body: { agent_id: a.agent.id, market_id: m.token, side, size_usdc: size, price } });
      if (res.status !== 201) throw new Error(`case ${i} (seed ${seed}): intent answered ${res.status} ${res.text}`);
      const ours = res.body.unsigned_order;
      const official = await a.builder.buildOrder(
        { tokenID: m.token, price, size: Number(sharesCenti) / 100, side: side === "buy" ? Side.BUY : Side.SELL, builderCode: ZERO32 },
        { tickSize: m.tick, negRisk: m.market.neg_risk },
        m.market.version === "v2" ? 3 : 2,
      );
      const ctx = `case ${i} (seed ${seed}, ${m.market.question}, ${side} ${size} @ ${price}, type ${a.type})`;
      covered.add(`${m.market.version}/${m.market.neg_risk}/${m.tick}/${side}/${a.type}`);

      // Domain: what the official configuration names for this market.
      const config = getContractConfig(CHAIN_ID);
      const exchange = m.market.version === "v2" ? config.exchangeV3 : m.market.neg_risk ? config.negRiskExchangeV2 : config.exchangeV2;
      const officialDomain = { name: "Polymarket CTF Exchange", version: m.market.version === "v2" ? "3" : "2", chainId: CHAIN_ID, verifyingContract: exchange };
      const { typedData: officialTd } = officialTypedData(officialDomain, official, a.eoa);
      expect(ours.domain, ctx).toEqual(officialTd.domain);
      expect(ours.types, ctx).toEqual(officialTd.types);
      expect(ours.primaryType).toBe("Order");

      // Fields.
      expect(ours.message.maker, ctx).toBe(official.maker); // EIP-55 checksummed, exactly as the official builder writes it
      expect(ours.message.signer, ctx).toBe(official.signer);
      expect(ours.message.tokenId, ctx).toBe(official.tokenId);
      expect(ours.message.side, ctx).toBe(officialTd.message.side);
      expect(ours.message.signatureType, ctx).toBe(official.signatureType);
      expect(ours.message.metadata, ctx).toBe(official.metadata);
      expect(ours.message.builder, ctx).toBe(official.builder);

      // Amounts: exact values first, then the official client's.
      const exact = side === "buy" ? { maker: notionalMicro, taker: sharesMicro } : { maker: sharesMicro, taker: notionalMicro };
      expect(ours.message.makerAmount, ctx).toBe(exact.maker.toString());
      expect(ours.message.takerAmount, ctx).toBe(exact.taker.toString());
      const sameAmounts = official.makerAmount === ours.message.makerAmount && official.takerAmount === ours.message.takerAmount;
      if (!sameAmounts) {
        // The official client multiplied shares × price in floats; the service's product is exact.
        floatDivergences++;
        if (divergenceExamples.length < 5) divergenceExamples.push(`${ctx}: official ${official.makerAmount}/${official.takerAmount}, exact ${ours.message.makerAmount}/${ours.message.takerAmount}`);
        const diff = (x: string, y: string) => Number(BigInt(x) - BigInt(y));
        expect(Math.abs(diff(official.makerAmount, ours.message.makerAmount)) + Math.abs(diff(official.takerAmount, ours.message.takerAmount)), ctx).toBeLessThanOrEqual(10);
      }

      // Typed-data hash: the official client's over its order with our salt and timestamp (and, where
      // its float amounts differ, our exact amounts) equals the order_hash the service returned.
      const aligned = { ...official, salt: ours.message.salt, timestamp: ours.message.timestamp, makerAmount: ours.message.makerAmount, takerAmount: ours.message.takerAmount };
      expect(officialTypedData(officialDomain, aligned, a.eoa).hash, ctx).toBe(res.body.order_hash);

      // The official client's signature of its own order verifies under our domain and types.
      const officialMessage = officialTd.message;
      if (a.type === 3) {
        expect(verifyDepositWalletSignature({ domain: ours.domain, message: officialMessage, signature: official.signature, owner: a.eoa.address }), ctx).toEqual({ ok: true });
      } else {
        const recovered = await recoverTypedDataAddress({ domain: ours.domain, types: { Order: ours.types.Order }, primaryType: "Order", message: officialMessage, signature: official.signature as `0x${string}` });
        expect(recovered, ctx).toBe(a.eoa.address);
      }
    }
    // Every market kind × side was covered, and all four signature types.
    expect(new Set([...covered].map((c) => c.split("/").slice(0, 4).join("/"))).size).toBe(16);
    expect(new Set([...covered].map((c) => c.split("/")[4])).size).toBe(4);
    console.log(`official builder equality: ${INTENTS} intents, ${floatDivergences} where the official client's float amounts differ from the exact ones`);
    for (const e of divergenceExamples) console.log(`  ${e}`);
  }, 120_000);

  test("above a million USDC the official client's float product can be short by a unit: the service is exact", async () => {
    const m = [...markets.values()].find((x) => x.market.version === "v1" && !x.market.neg_risk && x.tick === "0.01")!;
    books.set(m.token, {
      token_id: m.token,
      bids: [{ price: "0.9", size: "1000000000000" }],
      asks: [{ price: "0.92", size: "1000000000000" }],
      last_trade_price: "0.91",
      timestamp_ms: Date.now(),
    });
    const eoa = privateKeyToAccount(generatePrivateKey());
    const { key, agent } = await t.newAgent({ body: { wallet_address: eoa.address } });
    const patched = await t.call("PATCH", `/v1/agents/${agent.id}/limits`, {
      key,
      body: { max_order_usdc: 100_000_000, daily_volume_usdc: 1e9, capital_usdc: 1e9, max_market_exposure_pct: 1, kelly_fallback_pct: 1 },
    });
    expect(patched.status).toBe(200);
    // 97,553,285.35 shares at 0.91 = 88,773,489.6685 USDC exactly.
    const res = await t.call("POST", "/v1/orders/intent", { key, body: { agent_id: agent.id, market_id: m.token, side: "buy", size_usdc: 88773489.6685, price: 0.91 } });
    expect(res.status).toBe(201);
    expect(res.body.unsigned_order.message.takerAmount).toBe("97553285350000");
    expect(res.body.unsigned_order.message.makerAmount).toBe("88773489668500");
    const official = await new OrderBuilder(officialSigner(eoa) as any, CHAIN_ID, 0).buildOrder(
      { tokenID: m.token, price: 0.91, size: 97553285.35, side: Side.BUY },
      { tickSize: "0.01", negRisk: false },
      2,
    );
    expect(official.takerAmount).toBe("97553285350000");
    expect(official.makerAmount).toBe("88773489668400"); // 97553285.35 × 0.91 in doubles, rounded by the client
  });
});

