/**
 * Issue 23: a request that loses its agent's lease midway, after its order was posted to the venue.
 * The agent is taken over (its lease's epoch moves on, as another instance's take-over of a lapsed
 * lease does) while the venue's answer to a delegated intent is on its way: on PostgreSQL the order's
 * next write is refused (the fence) and the request answers 503 agent_busy. Its Idempotency-Key must
 * not be released: the retry with the same key answers that one order (the reserved id), and nothing
 * is posted twice. On PGlite (one process, writes not fenced) the same take-over changes nothing the
 * request sees; the retry replays its answer: one order, one post, on both.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import markets from "../../fixtures/markets.json" with { type: "json" };
import type { Database } from "../../src/db/database.ts";
import { ClobVenue } from "../../src/venues/clob/clob-venue.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";

const SIGNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const MARKET = (markets as any[]).find((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
const TOKEN: string = MARKET.tokens[0].token_id;
const PRICE = Math.round((Number(MARKET.tokens[0].book.bids[0].price) - 0.01) * 100) / 100;
const LIMITS = { daily_volume_usdc: 100_000, capital_usdc: 100_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600 };

describeEachDatabase("an Idempotency-Key across a lease lost midway", (kind, open) => {
  let sim: VenueSim;
  let t: TestApp;
  let database: Database;
  /** The agent whose lease is taken over as soon as the venue has its order (before the answer is read). */
  let takeOverOnPost: string | null = null;

  const fetchThenTakeOver = (async (input: any, init?: any) => {
    const res = await fetch(input, init);
    if (takeOverOnPost && init?.method === "POST" && String(input).endsWith("/order")) {
      // Another instance took the agent over once its lease lapsed: a new epoch, lapsed again at once
      // (so the retry below takes it back here without waiting).
      await database.db.execute(
        sql`update agent_leases set owner = 'another-instance', epoch = epoch + 1, expires_at = clock_timestamp() where agent_id = ${takeOverOnPost}`,
      );
      takeOverOnPost = null;
    }
    return res;
  }) as typeof fetch;

  beforeAll(async () => {
    database = await open();
    sim = startVenueSim({ port: 0, hostname: "127.0.0.1" });
    t = await createTestApp(database, { venue: new ClobVenue({ baseUrl: sim.url, timeoutMs: 3000, fetch: fetchThenTakeOver }) });
  });
  afterAll(async () => {
    await t?.app.stop();
    await sim?.stop();
  });

  test("the order posted before the loss is the key's one outcome: the retry answers it, nothing is posted twice", async () => {
    const { key, agent } = await t.newAgent({ body: { signer_address: SIGNER } });
    expect((await t.call("PATCH", `/v1/agents/${agent.id}/limits`, { key, body: LIMITS })).status).toBe(200);
    const c = { api_key: crypto.randomUUID(), api_secret: randomBytes(32).toString("base64url"), passphrase: randomBytes(16).toString("hex") };
    await fetch(`${sim.url}/_sim/credentials`, { method: "POST", body: JSON.stringify({ ...c, address: SIGNER, scopes: ["order:place", "order:cancel"] }) });
    expect((await t.call("POST", `/v1/agents/${agent.id}/creds`, { key, body: { ...c, scopes: ["order:place", "order:cancel"] } })).status).toBe(200);

    const body = { agent_id: agent.id, market_id: TOKEN, side: "buy", size_usdc: 5, price: PRICE };
    const headers = { "idempotency-key": `lease-lost-${kind}` };
    takeOverOnPost = agent.id;
    const first = await t.call("POST", "/v1/orders/intent", { key, body, headers });
    expect(takeOverOnPost).toBeNull();
    if (kind === "postgres") {
      // The order's write after the venue's answer was refused: 503, the key left interrupted (not released).
      expect({ status: first.status, code: first.body.code }).toEqual({ status: 503, code: "agent_busy" });
      expect(first.body.detail).toContain("same Idempotency-Key");
      expect((await rowsOf(database, sql`select status from idempotency_keys where key = ${headers["idempotency-key"]}`)).map((r) => Number(r.status))).toEqual([-1]);
      expect(t.logs.some((l) => l.includes("lease lost") && l.includes(agent.id))).toBe(true);
    } else {
      expect(first.status).toBe(201);
    }

    const retry = await t.call("POST", "/v1/orders/intent", { key, body, headers });
    const again = await t.call("POST", "/v1/orders/intent", { key, body, headers });
    const orders = (await t.call("GET", `/v1/orders?agent_id=${agent.id}`, { key })).body.data as { id: string; order_hash: string }[];
    expect(orders.length).toBe(1);
    expect({ retry: retry.status, again: again.status }).toEqual({ retry: 201, again: 201 });
    expect(retry.body.order_id).toBe(orders[0].id);
    expect(again.body.order_id).toBe(orders[0].id);
    if (kind !== "postgres") expect(first.body.order_id).toBe(orders[0].id);
    expect(sim.state.stats().posts[orders[0].order_hash]).toBe(1);
    expect(Object.values(sim.state.stats().posts).reduce((a, b) => a + b, 0)).toBe(1);
  }, 30_000);
});
