/**
 * Issue 15.1: an Idempotency-Key whose request was in flight when the process died. After the
 * restart (`interruptInFlight`, as main.ts runs it before serving), the retry gets the original
 * outcome when the request had stored its resource, and otherwise runs once, creating the resource
 * under the id reserved with the key. Never a 409 for a day, never a second order.
 *
 * The crash is reproduced on the database: the request ran to its end, then its record is put back
 * to "in progress" with no stored answer (what a crash after the order's insert leaves), and, for
 * the "crashed before the insert" case, the order row is deleted too. The real SIGKILL runs are in
 * test/faults/crash.test.ts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { privateKeyToAccount } from "viem/accounts";
import markets from "../../fixtures/markets.json" with { type: "json" };
import type { Database } from "../../src/db/database.ts";
import { agents, idempotencyKeys, orders, riskDecisions } from "../../src/db/schema.ts";
import { ADMIN_TOKEN, createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";

const ACCOUNT = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
const MARKET = (markets as any[]).find((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
const TOKEN: string = MARKET.tokens[0].token_id;
const PRICE = Math.round((Number(MARKET.tokens[0].book.bids[0].price) - 0.01) * 100) / 100;
const LIMITS = { daily_volume_usdc: 100_000, capital_usdc: 100_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600 };

describeEachDatabase("Idempotency-Key records interrupted by a crash", (_kind, getDatabase) => {
  let database: Database;
  let t: TestApp;
  let key: string;
  let agentId: string;

  beforeAll(async () => {
    database = await getDatabase();
    t = await createTestApp(database);
    const made = await t.newAgent({ body: { wallet_address: ACCOUNT.address, limits: LIMITS } });
    key = made.key;
    agentId = made.agent.id;
  });
  afterAll(async () => {
    await t.app.stop();
  });

  const post = (path: string, body: unknown, idem: string) => t.call("POST", path, { key, body, headers: { "idempotency-key": idem } });
  const intent = (idem: string, size = 5) => post("/v1/orders/intent", { market_id: TOKEN, side: "buy", size_usdc: size, price: PRICE, agent_id: agentId }, idem);

  /** What a crash in the middle of the request leaves: its record in progress, no answer stored. Then the restart. */
  async function crashAndRestart(idem: string) {
    const put = await database.db.update(idempotencyKeys).set({ status: 0, body: "", contentType: "" }).where(eq(idempotencyKeys.key, idem)).returning();
    expect(put).toHaveLength(1);
    // Before the restart the retry is told it is still in progress.
    return async () => expect(await t.app.services.idempotency.interruptInFlight()).toBeGreaterThanOrEqual(1);
  }
  const ordersOf = async () => (await database.db.select({ n: sql<number>`count(*)::int` }).from(orders).where(eq(orders.agentId, agentId)))[0]!.n;

  test("intent stored before the crash: the retry answers the original 201 (same body), no second order", async () => {
    const idem = `intent-${crypto.randomUUID()}`;
    const first = await intent(idem);
    expect(first.status).toBe(201);
    const count = await ordersOf();
    const restart = await crashAndRestart(idem);
    const during = await intent(idem);
    expect(during.status).toBe(409);
    await restart();
    const retry = await intent(idem);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(await ordersOf()).toBe(count);
    // And from now on it is an ordinary replay.
    const again = await intent(idem);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
  });

  test("order halted by a kill before it was sent (stored rejected): the retry answers 409 invalid_state naming it, no second order", async () => {
    const idem = `intent-${crypto.randomUUID()}`;
    const first = await intent(idem, 7);
    expect(first.status).toBe(201);
    const orderId = first.body.order_id as string;
    // What the actor stores when a kill trips the breaker between the approval and the send.
    await database.db.update(orders).set({ status: "rejected" }).where(eq(orders.id, orderId));
    const count = await ordersOf();
    const restart = await crashAndRestart(idem);
    await restart();
    const retry = await intent(idem, 7);
    expect(retry.status).toBe(409);
    expect(retry.body).toMatchObject({ code: "invalid_state", order_id: orderId });
    expect(retry.headers.get("content-type")).toStartWith("application/problem+json");
    expect(await ordersOf()).toBe(count);
    await database.db.update(orders).set({ status: "cancelled" }).where(eq(orders.id, orderId));
  });

  test("crash before the order was stored: the retry runs once, under the reserved id", async () => {
    const idem = `intent-${crypto.randomUUID()}`;
    const first = await intent(idem, 6);
    expect(first.status).toBe(201);
    const orderId = first.body.order_id as string;
    const [record] = await database.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, idem));
    expect(orderId).toBe(`ord_${record!.reservedId}`);
    const restart = await crashAndRestart(idem);
    await database.db.delete(riskDecisions).where(eq(riskDecisions.orderId, orderId));
    await database.db.delete(orders).where(eq(orders.id, orderId));
    // The reservation the lost order held is gone with the process: a fresh app is the restart.
    await t.app.stop();
    t = await createTestApp(database);
    await restart();
    const count = await ordersOf();
    const [retry, twin] = await Promise.all([intent(idem, 6), intent(idem, 6)]);
    const ran = [retry, twin].find((r) => r.status === 201)!;
    expect(ran.body.order_id).toBe(orderId);
    // The concurrent twin is told it is in progress, or replays the answer: never a second run.
    const other = ran === retry ? twin : retry;
    expect([201, 409]).toContain(other.status);
    if (other.status === 201) expect(other.body.order_id).toBe(orderId);
    expect(await ordersOf()).toBe(count + 1);
    const replay = await intent(idem, 6);
    expect(replay.body.order_id).toBe(orderId);
  });

  test("submit-signed sent before the crash: the retry answers the order as it is, the venue got it once", async () => {
    const made = await intent(`intent-${crypto.randomUUID()}`, 7);
    expect(made.status).toBe(201);
    const signature = await ACCOUNT.signTypedData(made.body.unsigned_order);
    const idem = `submit-${crypto.randomUUID()}`;
    const body = { order_id: made.body.order_id, signature };
    const first = await post("/v1/orders/submit-signed", body, idem);
    expect(first.status).toBe(200);
    const restart = await crashAndRestart(idem);
    await restart();
    const retry = await post("/v1/orders/submit-signed", body, idem);
    expect(retry.status).toBe(200);
    expect(retry.body.order_id).toBe(first.body.order_id);
    expect(retry.body.status).toBe(first.body.status);
    expect(retry.body.venue_order_id).toBe(first.body.venue_order_id);
    const [row] = await database.db.select().from(orders).where(eq(orders.id, made.body.order_id));
    expect(row!.history.filter((h: { status: string }) => h.status === "submitting")).toHaveLength(1);
  });

  test("agent creation: stored → the same agent; not stored → created once under the reserved id", async () => {
    const idem = `agent-${crypto.randomUUID()}`;
    const body = { name: "interrupted", wallet_address: ACCOUNT.address };
    const first = await post("/v1/agents", body, idem);
    expect(first.status).toBe(201);
    await (await crashAndRestart(idem))();
    const retry = await post("/v1/agents", body, idem);
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(first.body.id);

    const idem2 = `agent-${crypto.randomUUID()}`;
    const made = await post("/v1/agents", body, idem2);
    const restart = await crashAndRestart(idem2);
    await database.db.delete(agents).where(eq(agents.id, made.body.id));
    await t.app.stop();
    t = await createTestApp(database);
    await restart();
    const rerun = await post("/v1/agents", body, idem2);
    expect(rerun.status).toBe(201);
    expect(rerun.body.id).toBe(made.body.id);
  });

  test("organization and API key: the lost key, never seen, is revoked; the retry gets a key that works", async () => {
    const idem = `org-${crypto.randomUUID()}`;
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, "idempotency-key": idem };
    const first = await t.call("POST", "/v1/orgs", { body: { name: "interrupted org" }, headers: admin });
    expect(first.status).toBe(201);
    await (await crashAndRestart(idem))();
    const retry = await t.call("POST", "/v1/orgs", { body: { name: "interrupted org" }, headers: admin });
    expect(retry.status).toBe(201);
    expect(retry.body.org.id).toBe(first.body.org.id);
    expect(retry.body.api_key.id).not.toBe(first.body.api_key.id);
    expect((await t.call("GET", "/v1/api-keys", { key: retry.body.api_key.key })).status).toBe(200);
    expect((await t.call("GET", "/v1/api-keys", { key: first.body.api_key.key })).status).toBe(401);
    const again = await t.call("POST", "/v1/orgs", { body: { name: "interrupted org" }, headers: admin });
    expect(again.body).toEqual(retry.body);

    const kidem = `key-${crypto.randomUUID()}`;
    const issued = await post("/v1/api-keys", { name: "lost" }, kidem);
    expect(issued.status).toBe(201);
    await (await crashAndRestart(kidem))();
    const reissued = await post("/v1/api-keys", { name: "lost" }, kidem);
    expect(reissued.status).toBe(201);
    expect(reissued.body.id).not.toBe(issued.body.id);
    expect((await t.call("GET", "/v1/api-keys", { key: reissued.body.key })).status).toBe(200);
    expect((await t.call("GET", "/v1/api-keys", { key: issued.body.key })).status).toBe(401);
  });

  test("a route without a resource of its own runs again; a different body is still a conflict", async () => {
    const idem = `breaker-${crypto.randomUUID()}`;
    const first = await post(`/v1/agents/${agentId}/breaker`, {}, idem);
    expect(first.status).toBe(200);
    const restart = await crashAndRestart(idem);
    await restart();
    expect((await post(`/v1/agents/${agentId}/breaker`, { other: 1 }, idem)).status).toBe(409);
    const retry = await post(`/v1/agents/${agentId}/breaker`, {}, idem);
    expect(retry.status).toBe(200);
    expect(retry.body.breaker.state).toBe("tripped");
    expect((await post(`/v1/agents/${agentId}/resume`, {}, `resume-${crypto.randomUUID()}`)).status).toBe(200);
  });
});
