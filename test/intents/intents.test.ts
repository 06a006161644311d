/**
 * POST /v1/orders/intent in payload mode (CONTRACT sections 2, 5, 6): the unsigned EIP-712 order,
 * risk rejections with every failure, dry runs, validation, and reservations under concurrency.
 * Through the real app on the paper venue, on PGlite and (TEST_DATABASE_URL) PostgreSQL.
 * Every test makes its own organization and agent, whose wallet is a fresh viem account.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hashTypedData, recoverTypedDataAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Database } from "../../src/db/database.ts";
import { storedDecisions } from "../support/stored-decisions.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import {
  approved,
  BTC_YES,
  CHECK_NAMES,
  DEM_NO,
  DEM_YES,
  DOMAIN_TYPE_FIELDS,
  EXCHANGE_V2,
  expectChecks,
  expectInvalid,
  expectProblem,
  FED_YES,
  getAgent,
  MADRID_YES,
  NEG_RISK_EXCHANGE_V2,
  NEWSOM_YES,
  newTrader,
  ORDER_TYPE_FIELDS,
  patchLimits,
  holdShares,
  postIntent,
  type Trader,
  ZERO32,
} from "../support/payload.ts";

const BUILDER = `0x${"b1".repeat(16)}${"0c".repeat(16)}`;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MAX_SALT = 2 ** 53 - 1;

describeEachDatabase("order intents HTTP", (_kind, database) => {
  let db: Database;
  /** chainId 80002 and a builder code. */
  let t: TestApp;
  /** The defaults: chainId 137, builder code of 32 zero bytes. */
  let t137: TestApp;

  beforeAll(async () => {
    db = await database();
    t = await createTestApp(db, { config: { chainId: 80002, builderCode: BUILDER as `0x${string}` } });
    t137 = await createTestApp(db);
  });
  afterAll(async () => {
    await Promise.all([t, t137].map((a) => a?.app.stop()));
  });

  const ordersOf = async (tr: Trader) => {
    const res = await t.call("GET", `/v1/orders?agent_id=${tr.agent.id}&limit=200`, { key: tr.key });
    expect(res.status).toBe(200);
    return res.body.data as any[];
  };

  describe("approved, payload mode", () => {
    test("201 with the unsigned order, its EIP-712 hash, the order type, deadline and all eight checks passed", async () => {
      const tr = await newTrader(t);
      const before = Date.now();
      const res = await postIntent(t, tr, { side: "buy", size_usdc: 5.2, price: 0.52 });
      const after = Date.now();
      expect(res.status).toBe(201);
      expect(res.headers.get("content-type")).toStartWith("application/json");
      const b = res.body;
      for (const k of ["order_id", "agent_id", "mode", "status", "unsigned_order", "order_hash", "order_type", "expiration", "signature_deadline", "risk"]) {
        expect(b).toHaveProperty(k);
      }
      expect(b.order_id).toMatch(/^ord_[0-9a-z]+$/);
      expect(b.agent_id).toBe(tr.agent.id);
      expect(b.mode).toBe("payload");
      expect(b.status).toBe("awaiting_signature");
      expect(b.order_type).toBe("GTC");
      expect(b.expiration).toBe("0");
      expect(b.risk).toEqual({ approved: true, checks: CHECK_NAMES.map((check) => ({ check, passed: true })) });

      const u = b.unsigned_order;
      expect(Object.keys(u).sort()).toEqual(["domain", "message", "primaryType", "types"]);
      expect(u.primaryType).toBe("Order");
      expect(u.domain).toEqual({ name: "Polymarket CTF Exchange", version: "2", chainId: 80002, verifyingContract: EXCHANGE_V2 });
      expect(u.types).toEqual({ EIP712Domain: DOMAIN_TYPE_FIELDS, Order: ORDER_TYPE_FIELDS });

      const m = u.message;
      expect(Object.keys(m).sort()).toEqual(ORDER_TYPE_FIELDS.map((f) => f.name).sort());
      expect(m.salt).toMatch(/^[1-9][0-9]*$/);
      expect(Number(m.salt)).toBeLessThanOrEqual(MAX_SALT);
      expect(m.maker.toLowerCase()).toBe(tr.account.address.toLowerCase());
      expect(m.signer.toLowerCase()).toBe(tr.account.address.toLowerCase());
      expect(m.signatureType).toBe(0);
      expect(m.tokenId).toBe(DEM_YES);
      expect(m.side).toBe(0);
      expect(m.makerAmount).toBe("5200000");
      expect(m.takerAmount).toBe("10000000");
      expect(m.metadata).toBe(ZERO32);
      expect(m.builder).toBe(BUILDER);
      expect(m.timestamp).toMatch(/^[0-9]+$/);
      expect(Number(m.timestamp)).toBeGreaterThanOrEqual(before);
      expect(Number(m.timestamp)).toBeLessThanOrEqual(after);

      // The digest is viem's, over the object exactly as returned; the object signs as it is.
      expect(b.order_hash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(b.order_hash).toBe(hashTypedData(u));
      const signature = await tr.account.signTypedData(u);
      expect(await recoverTypedDataAddress({ ...u, signature })).toBe(tr.account.address);

      expect(b.signature_deadline).toMatch(ISO);
      const deadline = Date.parse(b.signature_deadline);
      expect(deadline).toBeGreaterThanOrEqual(before + 300_000 - 1);
      expect(deadline).toBeLessThanOrEqual(after + 300_000 + 1);

      // Stored as approved, and reserved: notional 10 × 0.52 = 5.2.
      const order = await t.call("GET", `/v1/orders/${b.order_id}`, { key: tr.key });
      expect(order.status).toBe(200);
      expect(order.body.status).toBe("awaiting_signature");
      expect(order.body.order_hash).toBe(b.order_hash);
      expect(order.body.market_id).toBe(DEM_YES);
      expect(order.body.size_usdc).toBe(5.2);
      expect(order.body.price).toBe(0.52);
      const agent = await getAgent(t, tr);
      expect(agent.daily_volume.used_usdc).toBe(5.2);
      expect(agent.open_orders).toBe(1);
    });

    test("a sell swaps the amounts; share counts are floored to two decimals and notionals are exact", async () => {
      const tr = await newTrader(t);
      // A sell hands over shares held: 12 of DEM_YES and 33.33 of BTC_YES, bought from the book first.
      await holdShares(t, tr);
      await holdShares(t, tr, { market_id: BTC_YES, size_usdc: 10.6, price: 0.318 });
      const sell = await approved(t, tr, { side: "sell", size_usdc: 5.2, price: 0.52 });
      expect(sell.unsigned_order.message.side).toBe(1);
      expect(sell.unsigned_order.message.makerAmount).toBe("10000000"); // shares
      expect(sell.unsigned_order.message.takerAmount).toBe("5200000"); // USDC
      expect(sell.order_hash).toBe(hashTypedData(sell.unsigned_order));

      // 5 / 0.3 = 16.666… → 16.66 shares; 16.66 × 0.3 = 4.998 USDC.
      const buy = await approved(t, tr, { market_id: BTC_YES, side: "buy", size_usdc: 5, price: 0.3 });
      expect(buy.unsigned_order.message.side).toBe(0);
      expect(buy.unsigned_order.message.makerAmount).toBe("4998000");
      expect(buy.unsigned_order.message.takerAmount).toBe("16660000");

      // 7.77 / 0.333 = 23.333… → 23.33 shares; 23.33 × 0.333 = 7.76889 USDC.
      const sell2 = await approved(t, tr, { market_id: BTC_YES, side: "sell", size_usdc: 7.77, price: 0.333 });
      expect(sell2.unsigned_order.message.makerAmount).toBe("23330000");
      expect(sell2.unsigned_order.message.takerAmount).toBe("7768890");
      expect(sell2.order_hash).toBe(hashTypedData(sell2.unsigned_order));

      // The reservations are the exact notionals: 5.2 + 4.998 + 7.76889, beside the 16.59894 of the
      // shares bought first (12 × 0.50 + 33.33 × 0.318, filled).
      const agent = await getAgent(t, tr);
      expect(agent.daily_volume.used_usdc).toBe(34.56583);
      expect(agent.open_orders).toBe(3);
    });

    test("maker, signer and signatureType come from the agent", async () => {
      const signer = privateKeyToAccount(generatePrivateKey());
      const tr = await newTrader(t, { body: { signer_address: signer.address, signature_type: 2 } });
      const b = await approved(t, tr);
      const m = b.unsigned_order.message;
      expect(m.maker.toLowerCase()).toBe(tr.account.address.toLowerCase());
      expect(m.signer.toLowerCase()).toBe(signer.address.toLowerCase());
      expect(m.signer.toLowerCase()).not.toBe(m.maker.toLowerCase());
      expect(m.signatureType).toBe(2);
      expect(b.order_hash).toBe(hashTypedData(b.unsigned_order));
      const signature = await signer.signTypedData(b.unsigned_order);
      expect(await recoverTypedDataAddress({ ...b.unsigned_order, signature })).toBe(signer.address);
    });

    test("timestamps strictly increase across an agent's orders, sequential and concurrent", async () => {
      const tr = await newTrader(t);
      const sequential: number[] = [];
      for (let i = 0; i < 3; i++) sequential.push(Number((await approved(t, tr)).unsigned_order.message.timestamp));
      for (let i = 1; i < sequential.length; i++) expect(sequential[i]).toBeGreaterThan(sequential[i - 1]);

      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => approved(t, tr, i % 2 ? { market_id: MADRID_YES, price: 0.18 } : {})),
      );
      const concurrent = answers.map((a) => Number(a.unsigned_order.message.timestamp));
      expect(new Set(concurrent).size).toBe(concurrent.length);
      for (const ts of concurrent) expect(ts).toBeGreaterThan(sequential[2]);
      // Distinct salts and hashes too.
      expect(new Set(answers.map((a) => a.unsigned_order.message.salt)).size).toBe(12);
      expect(new Set(answers.map((a) => a.order_hash)).size).toBe(12);

      // Another agent is independent but also increasing.
      const other = await newTrader(t);
      const o1 = Number((await approved(t, other)).unsigned_order.message.timestamp);
      const o2 = Number((await approved(t, other)).unsigned_order.message.timestamp);
      expect(o2).toBeGreaterThan(o1);
    });

    test("a neg_risk market is signed for the Neg Risk CTF Exchange V2", async () => {
      const tr = await newTrader(t);
      // 5 / 0.24 = 20.833… → 20.83 shares; 20.83 × 0.24 = 4.9992 USDC.
      const b = await approved(t, tr, { market_id: NEWSOM_YES, price: 0.24 });
      expect(b.unsigned_order.domain).toEqual({ name: "Polymarket CTF Exchange", version: "2", chainId: 80002, verifyingContract: NEG_RISK_EXCHANGE_V2 });
      expect(b.unsigned_order.message.makerAmount).toBe("4999200");
      expect(b.unsigned_order.message.takerAmount).toBe("20830000");
      expect(b.order_hash).toBe(hashTypedData(b.unsigned_order));
      const standard = { ...b.unsigned_order, domain: { ...b.unsigned_order.domain, verifyingContract: EXCHANGE_V2 } };
      expect(b.order_hash).not.toBe(hashTypedData(standard));

      const plain = await approved(t, tr, { market_id: MADRID_YES, price: 0.18 });
      expect(plain.unsigned_order.domain.verifyingContract).toBe(EXCHANGE_V2);
    });

    test("chainId and builder code come from the configuration", async () => {
      const tr = await newTrader(t137);
      const res = await postIntent(t137, tr);
      expect(res.status).toBe(201);
      expect(res.body.unsigned_order.domain.chainId).toBe(137);
      expect(res.body.unsigned_order.message.builder).toBe(ZERO32);
      expect(res.body.order_hash).toBe(hashTypedData(res.body.unsigned_order));
      const amoy = { ...res.body.unsigned_order, domain: { ...res.body.unsigned_order.domain, chainId: 80002 } };
      expect(res.body.order_hash).not.toBe(hashTypedData(amoy));
    });

    test("the approving decision is stored with the order id", async () => {
      const tr = await newTrader(t);
      const b = await approved(t, tr);
      expect(b.decision_id).toMatch(/^dec_[0-9a-z]+$/);
      const [row] = await storedDecisions(db.db, { id: b.decision_id, agentId: tr.agent.id });
      expect(row.approved).toBe(true);
      expect(row.orderId).toBe(b.order_id);
      expect(row.failures).toEqual([]);
    });

    test("GTD orders carry expires_at as unix seconds in expiration", async () => {
      const tr = await newTrader(t);
      const expiresAt = new Date(Date.now() + 3_600_000);
      const b = await approved(t, tr, { order_type: "GTD", expires_at: expiresAt.toISOString() });
      expect(b.order_type).toBe("GTD");
      expect(b.expiration).toBe(String(Math.floor(expiresAt.getTime() / 1000)));
      for (const type of ["FOK", "FAK"]) {
        const x = await approved(t, tr, { order_type: type });
        expect(x.order_type).toBe(type);
        expect(x.expiration).toBe("0");
      }
    });
  });

  describe("rejected", () => {
    test("422 risk_rejected with every failing check in the fixed order; the decision is stored; nothing is reserved", async () => {
      const tr = await newTrader(t);
      await patchLimits(t, tr, { daily_volume_usdc: 100 });
      expect((await t.call("POST", `/v1/agents/${tr.agent.id}/breaker`, { key: tr.key })).status).toBe(200);

      // Breaker tripped; 150 > max_order_usdc 100 and > daily 100; a buy at 0.75 with q 0.6 has no
      // edge; 0.75 is 0.26 from the mid 0.49. Market, concentration and liquidity pass.
      const res = await postIntent(t, tr, { size_usdc: 150, price: 0.75, probability: 0.6 });
      const p = expectProblem(res, 422, "risk_rejected");
      expect(p.decision_id).toMatch(/^dec_[0-9a-z]+$/);
      expect(p.failures.map((f: any) => [f.check, f.code])).toEqual([
        ["breaker", "breaker_tripped"],
        ["order_size", "order_too_large"],
        ["daily_volume", "daily_volume_exceeded"],
        ["kelly_cap", "no_edge"],
        ["price_sanity", "price_far_from_mid"],
      ]);
      for (const f of p.failures) {
        expect(Object.keys(f).sort()).toEqual(["actual", "check", "code", "limit", "message"]);
        expect(typeof f.message).toBe("string");
        expect(f.message.length).toBeGreaterThan(0);
      }
      const byCode = Object.fromEntries(p.failures.map((f: any) => [f.code, f]));
      expect([byCode.order_too_large.limit, byCode.order_too_large.actual]).toEqual([100, 150]);
      expect([byCode.daily_volume_exceeded.limit, byCode.daily_volume_exceeded.actual]).toEqual([100, 150]);
      expect(byCode.no_edge.limit).toBe(0);
      expect(byCode.no_edge.actual).toBeCloseTo(-0.6, 12);
      expect(byCode.price_far_from_mid.limit).toBe(0.1);
      expect(byCode.price_far_from_mid.actual).toBeCloseTo(0.26, 12);
      expectChecks(p.checks, ["breaker", "order_size", "daily_volume", "kelly_cap", "price_sanity"]);

      // Stored with its id.
      const [row] = await storedDecisions(db.db, { id: p.decision_id });
      expect(row).toBeDefined();
      expect(row.approved).toBe(false);
      expect(row.agentId).toBe(tr.agent.id);
      expect(row.orderId).toBeNull();
      expect(row.failures).toEqual(p.failures);
      expect(row.checks).toEqual(p.checks);
      expect(row.intent).toMatchObject({ market_id: DEM_YES, side: "buy", size_usdc: 150, price: 0.75, probability: 0.6 });

      // Nothing reserved, nothing created.
      const agent = await getAgent(t, tr);
      expect(agent.daily_volume.used_usdc).toBe(0);
      expect(agent.open_orders).toBe(0);
      expect(await ordersOf(tr)).toEqual([]);
    });

    test("a rejection after an approval leaves the approved reservation as it was", async () => {
      const tr = await newTrader(t);
      await approved(t, tr, { size_usdc: 5.2, price: 0.52 });
      const p = expectProblem(await postIntent(t, tr, { size_usdc: 101 }), 422, "risk_rejected");
      expect(p.failures.map((f: any) => f.code)).toEqual(["order_too_large", "kelly_cap_exceeded"]);
      expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(5.2);
      expect((await ordersOf(tr)).length).toBe(1);
    });

    test("an unknown market is 422 with market_not_found; a market not accepting orders says so", async () => {
      const tr = await newTrader(t);
      const p = expectProblem(await postIntent(t, tr, { market_id: "123456789" }), 422, "risk_rejected");
      expect(p.failures.map((f: any) => [f.check, f.code])).toEqual([["market_filters", "market_not_found"]]);
      expectChecks(p.checks, ["market_filters"]);

      const fed = expectProblem(await postIntent(t, tr, { market_id: FED_YES, price: 0.62 }), 422, "risk_rejected");
      expect(fed.failures.map((f: any) => f.code)).toContain("market_not_accepting_orders");
      expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(0);
    });
  });

  describe("dry run", () => {
    test("?dry_run=true answers 200 {risk} and creates and reserves nothing", async () => {
      const tr = await newTrader(t);
      const res = await postIntent(t, tr, { size_usdc: 5.2, price: 0.52 }, "?dry_run=true");
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(["risk"]);
      expect(res.body.risk.approved).toBe(true);
      expectChecks(res.body.risk.checks);
      expect(await ordersOf(tr)).toEqual([]);
      const agent = await getAgent(t, tr);
      expect(agent.daily_volume.used_usdc).toBe(0);
      expect(agent.open_orders).toBe(0);
    });

    test("a failing dry run answers 200 with the failures, not a 422", async () => {
      const tr = await newTrader(t);
      const res = await postIntent(t, tr, { size_usdc: 150 }, "?dry_run=true");
      expect(res.status).toBe(200);
      expect(res.body.risk.approved).toBe(false);
      expect(res.body.risk.failures.map((f: any) => f.code)).toEqual(["order_too_large", "kelly_cap_exceeded"]);
      expectChecks(res.body.risk.checks, ["order_size", "kelly_cap"]);
      expect(await ordersOf(tr)).toEqual([]);
    });

    test("a dry run sees the reservations already made", async () => {
      const tr = await newTrader(t);
      await patchLimits(t, tr, { daily_volume_usdc: 10 });
      await approved(t, tr);
      await approved(t, tr);
      const res = await postIntent(t, tr, {}, "?dry_run=true");
      expect(res.status).toBe(200);
      expect(res.body.risk.failures.map((f: any) => f.code)).toEqual(["daily_volume_exceeded"]);
      expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(10);
    });
  });

  describe("validation", () => {
    test("bad bodies answer 400 invalid_request with errors[], and create nothing", async () => {
      const tr = await newTrader(t);
      const past = new Date(Date.now() - 60_000).toISOString();
      const future = new Date(Date.now() + 3_600_000).toISOString();
      const cases: [Record<string, unknown>, string][] = [
        [{ foo: 1 }, "/foo"],
        [{ side: "hold" }, "/side"],
        [{ side: "BUY" }, "/side"],
        [{ side: 0 }, "/side"],
        [{ price: 0 }, "/price"],
        [{ price: 1 }, "/price"],
        [{ price: -0.5 }, "/price"],
        [{ price: "0.5" }, "/price"],
        [{ size_usdc: -5 }, "/size_usdc"],
        [{ size_usdc: 0 }, "/size_usdc"],
        [{ size_usdc: 5.1234567 }, "/size_usdc"],
        [{ market_id: "abc" }, "/market_id"],
        [{ market_id: "0x1234" }, "/market_id"],
        [{ market_id: "" }, "/market_id"],
        [{ market_id: 62116 }, "/market_id"],
        [{ order_type: "IOC" }, "/order_type"],
        [{ order_type: "GTD" }, "/expires_at"],
        [{ order_type: "GTD", expires_at: past }, "/expires_at"],
        [{ expires_at: future }, "/expires_at"],
        [{ order_type: "GTC", expires_at: future }, "/expires_at"],
        [{ probability: 1 }, "/probability"],
        [{ probability: 0 }, "/probability"],
        [{ agent_id: "not-an-agent" }, "/agent_id"],
      ];
      for (const [patch, path] of cases) {
        const res = await postIntent(t, tr, patch);
        try {
          expectInvalid(res, path);
        } catch (error) {
          throw new Error(`${JSON.stringify(patch)}: ${(error as Error).message}`);
        }
      }
      // A missing required field.
      const { market_id: _m, ...noMarket } = { agent_id: tr.agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5 };
      expectInvalid(await t.call("POST", "/v1/orders/intent", { key: tr.key, body: noMarket }), "/market_id");
      // Six decimals are fine (and 5.123456 / 0.5 = 10.246912 → 10.24 shares, 5.12 USDC).
      const six = await approved(t, tr, { size_usdc: 5.123456 });
      expect(six.unsigned_order.message.makerAmount).toBe("5120000");
      expect((await ordersOf(tr)).length).toBe(1);
      expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(5.12);
    });

    test("an organization key must name the agent", async () => {
      const tr = await newTrader(t);
      const { agent_id: _a, ...body } = { agent_id: tr.agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5 };
      expectInvalid(await t.call("POST", "/v1/orders/intent", { key: tr.key, body }), "/agent_id");
      expect(await ordersOf(tr)).toEqual([]);
    });

    test("an agent-scoped key may leave agent_id out; another agent's id is 403", async () => {
      const tr = await newTrader(t);
      const sibling = await newTrader(t, { key: tr.key });
      const issued = await t.call("POST", "/v1/api-keys", { key: tr.key, body: { name: "scoped", agent_id: tr.agent.id } });
      expect(issued.status).toBe(201);
      const scoped = issued.body.key as string;

      const { agent_id: _a, ...body } = { agent_id: tr.agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5 };
      const res = await t.call("POST", "/v1/orders/intent", { key: scoped, body });
      expect(res.status).toBe(201);
      expect(res.body.agent_id).toBe(tr.agent.id);
      expect(res.body.unsigned_order.message.maker.toLowerCase()).toBe(tr.account.address.toLowerCase());

      const own = await t.call("POST", "/v1/orders/intent", { key: scoped, body: { ...body, agent_id: tr.agent.id } });
      expect(own.status).toBe(201);

      expectProblem(await t.call("POST", "/v1/orders/intent", { key: scoped, body: { ...body, agent_id: sibling.agent.id } }), 403, "forbidden");
      const siblingOrders = await t.call("GET", `/v1/orders?agent_id=${sibling.agent.id}`, { key: tr.key });
      expect(siblingOrders.body.data).toEqual([]);
      expect((await getAgent(t, sibling)).daily_volume.used_usdc).toBe(0);
    });

    test("another organization's agent is 404, and nothing is reserved on it", async () => {
      const mine = await newTrader(t);
      const theirs = await newTrader(t);
      const res = await t.call("POST", "/v1/orders/intent", { key: mine.key, body: { agent_id: theirs.agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5 } });
      expectProblem(res, 404, "not_found");
      expect((await getAgent(t, theirs)).daily_volume.used_usdc).toBe(0);
      const missing = await t.call("POST", "/v1/orders/intent", { key: mine.key, body: { agent_id: "agt_zzzzzzzzzzzzzzzzzzzz", market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5 } });
      expectProblem(missing, 404, "not_found");
    });

    test("without an API key the intent is 401", async () => {
      const tr = await newTrader(t);
      const res = await t.call("POST", "/v1/orders/intent", { body: { agent_id: tr.agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5 } });
      expectProblem(res, 401, "unauthenticated");
    });
  });

  describe("reservations", () => {
    test("60 concurrent intents against a daily limit of 50 approve exactly 10 of 5 USDC", async () => {
      const tr = await newTrader(t);
      await patchLimits(t, tr, { daily_volume_usdc: 50 });
      // 5 / 0.5 = 10 shares exactly: notional 5.
      const answers = await Promise.all(Array.from({ length: 60 }, () => postIntent(t, tr, { size_usdc: 5, price: 0.5 })));
      const ok = answers.filter((r) => r.status === 201);
      const rejected = answers.filter((r) => r.status !== 201);
      expect(ok.length).toBe(10);
      expect(rejected.length).toBe(50);
      for (const r of rejected) {
        const p = expectProblem(r, 422, "risk_rejected");
        expect(p.failures).toHaveLength(1);
        expect(p.failures[0]).toMatchObject({ check: "daily_volume", code: "daily_volume_exceeded", limit: 50, actual: 55 });
        expectChecks(p.checks, ["daily_volume"]);
      }
      expect(new Set(ok.map((r) => r.body.order_id)).size).toBe(10);
      for (const r of ok) expect(r.body.unsigned_order.message.makerAmount).toBe("5000000");

      const agent = await getAgent(t, tr);
      expect(agent.daily_volume.used_usdc).toBe(50);
      expect(agent.daily_volume.limit_usdc).toBe(50);
      expect(agent.open_orders).toBe(10);
      const listed = await ordersOf(tr);
      expect(listed.length).toBe(10);
      expect(new Set(listed.map((o) => o.id))).toEqual(new Set(ok.map((r) => r.body.order_id)));
      for (const o of listed) expect(o.status).toBe("awaiting_signature");

      // Every decision is stored: 10 approvals, 50 rejections.
      const decisions = await storedDecisions(db.db, { agentId: tr.agent.id });
      expect(decisions.filter((d) => d.approved).length).toBe(10);
      expect(decisions.filter((d) => !d.approved).length).toBe(50);
      const rejectedIds = new Set(rejected.map((r) => r.body.decision_id));
      expect(rejectedIds.size).toBe(50);
      for (const d of decisions.filter((d) => !d.approved)) expect(rejectedIds.has(d.id)).toBe(true);

      // Full: the next one is rejected too, on any market.
      const next = expectProblem(await postIntent(t, tr, { market_id: MADRID_YES, price: 0.18 }), 422, "risk_rejected");
      expect(next.failures.map((f: any) => f.code)).toEqual(["daily_volume_exceeded"]);
    });

    test("60 concurrent intents across both outcome tokens of a market stop exactly at the concentration cap", async () => {
      const tr = await newTrader(t);
      // Cap = 0.05 × 1000 = 50 USDC in the market (both tokens of the condition).
      await patchLimits(t, tr, { max_market_exposure_pct: 0.05, capital_usdc: 1000 });
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) => postIntent(t, tr, { market_id: i % 2 ? DEM_NO : DEM_YES, size_usdc: 5, price: 0.5 })),
      );
      const ok = answers.filter((r) => r.status === 201);
      expect(ok.length).toBe(10);
      for (const r of answers.filter((r) => r.status !== 201)) {
        const p = expectProblem(r, 422, "risk_rejected");
        expect(p.failures).toHaveLength(1);
        expect(p.failures[0]).toMatchObject({ check: "concentration", code: "concentration_exceeded", limit: 50, actual: 55 });
      }
      let agent = await getAgent(t, tr);
      expect(agent.daily_volume.used_usdc).toBe(50);

      // Another market has room; a sell in the full market passes concentration.
      const other = await postIntent(t, tr, { market_id: MADRID_YES, size_usdc: 5, price: 0.18 });
      expect(other.status).toBe(201);
      // It holds no shares, so the sell fails order_size (insufficient_position), never concentration.
      const sell = await postIntent(t, tr, { market_id: DEM_YES, side: "sell", size_usdc: 5, price: 0.5 });
      expect(sell.status).toBe(422);
      expect(sell.body.failures.map((f: any) => `${f.check}:${f.code}`)).toEqual(["order_size:insufficient_position"]);
      agent = await getAgent(t, tr);
      expect(agent.open_orders).toBe(11);
      // 50 + 27.77 × 0.18 (= 4.9986); the refused sell reserved nothing.
      expect(agent.daily_volume.used_usdc).toBe(54.9986);
    });

    test("concurrent intents of two agents do not share limits", async () => {
      const a = await newTrader(t);
      const b = await newTrader(t, { key: a.key });
      await patchLimits(t, a, { daily_volume_usdc: 20 });
      await patchLimits(t, b, { daily_volume_usdc: 30 });
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => postIntent(t, i % 2 ? b : a)));
      const okA = answers.filter((r, i) => i % 2 === 0 && r.status === 201).length;
      const okB = answers.filter((r, i) => i % 2 === 1 && r.status === 201).length;
      expect(okA).toBe(4);
      expect(okB).toBe(6);
      expect((await getAgent(t, a)).daily_volume.used_usdc).toBe(20);
      expect((await getAgent(t, b)).daily_volume.used_usdc).toBe(30);
    });
  });
});
