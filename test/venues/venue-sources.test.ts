/**
 * The composition of this branch's sources (src/venue-sources.ts) in the service with VENUE=clob
 * against the venue simulator: a delegated agent's credentials (stored through the API, sealed) are
 * followed on /ws/user; a resting order the service placed, filled by a counterparty through the
 * official client, reaches the sink as a fill within 2 s of the trade; the catch-up after a restart of
 * the sources reports a cancel done at the venue meanwhile. On PGlite and, when TEST_DATABASE_URL is
 * set, PostgreSQL.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ClobClient, OrderType, Side } from "@polymarket/clob-client-v2";
import { generatePrivateKey } from "viem/accounts";
import type { VenueReport } from "../../src/domain/venue-report.ts";
import { startVenueSources, type VenueSources } from "../../src/venue-sources.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { agentOfWallet, clobVenueAt, TOKEN, walletOf } from "./clob-service.ts";
import { until } from "../support/until.ts";

const LIMITS = { daily_volume_usdc: 100_000, capital_usdc: 100_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600, duplicate_window_s: 0 };

let sim: VenueSim;
beforeAll(() => {
  sim = startVenueSim({ port: 0 });
});
afterAll(async () => {
  await sim?.stop();
});

describeEachDatabase("venue sources in the service (VENUE=clob)", (_kind, database) => {
  let t: TestApp;
  let sources: VenueSources | null = null;
  const reports: VenueReport[] = [];
  const logged: string[] = [];
  const logger = {
    info: (m: string, f?: Record<string, unknown>) => void logged.push(`${m} ${JSON.stringify(f ?? {})}`),
    warn: (m: string, f?: Record<string, unknown>) => void logged.push(`${m} ${JSON.stringify(f ?? {})}`),
    error: (m: string, f?: Record<string, unknown>) => void logged.push(`${m} ${JSON.stringify(f ?? {})}`),
  };
  const start = () =>
    startVenueSources({
      config: t.app.services.config,
      db: t.app.services.database.db,
      withAgentCredentials: (id, fn) => t.app.services.credentials.withAgentCredentials(id, fn),
      sink: { report: (r) => void reports.push(r) },
      clock: t.app.services.clock,
      logger,
      userChannel: { backoffMinMs: 20, backoffMaxMs: 200 },
    });

  beforeAll(async () => {
    const { venue, env } = await clobVenueAt(sim.url);
    t = await createTestApp(await database(), { venue, env });
  });
  afterAll(async () => {
    await sources?.stop();
    await t?.app.stop();
  });

  test("a delegated agent's resting order filled by a counterparty reaches the sink within 2 s; a cancel at the venue while the sources were down is caught up", async () => {
    const wallet = walletOf(generatePrivateKey());
    const owner = new ClobClient({ host: sim.url, chain: 137, signer: wallet });
    const creds = await owner.createOrDeriveApiKey();
    const { key, agentId } = await agentOfWallet(t, wallet.account.address, LIMITS);
    const stored = await t.call("POST", `/v1/agents/${agentId}/creds`, {
      key,
      body: { api_key: creds.key, api_secret: creds.secret, passphrase: creds.passphrase, scopes: ["order:place", "order:cancel"] },
    });
    expect(stored.status).toBe(200);

    sources = await start();
    expect(sources.userChannel).not.toBeNull();
    await until("subscribed", () => sources!.userChannel!.state(agentId)?.subscribed);

    // 0.49: inside the fixture's spread (bids 0.48, asks 0.50).
    const placed = await t.call("POST", "/v1/orders/intent", { key, body: { agent_id: agentId, market_id: TOKEN, side: "buy", size_usdc: 4.9, price: 0.49 } });
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({ mode: "delegated", status: "open" });
    const venueId: string = placed.body.venue_order_id;

    const bobWallet = walletOf(generatePrivateKey());
    const bobCreds = await new ClobClient({ host: sim.url, chain: 137, signer: bobWallet }).createOrDeriveApiKey();
    const bobClient = new ClobClient({ host: sim.url, chain: 137, signer: bobWallet, creds: bobCreds, throwOnError: true });
    const sell = await bobClient.createOrder({ tokenID: TOKEN, price: 0.49, size: 10, side: Side.SELL });
    const r: any = await bobClient.postOrder(sell, OrderType.FAK);
    expect(r.success).toBe(true);
    const tradedAt = Date.now();
    const fill = await until("the fill", () => reports.find((x) => x.kind === "fill" && x.ref.venueOrderId === venueId), 2000);
    expect(Date.now() - tradedAt).toBeLessThan(2000);
    expect(fill).toMatchObject({ kind: "fill", source: "user_channel", sharesUnits: 10_000_000n, usdcUnits: 4_900_000n });

    // A second resting order; the sources stop; the owner cancels it at the venue with the official client.
    const second = await t.call("POST", "/v1/orders/intent", { key, body: { agent_id: agentId, market_id: TOKEN, side: "buy", size_usdc: 4, price: 0.4 } });
    expect(second.status).toBe(201);
    const secondId: string = second.body.venue_order_id;
    await sources.stop();
    const ownerClient = new ClobClient({ host: sim.url, chain: 137, signer: wallet, creds, throwOnError: true });
    await ownerClient.cancelOrder({ orderID: secondId });
    expect(reports.some((x) => x.ref.venueOrderId === secondId && x.kind === "cancelled")).toBe(false);
    // Started again (a restart): the start-up catch-up finds the cancel among the service's open orders.
    sources = await start();
    const c = await until("the caught-up cancel", () => reports.find((x) => x.ref.venueOrderId === secondId && x.kind === "cancelled"));
    expect(c).toMatchObject({ source: "rest", sizeMatchedUnits: 0n });
    for (const line of logged) for (const s of [creds.secret, creds.passphrase]) expect(line).not.toContain(s);
  });
});
