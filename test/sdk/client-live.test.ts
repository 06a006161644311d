/** The SDK against the real service over HTTP: payload with signing, delegated, kill, and every error type. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWalletClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { polygon } from "viem/chains";
import {
  BrokerClient,
  ConflictError,
  ForbiddenError,
  IdempotencyConflictError,
  InvalidRequestError,
  InvalidSignatureError,
  NotFoundError,
  OrderExpiredError,
  RateLimitedError,
  RiskRejectedError,
  ScopeError,
  UnauthenticatedError,
  walletClientSigner,
  type PayloadIntentAnswer,
} from "../../packages/sdk/src/client.ts";
import { CHECK_NAMES, DEM_YES, FED_YES } from "../support/payload.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { newOrgClient, serveTestApp, type LiveService } from "./serve.ts";

const wallet = () => privateKeyToAccount(generatePrivateKey());
const intent = (agent_id: string, o: Record<string, unknown> = {}) => ({ agent_id, market_id: DEM_YES, side: "buy" as const, size_usdc: 5, price: 0.5, ...o });

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection<T extends Error>(p: Promise<unknown>, cls: new (...a: any[]) => T): Promise<T> {
  const err = await p.then(
    (v) => {
      throw new Error(`expected ${cls.name}, resolved with ${JSON.stringify(v)}`);
    },
    (e) => e,
  );
  if (!(err instanceof cls)) throw new Error(`expected ${cls.name}, got ${err?.name}: ${err?.message}`);
  return err;
}

describeEachDatabase("sdk against the live service", (_kind, database) => {
  let live: LiveService;
  beforeAll(async () => {
    live = await serveTestApp(await database());
  });
  afterAll(() => live?.stop());

  test("payload mode: markets, a failing check with its failures, a dry run, place, sign with a viem account, submit, read", async () => {
    const { client } = await newOrgClient(live.url);
    const markets = await client.listMarkets({ limit: 200 });
    expect(markets.data.some((m) => m.market_id === DEM_YES)).toBe(true);
    expect((await client.getMarket(DEM_YES)).tick_size).toBeDefined();

    const account = wallet();
    const agent = await client.createAgent({ name: "sdk", wallet_address: account.address });
    expect(agent.mode).toBe("payload");

    // A dry run answers the eight checks without an order; a placement is refused as a typed error.
    const bad = intent(agent.id, { size_usdc: 500, price: 0.9 });
    const checked = await client.checkIntent(bad);
    expect(checked.risk.approved).toBe(false);
    expect(checked.risk.failures!.map((f) => f.code)).toEqual(["order_too_large", "concentration_exceeded", "kelly_cap_exceeded", "price_far_from_mid"]);
    const err = await rejection(client.placeIntent(bad), RiskRejectedError);
    expect(err.status).toBe(422);
    expect(err.code).toBe("risk_rejected");
    expect(err.decisionId).toMatch(/^dec_/);
    expect(err.checks.map((c) => c.check)).toEqual([...CHECK_NAMES]);
    expect(err.failures).toEqual(checked.risk.failures!);
    const tooLarge = err.failures.find((f) => f.code === "order_too_large")!;
    expect(tooLarge.limit).toBe(100);
    expect(tooLarge.actual).toBe(500);

    const dry = await client.checkIntent(intent(agent.id));
    expect(dry.risk.approved).toBe(true);
    expect((await client.listOrders({ agent_id: agent.id })).data).toHaveLength(0);

    const answer = (await client.placeIntent(intent(agent.id))) as PayloadIntentAnswer;
    expect(answer.mode).toBe("payload");
    expect(answer.status).toBe("awaiting_signature");
    const submitted = await client.signAndSubmit(answer, account);
    expect(submitted.order_id).toBe(answer.order_id);
    expect(["open", "filled"]).toContain(submitted.status);
    expect(submitted.venue_order_id).toBe(answer.order_hash);

    const order = await client.getOrder(answer.order_id);
    expect(order.history.map((h) => h.status)).toContain("submitting");
    const list = await client.listOrders({ agent_id: agent.id, limit: 10 });
    expect(list.data.map((o) => o.id)).toEqual([answer.order_id]);
    const all: string[] = [];
    for await (const o of client.paginate((q) => client.listOrders({ ...q, agent_id: agent.id }), 1)) all.push(o.id);
    expect(all).toEqual([answer.order_id]);

    // The rejection is stored with its decision id and every failure; the order shows in the exposure.
    const rejections = await client.listDecisions({ agent_id: agent.id, approved: false });
    expect(rejections.data.map((d) => d.id)).toContain(err.decisionId);
    expect(rejections.data.find((d) => d.id === err.decisionId)!.failures.map((f) => f.code)).toEqual(err.failures.map((f) => f.code));
    const exposure = await client.getExposure(agent.id);
    expect(exposure.limit_usdc).toBe(200);
    expect(exposure.data.flatMap((e) => e.market_ids)).toContain(DEM_YES);
    // Positions from fills: the buy at 0.50 took 10 shares from the paper book, reported in-process.
    expect(submitted.status).toBe("filled");
    let positions = await client.getPositions(agent.id);
    for (let i = 0; i < 100 && !positions.positions.length; i++) {
      await Bun.sleep(20);
      positions = await client.getPositions(agent.id);
    }
    expect(positions.agent_id).toBe(agent.id);
    expect(positions.positions).toEqual([expect.objectContaining({ token_id: DEM_YES, shares: "10", avg_price: "0.5", cost_usdc: "5", realized_pnl_usdc: "0" })]);
    const summary = await client.riskSummary({ agent_id: agent.id, hours: 1 });
    expect(summary.intents.reduce((n, h) => n + h.rejected, 0)).toBeGreaterThanOrEqual(1);

    // Cancel a second, unsigned one; then the order is no longer awaiting a signature.
    const second = (await client.placeIntent(intent(agent.id, { price: 0.49 }))) as PayloadIntentAnswer;
    expect((await client.cancelOrder(second.order_id)).status).toBe("cancelled");
    const stale = await rejection(client.signAndSubmit(second, account), ConflictError);
    expect(stale.code).toBe("invalid_state");
    expect(stale.problem.order_status).toBe("cancelled");
  });

  test("signature types: a deposit wallet (type 3) signed by its owner through viem's ERC-7739 wrapper, and a wallet-client signer", async () => {
    const { client } = await newOrgClient(live.url);
    const owner = wallet();
    const depositWallet = wallet().address;
    const agent = await client.createAgent({ wallet_address: depositWallet, signature_type: 3, owner_address: owner.address });
    expect(agent.signature_type).toBe(3);
    expect(agent.owner_address?.toLowerCase()).toBe(owner.address.toLowerCase());
    const answer = (await client.placeIntent(intent(agent.id))) as PayloadIntentAnswer;
    expect(answer.unsigned_order.message.signatureType).toBe(3);
    // The owner's plain EIP-712 signature is not what a deposit wallet accepts.
    const plain = await owner.signTypedData(answer.unsigned_order as any);
    expect((await rejection(client.submitSigned({ order_id: answer.order_id, signature: plain }), InvalidSignatureError)).code).toBe("invalid_signature");
    const submitted = await client.signAndSubmit(answer, owner);
    expect(["open", "filled"]).toContain(submitted.status);

    // Any EIP-712 signer: viem's wallet client over a local account.
    const eoa = wallet();
    const wc = createWalletClient({ account: eoa, chain: polygon, transport: http("http://127.0.0.1:9") });
    const plainAgent = await client.createAgent({ wallet_address: eoa.address });
    const a2 = (await client.placeIntent(intent(plainAgent.id))) as PayloadIntentAnswer;
    expect(["open", "filled"]).toContain((await client.signAndSubmit(a2, walletClientSigner(wc, eoa))).status);
  });

  test("delegated mode and the kill switch: credentials, a placed order, kill cancels it and deletes the credentials", async () => {
    const { client } = await newOrgClient(live.url);
    const agent = await client.createAgent({ wallet_address: wallet().address });
    const creds = { api_key: "paper-key", api_secret: Buffer.from("s".repeat(32)).toString("base64"), passphrase: "pp" };
    const forbidden = await rejection(client.setCredentials(agent.id, { ...creds, scopes: ["order:place", "withdraw" as any] }), ScopeError);
    expect(forbidden.code).toBe("forbidden_scope");
    expect(forbidden.scopes).toEqual(["withdraw"]);
    expect((await rejection(client.setCredentials(agent.id, { ...creds, scopes: ["read" as any] }), ScopeError)).code).toBe("invalid_scope");

    const delegated = await client.setCredentials(agent.id, { ...creds, scopes: ["order:place", "order:cancel"] });
    expect(delegated.mode).toBe("delegated");
    expect(delegated.credentials?.scopes).toEqual(["order:place", "order:cancel"]);
    expect(JSON.stringify(delegated)).not.toContain(creds.api_secret);

    const placed = await client.placeIntent(intent(agent.id, { price: 0.45 }));
    expect(placed.mode).toBe("delegated");
    if (placed.mode !== "delegated") throw new Error("unreachable");
    expect(placed.venue_order_id).toBeTruthy();
    expect((await client.getOrder(placed.order_id)).status).toBe("open");

    const kill = await client.kill(agent.id, { reason: "sdk test" });
    expect(kill.kill_id).toMatch(/^kil_/);
    expect(kill.cancelled).toEqual([placed.order_id]);
    expect(kill.failed).toEqual([]);
    expect(kill.credentials_deleted).toBe(true);
    expect(kill.agent.mode).toBe("payload");
    expect(kill.agent.breaker.state).toBe("tripped");
    expect((await client.getOrder(placed.order_id)).status).toBe("cancelled");

    // Halted: intents fail the breaker check, credentials answer agent_halted, until a resume.
    const halted = await rejection(client.placeIntent(intent(agent.id)), RiskRejectedError);
    expect(halted.failures.map((f) => f.code)).toContain("breaker_tripped");
    expect((await rejection(client.setCredentials(agent.id, { ...creds, scopes: ["order:place"] }), ConflictError)).code).toBe("agent_halted");
    expect((await client.resume(agent.id)).breaker.state).toBe("closed");
    expect((await client.tripBreaker(agent.id)).breaker.reason).toBe("manual");
    expect((await client.resume(agent.id)).breaker.state).toBe("closed");
    expect((await client.updateLimits(agent.id, { max_order_usdc: 50 })).limits.max_order_usdc).toBe(50);
  });

  test("each error answer becomes its typed error with code, status and members", async () => {
    const { client, key } = await newOrgClient(live.url);
    const account = wallet();
    const agent = await client.createAgent({ wallet_address: account.address });

    const invalid = await rejection(client.placeIntent({ ...intent(agent.id), side: "hold" as any }), InvalidRequestError);
    expect(invalid.status).toBe(400);
    expect(invalid.errors.some((e) => e.path.startsWith("/side"))).toBe(true);

    const anon = new BrokerClient({ baseUrl: live.url });
    expect((await rejection(anon.listAgents(), UnauthenticatedError)).status).toBe(401);
    const badKey = new BrokerClient({ baseUrl: live.url, apiKey: "bk_not_a_key" });
    expect((await rejection(badKey.getAgent(agent.id), UnauthenticatedError)).code).toBe("unauthenticated");

    const other = await newOrgClient(live.url);
    expect((await rejection(other.client.getAgent(agent.id), NotFoundError)).status).toBe(404);

    // A key scoped to another agent of the same org.
    const agent2 = await client.createAgent({ wallet_address: wallet().address });
    const scoped = await client.createApiKey({ name: "scoped", agent_id: agent2.id });
    expect(scoped.key).toMatch(/^bk_/);
    const scopedClient = new BrokerClient({ baseUrl: live.url, apiKey: scoped.key });
    expect((await rejection(scopedClient.getAgent(agent.id), ForbiddenError)).status).toBe(403);
    const keys = await client.listApiKeys();
    expect(keys.data.map((k) => k.id)).toContain(scoped.id);
    expect(JSON.stringify(keys)).not.toContain(scoped.key);
    await client.revokeApiKey(scoped.id);
    await rejection(scopedClient.getAgent(agent2.id), UnauthenticatedError);

    const answer = (await client.placeIntent(intent(agent.id))) as PayloadIntentAnswer;
    const wrongSigner = await rejection(client.signAndSubmit(answer, wallet()), InvalidSignatureError);
    expect(wrongSigner.code).toBe("invalid_signature");

    const conflictKey = crypto.randomUUID();
    await client.checkIntent(intent(agent.id), { idempotencyKey: conflictKey });
    const conflict = await rejection(client.checkIntent(intent(agent.id, { size_usdc: 6 }), { idempotencyKey: conflictKey }), IdempotencyConflictError);
    expect(conflict.status).toBe(409);

    const unfit = await rejection(client.placeIntent(intent(agent.id, { market_id: FED_YES })), RiskRejectedError);
    expect(unfit.failures.map((f) => f.code)).toContain("market_not_accepting_orders");
    expect(unfit.message).not.toContain(key);
  });
});

describeEachDatabase("sdk errors that need their own service settings", (_kind, database) => {
  test("429 rate_limited is retried after Retry-After, and surfaces as RateLimitedError when retries run out", async () => {
    const live = await serveTestApp(await database(), { env: { RATE_LIMIT_PER_S: "1" } });
    try {
      const { key } = await newOrgClient(live.url);
      const patient = new BrokerClient({ baseUrl: live.url, apiKey: key, retry: { retries: 3 } });
      const impatient = new BrokerClient({ baseUrl: live.url, apiKey: key, retry: { retries: 0 } });
      let limited: RateLimitedError | null = null;
      for (let i = 0; i < 5 && !limited; i++) await impatient.listAgents().catch((e) => (limited = e));
      expect(limited).toBeInstanceOf(RateLimitedError);
      expect(limited!.status).toBe(429);
      expect(limited!.retryAfterS).toBeGreaterThan(0);
      // The patient client waits and gets through.
      expect((await patient.listAgents()).data).toEqual([]);
    } finally {
      await live.stop();
    }
  });

  test("410 order_expired after the signature deadline", async () => {
    const live = await serveTestApp(await database(), { env: { SIGNATURE_TTL_S: "5" } });
    try {
      const { client } = await newOrgClient(live.url);
      const account = wallet();
      const agent = await client.createAgent({ wallet_address: account.address });
      const answer = (await client.placeIntent(intent(agent.id))) as PayloadIntentAnswer;
      await Bun.sleep(Date.parse(answer.signature_deadline) - Date.now() + 300);
      const expired = await rejection(client.signAndSubmit(answer, account), OrderExpiredError);
      expect(expired.status).toBe(410);
      expect(expired.code).toBe("order_expired");
    } finally {
      await live.stop();
    }
  }, 15_000);
});
