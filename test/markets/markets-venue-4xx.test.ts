/**
 * Review 2: GET /v1/markets and GET /v1/markets/{id} on the CLOB adapter answer 500 internal_error
 * when the venue answers a 4xx other than 400/404 (429 rate limiting, 403 from a gateway): the
 * adapter throws VenueRequestError, which MarketService.call does not map. The venue could not give
 * the data: that is 503 venue_unavailable with Retry-After, as for a timeout or a 5xx.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ClobVenue } from "../../src/venues/clob/clob-venue.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { DEM_YES } from "../support/payload.ts";

let sim: VenueSim;
let t: TestApp;
/** Paths the "venue" answers 429 Too Many Requests for (as Polymarket's gateway does under load). */
let limited: RegExp | null = null;

const rateLimitedFetch = (async (input: any, init?: any) => {
  const url = new URL(String(input));
  if (limited?.test(url.pathname)) {
    return new Response(JSON.stringify({ error: "Too Many Requests" }), { status: 429, headers: { "content-type": "application/json" } });
  }
  return fetch(input, init);
}) as typeof fetch;

beforeAll(async () => {
  sim = startVenueSim({ port: 0, hostname: "127.0.0.1" });
  t = await createTestApp(await sharedPglite(), {
    venue: new ClobVenue({ baseUrl: sim.url, timeoutMs: 2000, fetch: rateLimitedFetch, marketsCacheMs: 0 }),
  });
});
afterAll(async () => {
  await t?.app.stop();
  await sim?.stop();
});

test("GET /v1/markets when the venue answers 429 on /markets is 503 venue_unavailable, not 500", async () => {
  limited = /^\/markets$/;
  const res = await t.call("GET", "/v1/markets");
  limited = null;
  expect(res.status, res.text).toBe(503);
  expect(res.body.code).toBe("venue_unavailable");
});

test("GET /v1/markets/{id} when the venue answers 429 on /book is 503 venue_unavailable, not 500", async () => {
  limited = /^\/book$/;
  const res = await t.call("GET", `/v1/markets/${DEM_YES}`);
  limited = null;
  expect(res.status, res.text).toBe(503);
  expect(res.body.code).toBe("venue_unavailable");
});
