/**
 * The public routes the dashboard reads, which an API user can call too: risk decisions (with every
 * failed check), the chart summary, an agent's exposure per market, and the API keys' last use;
 * and the page itself: its security headers and that everything it loads is served by the service.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { Database } from "../../src/db/database.ts";
import { orders, riskDecisions } from "../../src/db/schema.ts";
import { ASSETS, PAGE } from "../../src/modules/dashboard/assets.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { approved, BTC_YES, DEM_NO, DEM_YES, expectChecks, expectInvalid, expectProblem, getAgent, newTrader, postIntent, type Trader } from "../support/payload.ts";

describeEachDatabase("dashboard routes", (_kind, database) => {
  let t: TestApp;
  let a: Trader;
  let b: Trader;
  let stranger: Trader;
  let rejectionId: string;

  let db: Database;

  beforeAll(async () => {
    db = await database();
    t = await createTestApp(db);
    a = await newTrader(t);
    b = await newTrader(t, { key: a.key });
    stranger = await newTrader(t);
    await approved(t, a, { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5 });
    await approved(t, a, { market_id: DEM_NO, side: "buy", size_usdc: 5.2, price: 0.52 });
    await approved(t, b, { market_id: BTC_YES, side: "buy", size_usdc: 3, price: 0.31 });
    const rejected = await postIntent(t, a, { market_id: DEM_YES, side: "buy", size_usdc: 500, price: 0.5 });
    expect(rejected.status).toBe(422);
    rejectionId = rejected.body.decision_id;
  });

  test("GET /v1/risk/decisions lists the organization's decisions, newest first; approved=false gives rejections with every failure", async () => {
    const all = await t.call("GET", "/v1/risk/decisions", { key: a.key });
    expect(all.status).toBe(200);
    expect(all.body.data.length).toBe(4);
    expect(all.body.data[0].id).toBe(rejectionId);
    const times = all.body.data.map((d: any) => d.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    const approvedOnes = all.body.data.filter((d: any) => d.approved);
    expect(approvedOnes.length).toBe(3);
    for (const d of approvedOnes) {
      expect(d.order_id).toMatch(/^ord_/);
      expect(d.failures).toEqual([]);
    }

    const rejections = await t.call("GET", "/v1/risk/decisions?approved=false", { key: a.key });
    expect(rejections.body.data.length).toBe(1);
    const r = rejections.body.data[0];
    expect(r).toMatchObject({ id: rejectionId, agent_id: a.agent.id, approved: false, order_id: null });
    expect(r.intent).toMatchObject({ market_id: DEM_YES, side: "buy", size_usdc: 500, price: 0.5, agent_id: a.agent.id });
    const failing = r.failures.map((f: any) => f.check);
    expect(failing).toContain("order_size");
    expectChecks(r.checks, [...new Set<string>(failing)]);
    const size = r.failures.find((f: any) => f.code === "order_too_large");
    expect(size).toMatchObject({ limit: 100, actual: 500 });
    expect(typeof size.message).toBe("string");

    expect((await t.call("GET", `/v1/risk/decisions?agent_id=${b.agent.id}`, { key: a.key })).body.data.length).toBe(1);
    expect((await t.call("GET", "/v1/risk/decisions?approved=true", { key: a.key })).body.data.length).toBe(3);
  });

  test("decisions page with limit and cursor, stay inside the organization, and follow an agent-scoped key", async () => {
    const first = await t.call("GET", "/v1/risk/decisions?limit=3", { key: a.key });
    expect(first.body.data.length).toBe(3);
    expect(first.body.next_cursor).toBeString();
    const second = await t.call("GET", `/v1/risk/decisions?limit=3&cursor=${first.body.next_cursor}`, { key: a.key });
    expect(second.body.data.length).toBe(1);
    expect(second.body.next_cursor).toBeNull();
    expect(new Set([...first.body.data, ...second.body.data].map((d: any) => d.id)).size).toBe(4);

    // Another organization sees none of them, even naming the agent.
    expect((await t.call("GET", `/v1/risk/decisions?agent_id=${a.agent.id}`, { key: stranger.key })).body.data).toEqual([]);
    // A key scoped to agent b sees b's decisions only, whatever it asks for.
    const scoped = await t.call("POST", "/v1/api-keys", { key: a.key, body: { agent_id: b.agent.id } });
    const own = await t.call("GET", "/v1/risk/decisions", { key: scoped.body.key });
    expect(own.body.data.map((d: any) => d.agent_id)).toEqual([b.agent.id]);
    expect((await t.call("GET", `/v1/risk/decisions?agent_id=${a.agent.id}`, { key: scoped.body.key })).body.data).toEqual([]);
  });

  test("approvals (kept on the order rows) and rejections page as one list at every page size, and an approval stored as a risk_decisions row (before decision_intent) is listed once", async () => {
    const all = (await t.call("GET", "/v1/risk/decisions", { key: a.key })).body.data;
    expect(all.length).toBe(4);
    // Newest first, ties by id descending: the keyset the cursor walks.
    const sorted = [...all].sort((x: any, y: any) => (x.created_at === y.created_at ? (x.id < y.id ? 1 : -1) : x.created_at < y.created_at ? 1 : -1));
    expect(all).toEqual(sorted);
    for (const limit of [1, 2]) {
      const walked: any[] = [];
      let cursor: string | null = null;
      do {
        const page: any = await t.call("GET", `/v1/risk/decisions?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`, { key: a.key });
        walked.push(...page.body.data);
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(walked).toEqual(all);
    }
    // An approval written the old way: a risk_decisions row, its order without decision_intent.
    const old = all.find((d: any) => d.approved && d.agent_id === b.agent.id);
    const [order] = await db.db.select().from(orders).where(eq(orders.id, old.order_id));
    await db.db.update(orders).set({ decisionIntent: null }).where(eq(orders.id, old.order_id));
    await db.db.insert(riskDecisions).values({
      id: old.id,
      orgId: order.orgId,
      agentId: old.agent_id,
      approved: true,
      intent: old.intent,
      failures: [],
      checks: [],
      orderId: old.order_id,
      createdAt: order.createdAt,
    });
    try {
      expect((await t.call("GET", "/v1/risk/decisions", { key: a.key })).body.data).toEqual(all);
      const summary = (await t.call("GET", "/v1/risk/summary?hours=3", { key: a.key })).body.intents;
      expect(summary.reduce((s: number, h: any) => s + h.approved, 0)).toBe(3);
    } finally {
      await db.db.delete(riskDecisions).where(eq(riskDecisions.id, old.id));
      await db.db.update(orders).set({ decisionIntent: order.decisionIntent }).where(eq(orders.id, old.order_id));
    }
  });

  test("bad queries are 400 problems, a missing key 401", async () => {
    expectInvalid(await t.call("GET", "/v1/risk/decisions?approved=maybe", { key: a.key }), "/query/approved");
    expectInvalid(await t.call("GET", "/v1/risk/decisions?limit=0", { key: a.key }), "/query/limit");
    expectInvalid(await t.call("GET", "/v1/risk/decisions?agent_id=nope", { key: a.key }), "/query/agent_id");
    expectInvalid(await t.call("GET", "/v1/risk/decisions?surprise=1", { key: a.key }), "/query/surprise");
    expectProblem(await t.call("GET", "/v1/risk/decisions?cursor=abc", { key: a.key }), 400, "invalid_request");
    expectInvalid(await t.call("GET", "/v1/risk/summary?hours=0", { key: a.key }), "/query/hours");
    expectInvalid(await t.call("GET", "/v1/risk/summary?days=32", { key: a.key }), "/query/days");
    expectProblem(await t.call("GET", "/v1/risk/decisions"), 401, "unauthenticated");
    expectProblem(await t.call("GET", "/v1/risk/summary"), 401, "unauthenticated");
    expectProblem(await t.call("GET", `/v1/agents/${a.agent.id}/exposure`), 401, "unauthenticated");
  });

  test("GET /v1/risk/summary counts intents per hour and daily volume per agent as the agents count it", async () => {
    const res = await t.call("GET", "/v1/risk/summary?hours=3&days=2", { key: a.key });
    expect(res.status).toBe(200);
    expect(res.body.intents.length).toBe(3);
    const hours = res.body.intents.map((b: any) => Date.parse(b.at));
    expect(hours[1] - hours[0]).toBe(3_600_000);
    expect(hours[2]).toBeLessThanOrEqual(Date.now());
    expect(Date.now() - hours[2]).toBeLessThan(3_600_000);
    const totals = res.body.intents.reduce((s: any, b: any) => ({ a: s.a + b.approved, r: s.r + b.rejected }), { a: 0, r: 0 });
    expect(totals).toEqual({ a: 3, r: 1 });
    const today = new Date().toISOString().slice(0, 10);
    const volume = Object.fromEntries(res.body.daily_volume.filter((v: any) => v.day === today).map((v: any) => [v.agent_id, v.used_usdc]));
    expect(volume[a.agent.id]).toBe((await getAgent(t, a)).daily_volume.used_usdc);
    expect(volume[b.agent.id]).toBe((await getAgent(t, b)).daily_volume.used_usdc);
    expect(volume[a.agent.id]).toBe(10.2); // 5 + 5.2: both exact notionals
    // Another organization: zeros and nothing.
    const other = await t.call("GET", "/v1/risk/summary", { key: stranger.key });
    expect(other.body.intents.length).toBe(24);
    expect(other.body.intents.every((b: any) => b.approved === 0 && b.rejected === 0)).toBe(true);
    expect(other.body.daily_volume).toEqual([]);
  });

  test("GET /v1/agents/{id}/exposure: per market (both outcomes together), against the concentration limit", async () => {
    const res = await t.call("GET", `/v1/agents/${a.agent.id}/exposure`, { key: a.key });
    expect(res.status).toBe(200);
    expect(res.body.agent_id).toBe(a.agent.id);
    expect(res.body.limit_usdc).toBe(200); // 0.20 × 1000
    expect(res.body.data.length).toBe(1);
    expect(res.body.data[0].exposure_usdc).toBe(10.2);
    expect([...res.body.data[0].market_ids].sort()).toEqual([DEM_NO, DEM_YES].sort());
    expectProblem(await t.call("GET", `/v1/agents/${a.agent.id}/exposure`, { key: stranger.key }), 404, "not_found");
    const scoped = await t.call("POST", "/v1/api-keys", { key: a.key, body: { agent_id: b.agent.id } });
    expectProblem(await t.call("GET", `/v1/agents/${a.agent.id}/exposure`, { key: scoped.body.key }), 403, "forbidden");
    expect((await t.call("GET", `/v1/agents/${b.agent.id}/exposure`, { key: scoped.body.key })).body.data[0].exposure_usdc).toBe(2.9977); // 9.67 shares × 0.31
  });

  test("API keys list their last use: null until the key is used, then the time of that use", async () => {
    const issued = await t.call("POST", "/v1/api-keys", { key: a.key, body: { name: "fresh" } });
    const row = async () => (await t.call("GET", "/v1/api-keys", { key: a.key })).body.data.find((k: any) => k.id === issued.body.id);
    expect((await row()).last_used_at).toBeNull();
    const before = Date.now();
    expect((await t.call("GET", "/v1/agents", { key: issued.body.key })).status).toBe(200);
    const end = Date.now() + 3000;
    while ((await row()).last_used_at === null && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    const used = Date.parse((await row()).last_used_at);
    expect(used).toBeGreaterThanOrEqual(before - 5);
    expect(used).toBeLessThanOrEqual(Date.now());
  });
});

describe("GET /dashboard", () => {
  let t: TestApp;
  beforeAll(async () => {
    const { sharedPglite } = await import("../support/databases.ts");
    t = await createTestApp(await sharedPglite());
  });

  test("the page and its files are served without a key, with a strict Content-Security-Policy", async () => {
    for (const path of ["/dashboard", "/dashboard/app.js", "/dashboard/dashboard.css", "/dashboard/vendor/eventsource-parser/parse.js"]) {
      const res = await t.call("GET", path);
      expect(res.status).toBe(200);
      const csp = res.headers.get("content-security-policy")!;
      for (const directive of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"]) {
        expect(csp).toContain(directive);
      }
      expect(csp).not.toContain("unsafe");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
    }
    expect((await t.call("GET", "/dashboard")).headers.get("content-type")).toStartWith("text/html");
    expect((await t.call("GET", "/dashboard/app.js")).headers.get("content-type")).toStartWith("text/javascript");
    expectProblem(await t.call("GET", "/dashboard/missing.js"), 404, "not_found");
    expectProblem(await t.call("GET", "/dashboard/%2e%2e/src/app.ts"), 404, "not_found");
  });

  test("everything the page loads comes from the service: no inline code, no other origin, every import served", () => {
    const html = PAGE.body;
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style/);
    expect(html).not.toMatch(/\son[a-z]+=/);
    const refs = [...html.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(3);
    for (const ref of refs) {
      if (ref.startsWith("#")) continue;
      expect(ref).toStartWith("/dashboard/");
      expect(ASSETS.has(ref.slice("/dashboard/".length))).toBe(true);
    }
    for (const [name, asset] of ASSETS) {
      // The SVG namespace is a name, not a request.
      const urls = [...asset.body.matchAll(/https?:\/\/[^\s"'`)]+/g)].map((m) => m[0]).filter((u) => u !== "http://www.w3.org/2000/svg");
      if (name.endsWith(".js") && !name.startsWith("vendor/")) expect(urls).toEqual([]);
      if (!name.endsWith(".js")) continue;
      for (const m of asset.body.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']/gm)) {
        const target = new URL(m[1], `http://x/dashboard/${name}`).pathname.slice("/dashboard/".length);
        expect(ASSETS.has(target)).toBe(true);
      }
    }
  });
});
