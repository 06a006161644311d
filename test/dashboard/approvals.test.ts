/**
 * Orders waiting for a person (CONTRACT 12, `pending_approval`) on the orders view, with approve and
 * reject. This branch has neither the status nor POST /v1/orders/{id}/approve|reject (guards adds
 * them), so the test writes a pending row into the real database and its server answers those two
 * routes itself, recording the calls and moving the row as the contract says; everything else is the
 * real service. It shows the page lists such orders and calls the contract's routes for them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { Page } from "playwright-core";
import { orders } from "../../src/db/schema.ts";
import { newId } from "../../src/domain/ids.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { approved, BTC_YES, newTrader, type Trader } from "../support/payload.ts";
import { launchChromium, screenshot, watchPage } from "./browser.ts";

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
let problems: string[];
let trader: Trader;
const decisions: { id: string; action: string; key: string | null }[] = [];
const pending: string[] = [];

async function pendingOrder(template: string): Promise<string> {
  const db = t.app.services.database.db;
  const [row] = await db.select().from(orders).where(eq(orders.id, template));
  const id = newId("ord");
  const now = new Date();
  await db.insert(orders).values({
    ...row,
    id,
    status: "pending_approval" as never,
    orderHash: null,
    decisionId: null,
    history: [{ status: "pending_approval" as never, at: now.toISOString(), reason: "above approval_threshold_usdc" }],
    createdAt: now,
    updatedAt: now,
  });
  return id;
}

beforeAll(async () => {
  t = await createTestApp(await sharedPglite());
  trader = await newTrader(t, { body: { name: "gamma-bot" } });
  const base = await approved(t, trader, { market_id: BTC_YES, side: "buy", size_usdc: 5, price: 0.3 });
  pending.push(await pendingOrder(base.order_id), await pendingOrder(base.order_id));
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      const m = /^\/v1\/orders\/(ord_[0-9a-z]{20})\/(approve|reject)$/.exec(url.pathname);
      if (request.method === "POST" && m) {
        decisions.push({ id: m[1], action: m[2], key: request.headers.get("x-api-key") });
        const to = m[2] === "approve" ? "awaiting_signature" : "rejected";
        await t.app.services.database.db.update(orders).set({ status: to as never }).where(eq(orders.id, m[1]));
        return t.app.handle(new Request(`${url.origin}/v1/orders/${m[1]}`, { headers: request.headers }));
      }
      return t.app.handle(request);
    },
  });
  chromium = await launchChromium();
  page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(10_000);
  problems = watchPage(page, (u, status) => status === 404 && new URL(u).pathname === "/v1/events");
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  server?.stop(true);
});

test("orders waiting for approval are listed with approve and reject, which call the contract's routes", async () => {
  await page.goto(`http://127.0.0.1:${server.port}/dashboard#orders`);
  await page.locator("#api-key").fill(trader.key);
  await page.getByRole("button", { name: "Sign in" }).click();
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
  const statuses = await Promise.all(pending.map(async (id) => (await t.call("GET", `/v1/orders/${id}`, { key: trader.key })).body.status));
  expect(statuses.sort()).toEqual(["awaiting_signature", "rejected"]);
  expect(problems).toEqual([]);
}, 30_000);

async function waitUntil(cond: () => Promise<boolean>, ms = 6000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}
