import { describe, expect, test } from "bun:test";
import { checkMarketFilters } from "../../src/risk/checks/market-filters.ts";
import { CONDITION, input, market, NO, NOW_MS, YES } from "./fixtures.ts";

const codes = (over: Parameters<typeof input>[0]) => checkMarketFilters(input(over)).map((f) => f.code);
const endingIn = (seconds: number) => market({ end_date: new Date(NOW_MS + seconds * 1000).toISOString() });

describe("market_filters check", () => {
  test("passes for an open, accepting market far from its end", () => {
    expect(checkMarketFilters(input())).toEqual([]);
  });

  test("market_not_found when the venue has no market; nothing else is judged", () => {
    const failures = checkMarketFilters(input({ market: null, limits: { category_allow: ["sports"] } }));
    expect(failures).toEqual([
      { check: "market_filters", code: "market_not_found", message: expect.stringContaining(YES), limit: null, actual: null },
    ]);
  });

  test("market_not_found plus market_denied when the missing token is denied", () => {
    expect(codes({ market: null, limits: { market_deny: [YES] } })).toEqual(["market_not_found", "market_denied"]);
  });

  test("market_closed when closed or not active", () => {
    expect(codes({ market: market({ closed: true }) })).toEqual(["market_closed"]);
    expect(codes({ market: market({ active: false }) })).toEqual(["market_closed"]);
    expect(codes({ market: market({ active: false, closed: true }) })).toEqual(["market_closed"]);
  });

  test("market_not_accepting_orders", () => {
    expect(codes({ market: market({ accepting_orders: false }) })).toEqual(["market_not_accepting_orders"]);
  });

  describe("market_ends_soon", () => {
    test("exactly min_time_to_end_s left passes", () => {
      expect(codes({ market: endingIn(3600) })).toEqual([]);
    });

    test("one millisecond less fails, limit and actual in seconds", () => {
      const failures = checkMarketFilters(input({ market: endingIn(3599.999) }));
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({ code: "market_ends_soon", limit: 3600, actual: 3599.999 });
    });

    test("an end date in the past fails even with a limit of 0", () => {
      expect(codes({ market: endingIn(-1), limits: { min_time_to_end_s: 0 } })).toEqual(["market_ends_soon"]);
      expect(codes({ market: endingIn(0), limits: { min_time_to_end_s: 0 } })).toEqual([]);
    });

    test("an unreadable end date fails", () => {
      const failures = checkMarketFilters(input({ market: market({ end_date: "soon" }) }));
      expect(failures).toEqual([expect.objectContaining({ code: "market_ends_soon", limit: 3600, actual: null })]);
    });
  });

  describe("market_denied", () => {
    test("by token id", () => {
      expect(codes({ limits: { market_deny: [YES] } })).toEqual(["market_denied"]);
    });

    test("a denied token id does not deny the other outcome", () => {
      expect(codes({ limits: { market_deny: [NO] } })).toEqual([]);
    });

    test("by condition id, for both outcomes, case-insensitively", () => {
      expect(codes({ limits: { market_deny: [CONDITION.toLowerCase()] } })).toEqual(["market_denied"]);
      expect(codes({ intent: { market_id: NO }, limits: { market_deny: [CONDITION] } })).toEqual(["market_denied"]);
    });
  });

  describe("category_denied", () => {
    test("category in category_deny (case-insensitive)", () => {
      expect(codes({ limits: { category_deny: ["Weather"] } })).toEqual(["category_denied"]);
      expect(codes({ limits: { category_deny: ["sports"] } })).toEqual([]);
    });

    test("category_allow set and the category not in it", () => {
      expect(codes({ limits: { category_allow: ["sports", "politics"] } })).toEqual(["category_denied"]);
      expect(codes({ limits: { category_allow: ["sports", "weather"] } })).toEqual([]);
    });

    test("reported once when denied and not allowed", () => {
      expect(codes({ limits: { category_deny: ["weather"], category_allow: ["sports"] } })).toEqual(["category_denied"]);
    });

    test("deny wins over allow", () => {
      expect(codes({ limits: { category_deny: ["weather"], category_allow: ["weather"] } })).toEqual(["category_denied"]);
    });
  });

  test("all failing filters are reported, in the table's order", () => {
    const m = market({ closed: true, accepting_orders: false, end_date: new Date(NOW_MS).toISOString() });
    expect(codes({ market: m, limits: { market_deny: [CONDITION], category_deny: ["weather"] } })).toEqual([
      "market_closed",
      "market_not_accepting_orders",
      "market_ends_soon",
      "market_denied",
      "category_denied",
    ]);
  });
});
