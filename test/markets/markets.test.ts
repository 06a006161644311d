/**
 * GET /v1/markets and GET /v1/markets/:market_id (CONTRACT 11.4) through the real app on the
 * embedded paper venue (fixtures/markets.json) and on small venues built for one case.
 * The routes read no table, so PGlite alone is enough.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { PaperVenue } from "../../src/venues/paper/paper-venue.ts";
import { type Venue, VenueUnavailableError } from "../../src/venues/venue.ts";
import { createTestApp, type TestApp, type TestResponse } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";

const FIXTURE = JSON.parse(readFileSync(resolve(import.meta.dir, "../../fixtures/markets.json"), "utf8")) as any[];
const FIXTURE_TOKENS = FIXTURE.flatMap((m) => m.tokens.map((t: any) => ({ market: m, token: t })));
const FIELDS = [
  "accepting_orders",
  "active",
  "best_ask",
  "best_bid",
  "category",
  "closed",
  "condition_id",
  "end_date",
  "last_trade_price",
  "market_id",
  "mid",
  "min_order_size",
  "neg_risk",
  "outcome",
  "question",
  "tick_size",
  "version",
].sort();
const UINT256_MAX = ((1n << 256n) - 1n).toString();

function expectProblem(res: TestResponse, status: number, code: string): any {
  if (res.status !== status) throw new Error(`expected ${status} ${code}, got ${res.status}: ${res.text}`);
  expect(res.headers.get("content-type")).toStartWith("application/problem+json");
  expect(res.body.status).toBe(status);
  expect(res.body.code).toBe(code);
  return res.body;
}

/** Decimal text → rational p/10^d, compared exactly. */
function units(text: string, decimals: number): bigint {
  const [i, f = ""] = text.split(".");
  return BigInt(i) * 10n ** BigInt(decimals) + BigInt(f.padEnd(decimals, "0") || "0");
}

