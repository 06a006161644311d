/**
 * Orders waiting for a person (docs/api.md#approval-above-a-threshold) on the dashboard's orders
 * view, against the real service: an agent with `approval_threshold_usdc` places two intents above it
 * (202 `pending_approval`) and one below (201), the page lists them, filters the orders by `pending_approval`, and a person
 * approves one and rejects the other through POST /v1/orders/{id}/approve|reject. The orders move as
 * the service records it, each decision naming the deciding key.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { BTC_YES, newTrader, postIntent, type Trader } from "../support/payload.ts";
import { type DashboardSession, openDashboard, screenshot, signIn } from "./browser.ts";

let t: TestApp;
let dashboard: DashboardSession;
let page: Page;
let problems: string[];
let trader: Trader;
const decisions: { id: string; action: string; key: string | null }[] = [];
const pending: string[] = [];
let belowThreshold = "";

beforeAll(async () => {
  t = await createTestApp(await sharedPglite());
  trader = await newTrader(t, { body: { name: "gamma-bot", limits: { approval_threshold_usdc: 4 } } });
  for (const price of [0.3, 0.29]) {
    const res = await postIntent(t, trader, { market_id: BTC_YES, side: "buy", size_usdc: 5, price });
    expect(res.status).toBe(202);
    expect(res.body.status).toBe("pending_approval");
    pending.push(res.body.order_id);
  }
  const small = await postIntent(t, trader, { market_id: BTC_YES, side: "buy", size_usdc: 3, price: 0.3 });
  expect(small.status).toBe(201);
  belowThreshold = small.body.order_id;
  // The real service; the server only notes which decisions the page sends.
  dashboard = await openDashboard((request) => {
    const m = /^\/v1\/orders\/(ord_[0-9a-z]{20})\/(approve|reject)$/.exec(new URL(request.url).pathname);
    if (request.method === "POST" && m) decisions.push({ id: m[1], action: m[2], key: request.headers.get("x-api-key") });
    return t.app.handle(request);
  });
  ({ page, problems } = dashboard);
}, 60_000);

afterAll(async () => {
  await dashboard?.close();
  await t?.app.stop();
});

test("the orders status filter offers pending_approval and the service accepts it", async () => {
  await page.goto(`${dashboard.base}/dashboard#orders`);
  await signIn(page, trader.key);
  await page.locator(`#orders-table tr[data-order-id="${belowThreshold}"]`).waitFor();
  const select = page.locator("#order-filters select[name=status]");
  await select.selectOption("pending_approval");
  await page.locator(`#orders-table tr[data-order-id="${belowThreshold}"]`).waitFor({ state: "detached" });
  for (const id of pending) await page.locator(`#orders-table tr[data-order-id="${id}"]`).waitFor();
  expect(await page.locator("#orders-table tr[data-order-id]").count()).toBe(2);
  const listed = await t.call("GET", "/v1/orders?status=pending_approval", { key: trader.key });
  expect(listed.status).toBe(200);
  expect(listed.body.data.map((o: any) => o.id).sort()).toEqual([...pending].sort());
  await select.selectOption("");
  await page.locator(`#orders-table tr[data-order-id="${belowThreshold}"]`).waitFor();
}, 30_000);

test("orders waiting for approval are listed with approve and reject, which the service carries out", async () => {
  const panel = page.locator("#approvals");
  await panel.getByText("Waiting for approval (2)").waitFor();
  await screenshot(page, "10-approvals");
  await panel.getByRole("button", { name: "Approve" }).first().click();
  await panel.getByText("Waiting for approval (1)").waitFor();
  await panel.getByRole("button", { name: "Reject" }).click();
  await waitUntil(async () => (await panel.locator("section").count()) === 0);
  expect(decisions.map((d) => d.action).sort()).toEqual(["approve", "reject"]);
  expect(new Set(decisions.map((d) => d.id))).toEqual(new Set(pending));
  expect(decisions.every((d) => d.key === trader.key)).toBe(true);

  const keyId = (await t.call("GET", "/v1/api-keys", { key: trader.key })).body.data[0].id;
  for (const d of decisions) {
    const order = (await t.call("GET", `/v1/orders/${d.id}`, { key: trader.key })).body;
    expect(order.status).toBe(d.action === "approve" ? "awaiting_signature" : "rejected");
    expect(order.history.at(-1)).toMatchObject({ status: order.status, by: keyId });
  }
  expect(problems).toEqual([]);
}, 30_000);

async function waitUntil(cond: () => Promise<boolean>, ms = 6000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}
