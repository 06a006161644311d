/**
 * The page's event-stream path. This branch's service has no GET /v1/events yet (core adds it), so
 * the test server answers that one path itself with Server-Sent Events in CONTRACT 14's shape (id,
 * event, JSON data), after checking the X-API-Key header against the real key store; every other
 * request goes to the real service. It shows that the page follows a stream when one is offered:
 * it sends the key in the header, stops polling, refreshes on an `order` event, shows a `kill`
 * event's result, and reconnects with Last-Event-ID when the stream ends.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
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
const streams: { controller: ReadableStreamDefaultController<Uint8Array>; lastEventId: string | null }[] = [];
let nextId = 1;
let apiRequests = 0;

function push(event: string, data: unknown) {
  const s = streams[streams.length - 1];
  s.controller.enqueue(new TextEncoder().encode(`id: ${nextId++}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
}

beforeAll(async () => {
  t = await createTestApp(await sharedPglite());
  trader = await newTrader(t);
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname !== "/v1/events") {
        if (url.pathname.startsWith("/v1/")) apiRequests++;
        return t.app.handle(request);
      }
      const key = request.headers.get("x-api-key");
      if (!key || !(await t.app.services.apiKeys.authenticate(key))) return new Response(null, { status: 401 });
      const lastEventId = request.headers.get("last-event-id");
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          streams.push({ controller, lastEventId });
          controller.enqueue(new TextEncoder().encode(": connected\n\n"));
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-store" } });
    },
  });
  chromium = await launchChromium();
  page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(10_000);
  problems = watchPage(page, () => false);
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  server?.stop(true);
});

test("the page follows the stream with the key in its header, and stops polling", async () => {
  await page.goto(`http://127.0.0.1:${server.port}/dashboard`);
  await page.locator("#api-key").fill(trader.key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("#live-status").getByText("following the event stream").waitFor();
  expect(streams.length).toBe(1);
  expect(streams[0].lastEventId).toBeNull();
  await page.getByRole("link", { name: "Orders" }).click();
  await page.locator("#orders-table").getByText("No orders match").waitFor();
  // No polling while the stream is up: no API request in 4 s (the poll period is 3 s).
  const before = apiRequests;
  await page.waitForTimeout(4000);
  expect(apiRequests).toBe(before);
}, 30_000);

test("an order event brings the new order in; a kill event shows its result", async () => {
  const order = await approved(t, trader, { market_id: BTC_YES, side: "buy", size_usdc: 5, price: 0.3 });
  push("order", { order: { id: order.order_id, status: "awaiting_signature" } });
  await page.locator(`tr[data-order-id="${order.order_id}"]`).waitFor({ timeout: 3000 });

  await page.getByRole("link", { name: "Agents" }).click();
  const card = page.locator(`article[data-agent-id="${trader.agent.id}"]`);
  await card.waitFor();
  const kill = await t.call("POST", `/v1/agents/${trader.agent.id}/kill`, { key: trader.key });
  expect(kill.status).toBe(200);
  push("kill", kill.body);
  const result = card.locator('[data-testid="kill-result"]');
  await result.waitFor({ timeout: 3000 });
  expect(await result.textContent()).toContain("1 cancelled");
  await card.getByText("breaker tripped (kill)").waitFor();
  await screenshot(page, "9-stream-kill-event");
}, 30_000);

test("when the stream ends the page reconnects with Last-Event-ID", async () => {
  const lastSent = String(nextId - 1);
  streams[streams.length - 1].controller.close();
  const end = Date.now() + 8000;
  while (streams.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  expect(streams.length).toBe(2);
  expect(streams[1].lastEventId).toBe(lastSent);
  await page.locator("#live-status").getByText("following the event stream").waitFor();
  expect(problems).toEqual([]);
}, 30_000);