/** Every page of a listing, following next_cursor. */
async function allPages(t: TestApp, query: string): Promise<{ items: any[]; pages: number }> {
  const items: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const sep = query ? "&" : "";
    const res: TestResponse = await t.call("GET", `/v1/markets?${query}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(res.status).toBe(200);
    items.push(...res.body.data);
    cursor = res.body.next_cursor;
    pages++;
    if (pages > 100) throw new Error("pagination does not end");
  } while (cursor);
  return { items, pages };
}

/** A one-market paper venue whose single token has the given book. */
function venueWith(book: { bids: any[]; asks: any[] }, last: string | null, tick = "0.001", version?: string): Venue {
  return PaperVenue.fromEntries([
    {
      ...(version ? { version } : {}),
      condition_id: `0x${"ab".repeat(32)}`,
      question: "Q?",
      category: "test",
      end_date: "2030-01-01T00:00:00Z",
      active: true,
      closed: false,
      accepting_orders: true,
      neg_risk: false,
      tick_size: tick,
      min_order_size: "5",
      tokens: [{ token_id: "123456789", outcome: "Yes", book, last_trade_price: last }],
    },
  ]);
}

describe("markets HTTP", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(await sharedPglite());
  });

  test("lists every outcome token of every market of the embedded fixture, in file order, without an API key", async () => {
    const res = await t.call("GET", "/v1/markets");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    expect(Object.keys(res.body).sort()).toEqual(["data", "next_cursor"]);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.data.map((m: any) => m.market_id)).toEqual(FIXTURE_TOKENS.map((x) => x.token.token_id));
    for (const [i, item] of res.body.data.entries()) {
      const { market, token } = FIXTURE_TOKENS[i];
      expect(Object.keys(item).sort()).toEqual(FIELDS);
      expect(item).toMatchObject({
        market_id: token.token_id,
        condition_id: market.condition_id,
        version: market.version ?? "v1",
        question: market.question,
        outcome: token.outcome,
        category: market.category,
        end_date: market.end_date,
        active: market.active,
        closed: market.closed,
        accepting_orders: market.accepting_orders,
        neg_risk: market.neg_risk,
        tick_size: market.tick_size,
        min_order_size: market.min_order_size,
      });
      for (const f of ["best_bid", "best_ask", "mid", "last_trade_price"]) {
        expect(typeof item[f]).toBe("string");
        expect(item[f]).toMatch(/^0\.[0-9]+$/);
      }
      expect(units(item.best_bid, 6)).toBe(units(token.book.bids[0].price, 6));
      expect(units(item.best_ask, 6)).toBe(units(token.book.asks[0].price, 6));
      expect(units(item.last_trade_price, 6)).toBe(units(token.last_trade_price, 6));
    }
  });

  test("an API key is not needed, and a wrong one is ignored", async () => {
    const res = await t.call("GET", "/v1/markets?limit=1", { key: "bk_not_a_real_key" });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    const one = await t.call("GET", `/v1/markets/${FIXTURE_TOKENS[0].token.token_id}`, { key: "bk_not_a_real_key" });
    expect(one.status).toBe(200);
  });

  test("mid is (best_bid + best_ask) / 2 exactly for every fixture token", async () => {
    const res = await t.call("GET", "/v1/markets?limit=200");
    for (const m of res.body.data) {
      // 2·mid = bid + ask, at 7 decimals.
      expect(2n * units(m.mid, 7)).toBe(units(m.best_bid, 7) + units(m.best_ask, 7));
    }
  });

  test("pagination: limit and next_cursor walk the whole list once", async () => {
    const full = (await t.call("GET", "/v1/markets?limit=200")).body.data.map((m: any) => m.market_id);
    for (const limit of [1, 5, 12]) {
      const { items, pages } = await allPages(t, `limit=${limit}`);
      expect(items.map((m) => m.market_id)).toEqual(full);
      expect(pages).toBe(Math.ceil(full.length / limit));
    }
    const first = await t.call("GET", "/v1/markets?limit=5");
    expect(first.body.data).toHaveLength(5);
    expect(typeof first.body.next_cursor).toBe("string");
    const second = await t.call("GET", `/v1/markets?limit=5&cursor=${first.body.next_cursor}`);
    expect(second.body.data.map((m: any) => m.market_id)).toEqual(full.slice(5, 10));
    // Exactly one page: no cursor.
    expect((await t.call("GET", `/v1/markets?limit=${full.length}`)).body.next_cursor).toBeNull();
  });

  test("pagination: bad limits and cursors are 400 invalid_request", async () => {
    for (const q of ["limit=0", "limit=201", "limit=abc", "limit=1.5"]) {
      const p = expectProblem(await t.call("GET", `/v1/markets?${q}`), 400, "invalid_request");
      expect(p.errors.map((e: any) => e.path)).toContain("/query/limit");
    }
    for (const c of ["nonsense", Buffer.from("o:-1").toString("base64url"), Buffer.from("x:3").toString("base64url")]) {
      const p = expectProblem(await t.call("GET", `/v1/markets?cursor=${c}`), 400, "invalid_request");
      expect(p.errors.map((e: any) => e.path)).toContain("/query/cursor");
    }
    // A cursor past the end is an empty last page.
    const past = await t.call("GET", `/v1/markets?cursor=${Buffer.from("o:1000").toString("base64url")}`);
    expect(past.status).toBe(200);
    expect(past.body).toEqual({ data: [], next_cursor: null });
  });

  test("filters: category (case-insensitive), active, closed, combined with pagination", async () => {
    const politics = (await t.call("GET", "/v1/markets?category=politics")).body.data;
    expect(politics).toHaveLength(FIXTURE_TOKENS.filter((x) => x.market.category === "politics").length);
    expect(politics.every((m: any) => m.category === "politics")).toBe(true);
    expect((await t.call("GET", "/v1/markets?category=POLITICS")).body.data).toEqual(politics);

    const tradeable = (await t.call("GET", "/v1/markets?active=true&closed=false")).body.data;
    expect(tradeable.map((m: any) => m.market_id)).toEqual(
      FIXTURE_TOKENS.filter((x) => x.market.active && !x.market.closed).map((x) => x.token.token_id),
    );
    const closed = (await t.call("GET", "/v1/markets?closed=true")).body.data;
    expect(closed.length).toBeGreaterThan(0);
    expect(closed.every((m: any) => m.closed)).toBe(true);
    const active = (await t.call("GET", "/v1/markets?active=true")).body.data;
    expect(active).toHaveLength(FIXTURE_TOKENS.filter((x) => x.market.active).length);
    expect((await t.call("GET", "/v1/markets?active=false")).body).toEqual({ data: [], next_cursor: null });
    expect((await t.call("GET", "/v1/markets?category=no-such-category")).body).toEqual({ data: [], next_cursor: null });

    const econ = (await t.call("GET", "/v1/markets?category=economics&closed=false")).body.data;
    const paged = await allPages(t, "category=economics&closed=false&limit=1");
    expect(paged.items).toEqual(econ);
    expect(paged.pages).toBe(econ.length);
  });

  test("filters: bad values and unknown parameters are 400 invalid_request", async () => {
    for (const [q, path] of [
      ["active=yes", "/query/active"],
      ["closed=1", "/query/closed"],
      ["category=", "/query/category"],
      ["colour=blue", "/query/colour"],
    ]) {
      const p = expectProblem(await t.call("GET", `/v1/markets?${q}`), 400, "invalid_request");
      expect(p.errors.map((e: any) => e.path)).toContain(path);
    }
  });

  test("one market by its token id equals its list item", async () => {
    const list = (await t.call("GET", "/v1/markets?limit=200")).body.data;
    for (const item of list) {
      const res = await t.call("GET", `/v1/markets/${item.market_id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(item);
    }
    // Leading zeros name the same uint256 (up to 78 digits in all).
    const short = list.find((m: any) => m.market_id.length < 78);
    const res = await t.call("GET", `/v1/markets/${"0".repeat(78 - short.market_id.length)}${short.market_id}`);
    expect(res.status).toBe(200);
    expect(res.body.market_id).toBe(short.market_id);
  });

  test("an unknown token id is 404 not_found", async () => {
    for (const id of ["0", "1", UINT256_MAX, `${FIXTURE_TOKENS[0].token.token_id.slice(0, -1)}0`]) {
      if (FIXTURE_TOKENS.some((x) => x.token.token_id === id)) continue;
      const p = expectProblem(await t.call("GET", `/v1/markets/${id}`), 404, "not_found");
      expect(p.detail).toBe("market not found");
    }
  });

  test("a malformed token id is 400 invalid_request", async () => {
    const tooBig = (1n << 256n).toString();
    for (const id of ["abc", "-1", "1.5", "0x1f", "1e5", "9".repeat(79), tooBig, "%20"]) {
      const p = expectProblem(await t.call("GET", `/v1/markets/${id}`), 400, "invalid_request");
      expect(p.errors[0].path).toBe("/params/market_id");
    }
  });

  test("mid carries one more decimal than the book when bid + ask is odd; one-sided and empty books give nulls", async () => {
    const odd = await createTestApp(await sharedPglite(), {
      venue: venueWith({ bids: [{ price: "0.481", size: "10" }], asks: [{ price: "0.484", size: "10" }] }, "0.482"),
    });
    const m = (await odd.call("GET", "/v1/markets/123456789")).body;
    expect(m).toMatchObject({ best_bid: "0.481", best_ask: "0.484", mid: "0.4825", last_trade_price: "0.482", tick_size: "0.001" });

    const oneSided = await createTestApp(await sharedPglite(), { venue: venueWith({ bids: [{ price: "0.2", size: "10" }], asks: [] }, null) });
    expect((await oneSided.call("GET", "/v1/markets/123456789")).body).toMatchObject({
      best_bid: "0.2",
      best_ask: null,
      mid: null,
      last_trade_price: null,
    });

    const empty = await createTestApp(await sharedPglite(), { venue: venueWith({ bids: [], asks: [] }, "0.5") });
    const e = (await empty.call("GET", "/v1/markets")).body.data[0];
    expect(e).toMatchObject({ best_bid: null, best_ask: null, mid: null, last_trade_price: "0.5" });
  });

  test("version: a market of the file without one is v1; a v2 market says v2 in the list and alone", async () => {
    const book = { bids: [{ price: "0.4", size: "10" }], asks: [] };
    const v1 = await createTestApp(await sharedPglite(), { venue: venueWith(book, null, "0.001", "v1") });
    expect((await v1.call("GET", "/v1/markets/123456789")).body.version).toBe("v1");
    const v2 = await createTestApp(await sharedPglite(), { venue: venueWith(book, null, "0.001", "v2") });
    expect((await v2.call("GET", "/v1/markets")).body.data[0].version).toBe("v2");
    expect((await v2.call("GET", "/v1/markets/123456789")).body.version).toBe("v2");
    expect(() => venueWith(book, null, "0.001", "v3")).toThrow(/version: must be "v1" or "v2"/);
  });

  test("a venue that does not answer is 503, not a 500", async () => {
    const paper = venueWith({ bids: [], asks: [] }, null);
    const down: Venue = Object.assign(Object.create(paper), {
      listMarkets: async () => {
        throw new VenueUnavailableError("connection refused");
      },
      getMarketByToken: async () => {
        throw new VenueUnavailableError("connection refused");
      },
    });
    const d = await createTestApp(await sharedPglite(), { venue: down });
    const p = expectProblem(await d.call("GET", "/v1/markets"), 503, "venue_unavailable");
    expect(p.detail).not.toContain("connection refused");
    expectProblem(await d.call("GET", "/v1/markets/123456789"), 503, "venue_unavailable");
  });

  test("the OpenAPI document describes both routes as public", async () => {
    const doc = (await t.call("GET", "/openapi")).body;
    expect(doc.paths["/v1/markets"]?.get?.security).toEqual([]);
    expect(doc.paths["/v1/markets/{market_id}"]?.get?.security).toEqual([]);
  });
});
