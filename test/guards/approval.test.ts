/**
 * Human approval above a threshold (docs/api.md#approval-above-a-threshold), over HTTP with a fake
 * clock: 202 pending_approval with its reservation, who may decide (403 for agent-scoped keys, 404
 * for other organizations), approve in payload mode (then signed with viem and submitted) and in
 * delegated mode (placed), reject, expiry after APPROVAL_TTL_S through the sweep, the decision in
 * the history, the kill switch, and approval racing expiry at the same instant. PGlite, and
 * PostgreSQL when TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { DEM_YES, expectProblem, getAgent, getOrder, newTrader, patchLimits, postIntent, sign, submitSigned, type Trader } from "../support/payload.ts";
import { type FakeClock, fakeClock, guardApp, scopedKey } from "./guard-app.ts";

const BUY = { market_id: DEM_YES, side: "buy", size_usdc: 15, price: 0.47 };
const TTL_S = 60;

describeEachDatabase("approval above a threshold", (_kind, database) => {
  let t: TestApp;
  let clock: FakeClock;
  beforeAll(async () => {
    clock = fakeClock();
    ({ t } = await guardApp(await database(), clock, { approvalTtlS: TTL_S }));
  });
  afterAll(() => t?.app.stop());

  async function approver(): Promise<Trader> {
    const tr = await newTrader(t);
    await patchLimits(t, tr, { approval_threshold_usdc: 10, duplicate_window_s: 0 });
    return tr;
  }
  const approve = (key: string, id: string, body?: unknown) => t.call("POST", `/v1/orders/${id}/approve`, { key, body });
  const reject = (key: string, id: string, body?: unknown) => t.call("POST", `/v1/orders/${id}/reject`, { key, body });
  const used = async (tr: Trader) => (await getAgent(t, tr)).daily_volume.used_usdc;

  test("at or below the threshold an intent is placed as usual; above it, 202 pending_approval with its limits reserved", async () => {
    const tr = await approver();
    expect((await postIntent(t, tr, { ...BUY, size_usdc: 10 })).status).toBe(201);
    const before = await getAgent(t, tr);
    const res = await postIntent(t, tr, BUY);
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(["agent_id", "approval_deadline", "decision_id", "mode", "order_hash", "order_id", "risk", "status"]);
    expect(res.body).toMatchObject({ agent_id: tr.agent.id, mode: "payload", status: "pending_approval" });
    expect(res.body.approval_deadline).toBe(new Date(clock.now() + TTL_S * 1000).toISOString());
    expect(res.body.risk.approved).toBe(true);
    expect(res.body.risk.checks).toHaveLength(8);
    const after = await getAgent(t, tr);
    expect(after.open_orders).toBe(before.open_orders + 1);
    expect(after.daily_volume.used_usdc).toBeCloseTo(before.daily_volume.used_usdc + 14.9977, 6);
    const order = await getOrder(t, tr.key, res.body.order_id);
    expect(order.status).toBe("pending_approval");
    expect(order.history).toEqual([{ status: "pending_approval", at: order.created_at, reason: expect.stringContaining("approval_threshold_usdc") }]);
    const listed = await t.call("GET", `/v1/orders?agent_id=${tr.agent.id}&status=pending_approval`, { key: tr.key });
    expect(listed.body.data.map((o: any) => o.id)).toEqual([res.body.order_id]);
    // The agent cannot sign what is not approved yet.
    expectProblem(await submitSigned(t, tr.key, res.body.order_id, `0x${"11".repeat(65)}`), 409, "invalid_state");
  });

  test("only an organization key not scoped to an agent decides: scoped keys 403, other organizations 404", async () => {
    const tr = await approver();
    const pending = (await postIntent(t, tr, BUY)).body.order_id;
    const own = await scopedKey(t, tr.key, tr.agent.id);
    expectProblem(await approve(own, pending), 403, "forbidden");
    expectProblem(await reject(own, pending), 403, "forbidden");
    const other = await newTrader(t);
    expectProblem(await approve(other.key, pending), 404, "not_found");
    expectProblem(await reject(other.key, pending), 404, "not_found");
    expect((await getOrder(t, tr.key, pending)).status).toBe("pending_approval");
    expectProblem(await approve(tr.key, "ord_00000000000000000000"), 404, "not_found");
    expect((await approve(tr.key, "not-an-id")).status).toBe(400);
    expect((await approve(tr.key, pending, { reason: "ok", extra: 1 })).status).toBe(400);
  });

  test("approve (payload): awaiting its signature from now, the unsigned order in the answer; signed and submitted it opens", async () => {
    const tr = await approver();
    const pending = await postIntent(t, tr, BUY);
    clock.advance(30_000);
    const res = await approve(tr.key, pending.body.order_id, { reason: "size checked" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ order_id: pending.body.order_id, status: "awaiting_signature", mode: "payload", order_hash: pending.body.order_hash });
    expect(res.body.signature_deadline).toBe(new Date(clock.now() + 300_000).toISOString());
    expect(res.body.unsigned_order.primaryType).toBe("Order");
    const keyId = (await t.call("GET", "/v1/api-keys", { key: tr.key })).body.data.find((k: any) => k.agent_id === null).id;
    expect(res.body.order.history.at(-1)).toEqual({
      status: "awaiting_signature",
      at: new Date(clock.now()).toISOString(),
      reason: `approved by ${keyId}: size checked`,
      by: keyId,
    });
    // A second decision is refused.
    expectProblem(await approve(tr.key, pending.body.order_id), 409, "invalid_state");
    expectProblem(await reject(tr.key, pending.body.order_id), 409, "invalid_state");
    const signature = await sign(tr.account, res.body.unsigned_order);
    const submitted = await submitSigned(t, tr.key, pending.body.order_id, signature);
    expect(submitted.status).toBe(200);
    expect(submitted.body.status).toBe("open");
    expect(submitted.body.venue_order_id).toBe(pending.body.order_hash);
  });

  test("approve (payload): the agent, who never saw the approver's answer, fetches the order to sign from GET /v1/orders/{id}", async () => {
    const tr = await approver();
    const pending = await postIntent(t, tr, BUY);
    const before = await t.call("GET", `/v1/orders/${pending.body.order_id}`, { key: tr.key });
    expect(before.body.status).toBe("pending_approval");
    expect(before.body.unsigned_order).toBeUndefined(); // nothing to sign before a person approves
    const approved = await approve(tr.key, pending.body.order_id);
    expect(approved.status).toBe(200);
    const fetched = await t.call("GET", `/v1/orders/${pending.body.order_id}`, { key: tr.key });
    expect(fetched.status).toBe(200);
    expect(fetched.body.status).toBe("awaiting_signature");
    expect(fetched.body.unsigned_order).toEqual(approved.body.unsigned_order);
    expect(fetched.body.signature_deadline).toBe(approved.body.signature_deadline);
    const submitted = await submitSigned(t, tr.key, pending.body.order_id, await sign(tr.account, fetched.body.unsigned_order));
    expect(submitted.status).toBe(200);
    expect(submitted.body.status).toBe("open");
    // Once signed, the order no longer carries what to sign.
    const after = await t.call("GET", `/v1/orders/${pending.body.order_id}`, { key: tr.key });
    expect(after.body.status).toBe("open");
    expect(after.body.unsigned_order).toBeUndefined();
  });

  test("approve (delegated): the order is placed at the venue", async () => {
    const tr = await approver();
    const creds = await t.call("POST", `/v1/agents/${tr.agent.id}/creds`, {
      key: tr.key,
      body: { api_key: "k-ap", api_secret: "s-ap", passphrase: "p-ap", scopes: ["order:place", "order:cancel"] },
    });
    expect(creds.status).toBe(200);
    const pending = await postIntent(t, tr, BUY);
    expect(pending.status).toBe(202);
    expect(pending.body.mode).toBe("delegated");
    expect(await t.app.services.venue.getOrder({ venue_order_id: pending.body.order_hash })).toBeNull();
    const res = await approve(tr.key, pending.body.order_id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "open", mode: "delegated", venue_order_id: pending.body.order_hash });
    expect(res.body.unsigned_order).toBeUndefined();
    expect(res.body.order.history.map((h: any) => h.status)).toEqual(["pending_approval", "submitting", "open"]);
    expect((await t.app.services.venue.getOrder({ venue_order_id: pending.body.order_hash }))?.status).toBe("live");
  });

  test("reject: rejected, reservation released, the decision recorded", async () => {
    const tr = await approver();
    const before = await used(tr);
    const pending = await postIntent(t, tr, BUY);
    expect(await used(tr)).toBeGreaterThan(before);
    const res = await reject(tr.key, pending.body.order_id, { reason: "too large for today" });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("rejected");
    expect(res.body.history.at(-1)).toMatchObject({ status: "rejected", reason: expect.stringMatching(/^rejected by key_[0-9a-z]{20}: too large for today$/) });
    expect(res.body.history.at(-1).by).toMatch(/^key_/);
    expect(await used(tr)).toBe(before);
    expect((await getAgent(t, tr)).open_orders).toBe(0);
    expectProblem(await approve(tr.key, pending.body.order_id), 409, "invalid_state");
  });

  test("expiry after APPROVAL_TTL_S through the sweep releases the reservation; a later approval is 410", async () => {
    const tr = await approver();
    const before = await used(tr);
    const pending = await postIntent(t, tr, BUY);
    const deadline = Date.parse(pending.body.approval_deadline);
    clock.t = deadline - 1;
    await t.app.services.orders.expireDue(new Date(clock.now()));
    expect((await getOrder(t, tr.key, pending.body.order_id)).status).toBe("pending_approval");
    clock.t = deadline + 1;
    expectProblem(await approve(tr.key, pending.body.order_id), 410, "order_expired");
    const expired = await getOrder(t, tr.key, pending.body.order_id);
    expect(expired.status).toBe("expired");
    expect(expired.history.at(-1).reason).toContain("approval deadline");
    expect(await used(tr)).toBe(before);

    const second = await postIntent(t, tr, BUY);
    clock.t = Date.parse(second.body.approval_deadline);
    expect(await t.app.services.orders.expireDue(new Date(clock.now()))).toBeGreaterThanOrEqual(1);
    expect((await getOrder(t, tr.key, second.body.order_id)).status).toBe("expired");
    expect(await used(tr)).toBe(before);
  });

  test("the kill switch cancels orders pending approval; a halted agent's order is not approved", async () => {
    const tr = await approver();
    const a = await postIntent(t, tr, BUY);
    await t.call("POST", `/v1/agents/${tr.agent.id}/breaker`, { key: tr.key });
    expectProblem(await approve(tr.key, a.body.order_id), 409, "invalid_state");
    await t.call("POST", `/v1/agents/${tr.agent.id}/resume`, { key: tr.key });
    const killed = await t.call("POST", `/v1/agents/${tr.agent.id}/kill`, { key: tr.key });
    expect(killed.body.cancelled).toEqual([a.body.order_id]);
    expect((await getOrder(t, tr.key, a.body.order_id)).status).toBe("cancelled");
    expect(killed.body.agent.daily_volume.used_usdc).toBe(0);
  });

  test("DELETE cancels an order pending approval", async () => {
    const tr = await approver();
    const a = await postIntent(t, tr, BUY);
    const res = await t.call("DELETE", `/v1/orders/${a.body.order_id}`, { key: tr.key });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("cancelled");
    expect(await used(tr)).toBe(0);
  });

  test("approve vs expiry at the same instant: exactly one wins, and the reservation matches the winner", async () => {
    // The rounds move the clock by TTL_S each (12 minutes in all), and the daily volume is per UTC day:
    // started within an hour of midnight, they begin at 01:00 the next day instead.
    const DAY_MS = 86_400_000;
    if (DAY_MS - (clock.now() % DAY_MS) < 3_600_000) clock.t = Math.ceil(clock.now() / DAY_MS) * DAY_MS + 3_600_000;
    const tr = await approver();
    const outcomes: string[] = [];
    for (let i = 0; i < 12; i++) {
      const pending = await postIntent(t, tr, BUY);
      expect(pending.status).toBe(202);
      const id = pending.body.order_id;
      // The approval deadline itself: an approval is still accepted and the sweep already expires.
      clock.t = Date.parse(pending.body.approval_deadline);
      const sweep = () => t.app.services.orders.expireDue(new Date(clock.now()));
      let approved: { status: number };
      if (i % 4 === 0) {
        approved = await approve(tr.key, id); // the approval first
        await sweep();
      } else if (i % 4 === 1) {
        await sweep(); // the expiry first
        approved = await approve(tr.key, id);
      } else if (i % 4 === 2) {
        [approved] = await Promise.all([approve(tr.key, id), sweep()]);
      } else {
        [, approved] = await Promise.all([sweep(), approve(tr.key, id)]);
      }
      const order = await getOrder(t, tr.key, id);
      // Exactly one winner: approved (200, awaiting its signature) or expired (the approval 410).
      const won = approved.status === 200 ? "approve" : "expiry";
      expect({ i, won, approve: approved.status, status: order.status }).toEqual(
        won === "approve" ? { i, won, approve: 200, status: "awaiting_signature" } : { i, won, approve: 410, status: "expired" },
      );
      // One decision in the history: pending, then the winner's entry only.
      expect({ i, history: order.history.map((h: any) => h.status) }).toEqual({ i, history: ["pending_approval", order.status] });
      outcomes.push(won);
      // The reservation in the actor is exactly the notional of the agent's reserved orders in the database.
      const reserved = (await t.call("GET", `/v1/orders?agent_id=${tr.agent.id}&limit=200`, { key: tr.key })).body.data.filter((o: any) =>
        ["pending_approval", "awaiting_signature"].includes(o.status),
      );
      const agent = await getAgent(t, tr);
      expect({ i, open: agent.open_orders }).toEqual({ i, open: reserved.length });
      expect(agent.daily_volume.used_usdc).toBeCloseTo(reserved.length * 14.9977, 6);
      clock.advance(1);
    }
    expect(outcomes.slice(0, 2)).toEqual(["approve", "expiry"]);
    // A service started afresh on the same rows holds the same reservation.
    const { t: t2 } = await guardApp(await database(), clock, { approvalTtlS: TTL_S });
    try {
      const fresh = (await t2.call("GET", `/v1/agents/${tr.agent.id}`, { key: tr.key })).body;
      const current = await getAgent(t, tr);
      expect(fresh.open_orders).toBe(current.open_orders);
      expect(fresh.daily_volume.used_usdc).toBe(current.daily_volume.used_usdc);
    } finally {
      await t2.app.stop();
    }
  });
});
