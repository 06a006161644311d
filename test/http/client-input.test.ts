/**
 * Nothing a client can send gets a 500: every malformed input to every route is
 * answered with a 4xx problem-details body, and changes nothing.
 */
import { beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { DEM_YES, getAgent, newTrader, type Trader } from "../support/payload.ts";

let t: TestApp;
let tr: Trader;
beforeAll(async () => {
  t = await createTestApp(await sharedPglite());
  tr = await newTrader(t);
});

const weird: unknown[] = [
  null,
  [],
  "text",
  42,
  { market_id: DEM_YES },
  { market_id: DEM_YES, side: "buy", size_usdc: 1e-9, price: 0.5 },
  { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.123456789 },
  { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5, order_type: "GTD", expires_at: "not a date" },
  { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5, order_type: "GTD", expires_at: "1999-01-01T00:00:00Z" },
  { market_id: "0".repeat(78), side: "sell", size_usdc: 5, price: 0.5 },
  { market_id: "9".repeat(78), side: "sell", size_usdc: 1e9, price: 0.999999 },
  { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5, probability: 1 },
  { market_id: DEM_YES, side: "buy", size_usdc: Number.MAX_VALUE, price: 0.5 },
  { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5, client_order_id: "x".repeat(10_000) },
  { order_id: "ord_00000000000000000000", signature: "0x" + "f".repeat(130) },
  { order_id: "ord_00000000000000000000", signature: "0x" + "0".repeat(130), venue_auth: { api_key: "", passphrase: "", timestamp: "x", signature: "" } },
  { api_key: "k", api_secret: "s", scopes: "order:place" },
  { api_key: "k", api_secret: "s", scopes: [1, 2] },
  { api_key: "k", api_secret: "s", scopes: Array(100).fill("order:place") },
  { min_order_usdc: -1 },
  { max_order_usdc: "100" },
  { market_deny: ["x".repeat(1000)] },
  { daily_volume_usdc: 0.0000001 },
  { reason: { nested: true } },
];

const routes = (agentId: string): [string, string][] => [
  ["POST", "/v1/orders/intent"],
  ["POST", "/v1/orders/intent?dry_run=maybe"],
  ["POST", "/v1/orders/submit-signed"],
  ["POST", `/v1/agents/${agentId}/creds`],
  ["PATCH", `/v1/agents/${agentId}/limits`],
  ["POST", `/v1/agents/${agentId}/kill`],
  ["POST", "/v1/agents"],
  ["POST", "/v1/api-keys"],
  ["GET", "/v1/orders?limit=0&cursor=%%%"],
  ["GET", "/v1/orders?status=nonsense"],
  ["GET", "/v1/markets?limit=9999"],
  ["GET", "/v1/markets/not-a-token"],
  ["GET", "/v1/orders/ord_bad"],
  ["DELETE", "/v1/orders/ord_00000000000000000000"],
  ["DELETE", "/v1/api-keys/key_00000000000000000000"],
];

test("malformed bodies, queries and ids never produce a 5xx, and always a problem body", async () => {
  const other = await newTrader(t);
  let calls = 0;
  for (const [method, path] of routes(tr.agent.id)) {
    const bodies = method === "GET" || method === "DELETE" ? [undefined] : weird;
    for (const body of bodies) {
      // The kill is the one route whose success changes state; it is exercised on its own agent below.
      if (path.endsWith("/kill") && body !== null && typeof body === "object" && !Array.isArray(body) && !("reason" in body)) continue;
      const res = await t.call(method, path, { key: tr.key, ...(body === undefined ? {} : { body }) });
      calls++;
      expect({ method, path, body, status: res.status < 500 }).toEqual({ method, path, body, status: true });
      if (res.status >= 400) {
        expect(res.headers.get("content-type")).toContain("application/problem+json");
        expect(typeof res.body.code).toBe("string");
        expect(res.text).not.toContain("    at ");
      }
    }
  }
  // Raw garbage: not JSON, wrong content type, an empty body.
  for (const raw of ["{", "", "\u0000\u0001", "[1,2", "{\"a\":}"]) {
    for (const ct of ["application/json", "text/plain"]) {
      const res = await t.call("POST", "/v1/orders/intent", { key: tr.key, raw, headers: { "content-type": ct } });
      calls++;
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
  }
  expect(calls).toBeGreaterThan(150);
  // None of it reserved anything or placed an order for the other agent.
  expect((await getAgent(t, other)).daily_volume.used_usdc).toBe(0);
});
