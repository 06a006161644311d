/**
 * The service with VENUE=clob (the venue createVenue builds from the configuration, VENUE_WS_URL derived
 * from VENUE_URL) against the venue simulator: the risk checks and the market view read the live book
 * kept from /ws/market, so steady-state payload intents make no venue call; a change at the venue
 * reaches the service's book through the stream; a dropped stream falls back to GET /book until the
 * resubscription's snapshot. On PGlite and, when TEST_DATABASE_URL is set, PostgreSQL.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { ClobVenue } from "../../src/venues/clob/clob-venue.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import type { OrderMessage, VenueCredentials } from "../../src/venues/venue.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { agentOfWallet, clobVenueAt, TOKEN } from "./clob-service.ts";
import { orderMessage } from "../support/order-message.ts";
import { until } from "../support/until.ts";
import { registerSimCredentials } from "../support/venue-sim.ts";

const LIMITS = { daily_volume_usdc: 100_000, capital_usdc: 100_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600, duplicate_window_s: 0 };
const WALLET = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const MAKER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" as const;

let sim: VenueSim;
beforeAll(() => {
  sim = startVenueSim({ port: 0 });
});
afterAll(async () => {
  await sim?.stop();
});

const requests = async (): Promise<Record<string, number>> => ((await (await fetch(`${sim.url}/_sim/stats`)).json()) as { requests: Record<string, number> }).requests;
const post = (path: string, body: unknown) => fetch(`${sim.url}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
let salt = 9000;
const bid = (price: string, shares: string): OrderMessage => orderMessage(TOKEN, MAKER, "buy", price, shares, { salt: ++salt, timestamp: Date.now() });

describeEachDatabase("live books in the service (VENUE=clob)", (kind, database) => {
  let t: TestApp;
  let venue: ClobVenue;
  const maker: VenueCredentials = { api_key: `key-live-${kind}`, api_secret: Buffer.alloc(32, 5).toString("base64url"), passphrase: "pp", address: MAKER };

  beforeAll(async () => {
    const built = await clobVenueAt(sim.url);
    expect(built.config.venueWsUrl).toBe(sim.wsUrl);
    venue = built.venue as ClobVenue;
    expect(venue.marketChannel).not.toBeNull();
    t = await createTestApp(await database(), { venue, env: built.env });
    await registerSimCredentials(sim, maker);
  });
  afterAll(async () => {
    await t?.app.stop();
    await venue?.close();
  });

  test("steady-state payload intents read the stream's book: no venue call per intent", async () => {
    const { key, agentId } = await agentOfWallet(t, WALLET, LIMITS);
    const intent = () => t.call("POST", "/v1/orders/intent", { key, body: { agent_id: agentId, market_id: TOKEN, side: "buy", size_usdc: 4, price: 0.4 } });
    expect((await intent()).status).toBe(201);
    await until("the token's snapshot", () => venue.marketChannel!.isSynced(TOKEN));
    const before = await requests();
    for (let i = 0; i < 30; i++) expect((await intent()).status).toBe(201);
    const after = await requests();
    const calls = Object.entries(after).reduce((n, [route, c]) => n + (route.startsWith("GET /ws/") ? 0 : c - (before[route] ?? 0)), 0);
    expect(calls).toBe(0);
  });

  test("a change at the venue reaches the service's book through the stream; a dropped stream falls back to GET /book, then recovers", async () => {
    const best = async () => (await t.call("GET", `/v1/markets/${TOKEN}`)).body.best_bid as string;
    await until("synced", () => venue.marketChannel!.isSynced(TOKEN));
    const was = await best();
    const better = (Number(was) + 0.01).toFixed(2);
    const placed = await venue.placeDelegatedOrder({ credentials: maker, client_order_id: "x", order: bid(better, "10"), order_type: "GTC", expiration: "0" });
    expect(placed.ok).toBe(true);
    const b0 = (await requests())["GET /book"] ?? 0;
    await until("the new best bid in the service", async () => (await best()) === better);
    expect((await requests())["GET /book"] ?? 0).toBe(b0);

    // The stream drops and cannot reconnect: the books are stale, the service reads GET /book.
    expect((await post("/_sim/faults", { ws_refuse_ratio: 1 })).status).toBe(200);
    await post("/_sim/ws/drop", { channel: "market" });
    await until("stale", () => !venue.marketChannel!.isSynced(TOKEN));
    if (placed.ok) await venue.cancelOrder({ venue_order_id: placed.venue_order_id, credentials: maker });
    expect(await best()).toBe(was); // from GET /book: the cancel is seen although no stream carried it
    expect((await requests())["GET /book"] ?? 0).toBeGreaterThan(b0);
    // It reconnects: fresh snapshot, no more GET /book.
    expect((await post("/_sim/faults", { ws_refuse_ratio: 0 })).status).toBe(200);
    await until("resynced", () => venue.marketChannel!.isSynced(TOKEN));
    const b1 = (await requests())["GET /book"] ?? 0;
    expect(await best()).toBe(was);
    expect((await requests())["GET /book"] ?? 0).toBe(b1);
  });
});
