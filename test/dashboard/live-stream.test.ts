/**
 * The page's event-stream path against the service's real GET /v1/events (docs/events.md). The test
 * server hands every request to the real service; on /v1/events it only passes the service's stream
 * through, noting the request headers and the event ids it carried, and can end that connection (as a
 * dropped network would). It shows that the page follows the stream with the key in its header,
 * refreshes at the slower stream pace (not the 3 s poll), brings a new order in on its `order` event,
 * shows a `kill` event's result, and reconnects with Last-Event-ID after the connection ends, the
 * service replaying what happened meanwhile.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { approved, BTC_YES, newTrader, type Trader } from "../support/payload.ts";
import { type DashboardSession, openDashboard, screenshot, signIn } from "./browser.ts";

let t: TestApp;
let dashboard: DashboardSession;
let page: Page;
let problems: string[];
let trader: Trader;

interface Connection {
  key: string | null;
  lastEventId: string | null;
  /** Event ids and types passed to the page, in order. */
  events: { id: string; type: string; data: any }[];
  end(): void;
}
const connections: Connection[] = [];
/** Times of the page's other API requests. */
const apiRequests: number[] = [];

/** Passes the service's event stream through, noting each event; `end()` closes it towards the page. */
function passThrough(res: Response, conn: Omit<Connection, "end" | "events">): Response {
  const upstream = res.body!.getReader();
  const events: Connection["events"] = [];
  let buffer = "";
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    async pull(c) {
      const { value, done } = await upstream.read().catch(() => ({ done: true, value: undefined }));
      if (done) return c.close();
      buffer += new TextDecoder().decode(value);
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const id = /^id: (.*)$/m.exec(block)?.[1];
        const type = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (id && type) events.push({ id, type, data: data ? JSON.parse(data) : null });
      }
      c.enqueue(value);
    },
    cancel() {
      void upstream.cancel();
    },
  });
  connections.push({
    ...conn,
    events,
    end() {
      void upstream.cancel();
      controller.close();
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
}

beforeAll(async () => {
  t = await createTestApp(await sharedPglite());
  trader = await newTrader(t);
  dashboard = await openDashboard(async (request) => {
    const url = new URL(request.url);
    if (url.pathname !== "/v1/events") {
      if (url.pathname.startsWith("/v1/")) apiRequests.push(Date.now());
      return t.app.handle(request);
    }
    const res = await t.app.handle(request);
    if (res.status !== 200) return res;
    return passThrough(res, { key: request.headers.get("x-api-key"), lastEventId: request.headers.get("last-event-id") });
  });
  ({ page, problems } = dashboard);
}, 60_000);

afterAll(async () => {
  await dashboard?.close();
  await t?.app.stop();
});

test("the page follows the real stream with the key in its header, refreshing at the stream's pace, not the poll's", async () => {
  await page.goto(`${dashboard.base}/dashboard`);
  await signIn(page, trader.key);
  await page.locator("#live-status").getByText("following the event stream").waitFor();
  expect(connections.length).toBe(1);
  expect(connections[0]).toMatchObject({ key: trader.key, lastEventId: null });
  await page.getByRole("link", { name: "Orders" }).click();
  await page.locator("#orders-table").getByText("No orders match").waitFor();
  // Beside a live stream the page refreshes every 5 s (STREAM_REFRESH_MS), not every 3 s (POLL_MS):
  // over 8 s the refresh bursts are at least 4.5 s apart.
  await page.waitForTimeout(500);
  const from = Date.now();
  await page.waitForTimeout(8_000);
  const bursts = apiRequests.filter((at) => at >= from).reduce<number[]>((b, at) => (b.length && at - b[b.length - 1] < 1000 ? b : [...b, at]), []);
  expect(bursts.length).toBeGreaterThanOrEqual(1);
  for (let i = 1; i < bursts.length; i++) expect(bursts[i] - bursts[i - 1]).toBeGreaterThanOrEqual(4500);
}, 30_000);

test("a real order event brings the new order in; a real kill event shows its result", async () => {
  const order = await approved(t, trader, { market_id: BTC_YES, side: "buy", size_usdc: 5, price: 0.3 });
  await page.locator(`tr[data-order-id="${order.order_id}"]`).waitFor({ timeout: 6000 });
  const stream = connections[0];
  expect(stream.events.some((e) => e.type === "order" && e.data.data.order.id === order.order_id)).toBe(true);

  await page.getByRole("link", { name: "Agents" }).click();
  const card = page.locator(`article[data-agent-id="${trader.agent.id}"]`);
  await card.waitFor();
  const kill = await t.call("POST", `/v1/agents/${trader.agent.id}/kill`, { key: trader.key });
  expect(kill.status).toBe(200);
  // The kill result reaches the page only through the kill event.
  const result = card.locator('[data-testid="kill-result"]');
  await result.waitFor({ timeout: 3000 });
  expect(await result.textContent()).toContain("1 cancelled");
  expect(stream.events.find((e) => e.type === "kill")?.data.data.kill_id).toBe(kill.body.kill_id);
  await card.getByText("breaker tripped (kill)").waitFor();
  await screenshot(page, "9-stream-kill-event");
}, 30_000);

test("when the connection ends the page reconnects with Last-Event-ID and gets what happened meanwhile", async () => {
  const first = connections[0];
  const lastSent = first.events.at(-1)!.id;
  first.end();
  // While the page is away the agent is resumed: a breaker event it has not seen.
  const resumed = await t.call("POST", `/v1/agents/${trader.agent.id}/resume`, { key: trader.key });
  expect(resumed.status).toBe(200);
  const end = Date.now() + 8000;
  while (connections.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  expect(connections.length).toBe(2);
  expect(connections[1]).toMatchObject({ key: trader.key, lastEventId: lastSent });
  await page.locator("#live-status").getByText("following the event stream").waitFor();
  const replayEnd = Date.now() + 3000;
  while (!connections[1].events.some((e) => e.type === "breaker") && Date.now() < replayEnd) await new Promise((r) => setTimeout(r, 50));
  expect(connections[1].events[0]).toMatchObject({ id: String(Number(lastSent) + 1), type: "breaker", data: { data: { state: "closed" } } });
  await page.locator(`article[data-agent-id="${trader.agent.id}"]`).getByText("breaker closed").waitFor();
  expect(problems).toEqual([]);
}, 30_000);
