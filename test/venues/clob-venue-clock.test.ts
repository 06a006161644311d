/** The CLOB adapter reads "now" from the service's clock: its market cache expires when that clock says so, and its L2 timestamps are that clock's. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolve } from "node:path";
import { ClobVenue } from "../../src/venues/clob/clob-venue.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";

const FIXTURE = resolve(import.meta.dir, "../../fixtures/markets.json");
let sim: VenueSim;
beforeAll(() => {
  sim = startVenueSim({ port: 0, marketsFile: FIXTURE, marketsPageSize: 50 });
});
afterAll(() => sim.stop());

test("the markets cache expires by the injected clock, not by wall time", async () => {
  let now = Date.parse("2030-01-01T00:00:00Z");
  const requests: string[] = [];
  const counting: typeof fetch = Object.assign((input: RequestInfo | URL, init?: RequestInit) => {
    requests.push(new URL(String(input instanceof Request ? input.url : input)).pathname);
    return fetch(input, init);
  }, fetch);
  const venue = new ClobVenue({ baseUrl: sim.url, fetch: counting, marketsCacheMs: 60_000, clock: { now: () => now } });
  await venue.listMarkets();
  const first = requests.filter((p) => p === "/markets").length;
  expect(first).toBeGreaterThan(0);
  now += 59_000; // within the cache's minute by the injected clock
  await venue.listMarkets();
  expect(requests.filter((p) => p === "/markets").length).toBe(first);
  now += 2_000; // past it
  await venue.listMarkets();
  expect(requests.filter((p) => p === "/markets").length).toBe(2 * first);
});

test("L2 headers carry the injected clock's time", async () => {
  const at = Date.parse("2031-06-01T12:00:00Z");
  const seen: string[] = [];
  const capturing: typeof fetch = Object.assign((input: RequestInfo | URL, init?: RequestInit) => {
    const stamp = new Headers(init?.headers).get("POLY_TIMESTAMP");
    if (stamp) seen.push(stamp);
    return fetch(input, init);
  }, fetch);
  const venue = new ClobVenue({ baseUrl: sim.url, fetch: capturing, clock: { now: () => at } });
  const credentials = { api_key: "k", api_secret: Buffer.from("secret").toString("base64url"), passphrase: "p", address: "0x0000000000000000000000000000000000000001" };
  await venue.getOrder({ venue_order_id: "0xabc", credentials } as never).catch(() => undefined);
  expect(seen).toContain(String(Math.floor(at / 1000)));
});
