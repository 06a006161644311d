/**
 * The dashboard's Webhooks view in headless Chromium against the real service: register an endpoint
 * (the secret shown once, and it verifies the messages), send a test, the notice on every view when
 * the endpoint is disabled after its retries, re-enable (the held events arrive), delete.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Page } from "playwright-core";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { approved, newTrader, type Trader } from "../support/payload.ts";
import { type DashboardSession, openDashboard, screenshot, signIn } from "../dashboard/browser.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

let t: TestApp;
let dashboard: DashboardSession;
let page: Page;
let trader: Trader;
let receiver: Receiver;

beforeAll(async () => {
  t = await createTestApp(await sharedPglite(), {
    config: { webhooks: { allowPrivate: true, retryScheduleMs: [50, 50], timeoutMs: 1000, concurrency: 4 } },
  });
  t.app.services.webhookDispatcher.start();
  trader = await newTrader(t, { body: { name: "hook-bot" } });
  receiver = startReceiver();
  dashboard = await openDashboard(t.app.handle);
  page = dashboard.page;
  await page.goto(`${dashboard.base}/dashboard`);
  await signIn(page, trader.key);
}, 60_000);

afterAll(async () => {
  await t?.app.services.webhookDispatcher.stop();
  await dashboard?.close();
  receiver?.close();
  await (await sharedPglite()).db.execute(sql.raw("delete from webhooks"));
});

test("register, test, disabled notice, re-enable and delete from the dashboard", async () => {
  await page.getByRole("link", { name: "Webhooks" }).click();
  await page.locator("#webhooks-table").getByText("No webhook endpoints").waitFor();
  await page.locator("#register-webhook input[name=url]").fill(receiver.url);
  await page.locator("#register-webhook input[name=type_order]").check();
  await page.getByRole("button", { name: "Register endpoint" }).click();
  const secretField = page.locator("#new-webhook input");
  await secretField.waitFor();
  const secret = await secretField.inputValue();
  expect(secret).toMatch(/^whsec_/);
  receiver.secret = secret; // the receiver verifies with the secret the page showed
  const row = page.locator("#webhooks-table tr", { hasText: receiver.url });
  await row.waitFor();
  expect(await row.textContent()).toContain("order");
  expect(await row.textContent()).not.toContain("risk_rejected");

  await row.getByRole("button", { name: "Send test" }).click();
  await row.getByText("test delivered (204)").waitFor();
  expect(receiver.received.some((m) => m.body.type === "webhook_test")).toBe(true);
  await screenshot(page, "webhooks");

  // The endpoint fails: after its retries it is disabled, and a notice shows on every view.
  receiver.failWith = 500;
  const order = await approved(t, trader, { size_usdc: 5 });
  await page.getByRole("link", { name: "Agents" }).click();
  const notice = page.locator("#webhook-notice");
  await notice.waitFor({ state: "visible", timeout: 15_000 });
  expect(await notice.textContent()).toContain(receiver.url);
  expect(await notice.textContent()).toContain("the endpoint answered 500");
  await screenshot(page, "webhooks-notice");

  receiver.failWith = null;
  const before = receiver.received.length;
  await notice.getByRole("link", { name: "Re-enable in Webhooks" }).click();
  await row.getByRole("button", { name: "Re-enable" }).click();
  await receiver.until((r) => r.received.slice(before).some((m) => m.body.type === "order" && m.body.data.order.id === order.order_id), "the held order event");
  await row.getByText("enabled").waitFor();
  await notice.waitFor({ state: "hidden" });

  await row.getByRole("button", { name: "Delete" }).click();
  await page.getByRole("button", { name: "Delete endpoint" }).click();
  await page.locator("#webhooks-table").getByText("No webhook endpoints").waitFor();
  expect((await t.call("GET", "/v1/webhooks", { key: trader.key })).body.data).toEqual([]);
  expect(dashboard.problems).toEqual([]);
}, 60_000);
