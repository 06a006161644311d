/**
 * The dashboard's order-management controls in headless Chromium against the real service (PGlite,
 * paper venue): "Cancel all orders" on an agent (after a confirmation; the agent keeps trading) and
 * "Kill all" for the organization (after a confirmation; every agent halted, new ones too) and
 * "Resume all". An agent-scoped key sees no firm control.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { approved, BTC_YES, DEM_YES, newTrader, sign, submitSigned, type Trader } from "../support/payload.ts";
import { type DashboardSession, openDashboard, screenshot, signIn } from "./browser.ts";

let t: TestApp;
let dashboard: DashboardSession;
let page: Page;
let key: string;
let alpha: Trader;
let beta: Trader;

async function placeOpen(tr: Trader, body: Record<string, unknown>): Promise<any> {
  const order = await approved(t, tr, body);
  const res = await submitSigned(t, tr.key, order.order_id, await sign(tr.account, order.unsigned_order));
  expect(res.body.status).toBe("open");
  return order;
}
const breaker = async (tr: Trader) => (await t.call("GET", `/v1/agents/${tr.agent.id}`, { key })).body.breaker;

beforeAll(async () => {
  t = await createTestApp(await sharedPglite(), { env: { KILL_DEADLINE_MS: "1500" } });
  key = (await t.newOrg("firm dashboard org")).key;
  alpha = await newTrader(t, { key, body: { name: "alpha-bot" } });
  beta = await newTrader(t, { key, body: { name: "beta-bot" } });
  await placeOpen(alpha, { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.47 });
  await placeOpen(alpha, { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.46 });
  await placeOpen(beta, { market_id: BTC_YES, side: "buy", size_usdc: 5, price: 0.31 });
  dashboard = await openDashboard(t.app.handle);
  page = dashboard.page;
  await page.goto(`${dashboard.base}/dashboard`);
  await signIn(page, key);
  await page.locator("#agents-list article").first().waitFor();
}, 60_000);

afterAll(async () => {
  await dashboard?.close();
  await t?.app.stop();
});

test("cancel all of an agent's orders after a confirmation: cancelled, the breaker stays closed", async () => {
  const card = page.locator(`article[data-agent-id="${alpha.agent.id}"]`);
  await card.getByRole("button", { name: "Cancel all orders" }).click();
  const dialog = page.locator("dialog#confirm");
  expect(await dialog.textContent()).toContain("not halted");
  await dialog.getByRole("button", { name: "Cancel", exact: true }).click();
  expect((await t.call("GET", `/v1/agents/${alpha.agent.id}`, { key })).body.open_orders).toBe(2);
  await card.getByRole("button", { name: "Cancel all orders" }).click();
  await dialog.getByRole("button", { name: "Cancel all orders" }).click();
  const result = card.locator('[data-testid="cancel-all-result"]');
  await result.waitFor();
  expect(await result.textContent()).toContain("2 cancelled");
  expect(await result.textContent()).toContain("keeps trading");
  await card.locator(".open-orders").getByText("0").waitFor();
  expect(await breaker(alpha)).toMatchObject({ state: "closed" });
  await screenshot(page, "firm-1-cancel-all");
}, 30_000);

test("kill all after a confirmation: every agent halted, the firm shown halted; resume all undoes it", async () => {
  const bar = page.locator('[data-testid="firm-controls"]');
  await bar.getByRole("button", { name: "Kill all" }).click();
  const dialog = page.locator("dialog#confirm");
  expect(await dialog.textContent()).toContain("every agent");
  await dialog.getByRole("button", { name: "Cancel", exact: true }).click();
  expect(await breaker(beta)).toMatchObject({ state: "closed" });
  await bar.getByRole("button", { name: "Kill all" }).click();
  await dialog.getByRole("button", { name: "Kill all agents" }).click();
  const result = page.locator('[data-testid="kill-all-result"]');
  await result.waitFor();
  expect(await result.textContent()).toContain("2 agent(s) halted");
  expect(await result.textContent()).toContain("1 orders cancelled");
  await bar.getByText("All agents halted").waitFor();
  expect(await breaker(alpha)).toMatchObject({ state: "tripped", reason: "kill" });
  expect(await breaker(beta)).toMatchObject({ state: "tripped", reason: "kill" });
  await screenshot(page, "firm-2-kill-all");
  await bar.getByRole("button", { name: "Resume all" }).click();
  await page.locator(`article[data-agent-id="${beta.agent.id}"]`).getByText("breaker closed").waitFor();
  expect(await breaker(alpha)).toMatchObject({ state: "closed" });
  expect((await t.call("GET", "/v1/kill", { key })).body.halted).toBe(false);
  expect(dashboard.problems).toEqual([]);
}, 30_000);

test("an agent-scoped key sees no firm control", async () => {
  const scoped = (await t.call("POST", "/v1/api-keys", { key, body: { agent_id: alpha.agent.id } })).body.key;
  await page.getByRole("button", { name: "Sign out" }).click();
  await signIn(page, scoped);
  await page.locator(`article[data-agent-id="${alpha.agent.id}"]`).waitFor();
  expect(await page.locator('[data-testid="firm-controls"]').count()).toBe(0);
  // The 403 of GET /v1/kill is how the page learns it: the only error answer.
  const seen = dashboard.problems.splice(0);
  // (A request the sign-out cut short is not a problem of this page.)
  expect(seen.filter((p) => !/\/v1\/kill → 403$/.test(p) && !/ERR_ABORTED$/.test(p))).toEqual([]);
}, 30_000);
