import { describe, expect, test } from "bun:test";
import { evaluateRisk, RISK_CHECKS } from "../../src/risk/evaluate-risk.ts";
import { CHECK_NAMES, type RiskInput } from "../../src/risk/types.ts";
import { book, input, levels, market, NOW_MS } from "./fixtures.ts";

describe("evaluateRisk", () => {
  test("the checks run in the contract's fixed order", () => {
    expect(CHECK_NAMES).toEqual([
      "breaker",
      "market_filters",
      "order_size",
      "daily_volume",
      "concentration",
      "kelly_cap",
      "price_sanity",
      "liquidity_impact",
    ]);
    expect(RISK_CHECKS.map(([name]) => name)).toEqual([...CHECK_NAMES]);
  });

  test("approves a clean intent with all eight checks passed", () => {
    const result = evaluateRisk(input());
    expect(result).toEqual({
      approved: true,
      checks: CHECK_NAMES.map((check) => ({ check, passed: true })),
      failures: [],
    });
  });

  test("collects every failure of every check, in the fixed order", () => {
    const result = evaluateRisk(
      input({
        intent: { side: "buy", size_usdc: 150, price: 0.505 },
        state: {
          breaker: { tripped: true, reason: "manual" },
          daily_used_usdc_units: 900_000_000n,
          market_exposure_usdc_units: 100_000_000n,
        },
        market: market({ closed: true }),
        book: book({ timestamp_ms: NOW_MS - 61_000 }),
      }),
    );
    expect(result.approved).toBe(false);
    expect(result.checks).toEqual(CHECK_NAMES.map((check) => ({ check, passed: false })));
    expect(result.failures.map((f) => [f.check, f.code])).toEqual([
      ["breaker", "breaker_tripped"],
      ["market_filters", "market_closed"],
      ["order_size", "order_too_large"],
      ["daily_volume", "daily_volume_exceeded"],
      ["concentration", "concentration_exceeded"],
      ["kelly_cap", "kelly_cap_exceeded"],
      ["price_sanity", "price_off_tick"],
      ["liquidity_impact", "book_stale"],
    ]);
  });

  test("limit and actual are JSON numbers (or null), and the result serializes", () => {
    const result = evaluateRisk(
      input({ intent: { size_usdc: 100.5, price: 0.505 }, state: { daily_used_usdc_units: 999_000_000n } }),
    );
    expect(result.failures.length).toBeGreaterThan(0);
    for (const f of result.failures) {
      expect(f.limit === null || typeof f.limit === "number").toBe(true);
      expect(f.actual === null || typeof f.actual === "number").toBe(true);
      expect(typeof f.message).toBe("string");
    }
    const daily = result.failures.find((f) => f.code === "daily_volume_exceeded")!;
    expect(daily).toMatchObject({ limit: 1000, actual: 1099.5 });
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  });

  test("only the failing checks are marked failed", () => {
    const result = evaluateRisk(input({ intent: { size_usdc: 0.5 } }));
    expect(result.checks.filter((c) => !c.passed).map((c) => c.check)).toEqual(["order_size"]);
    expect(result.approved).toBe(false);
  });

  test("0.1 + 0.2 style decimals are exact end to end", () => {
    const result = evaluateRisk(
      input({
        intent: { size_usdc: 0.2, price: 0.02 }, // 10 shares
        limits: { daily_volume_usdc: 0.3, min_order_usdc: 0.1, price_band: 1 },
        state: { daily_used_usdc_units: 100_000n },
      }),
    );
    expect(result.failures).toEqual([]);
    expect(result.approved).toBe(true);
  });

  test("an unknown market fails once, with market_not_found; the rest pass", () => {
    const result = evaluateRisk(input({ market: null, book: null }));
    expect(result.failures.map((f) => f.code)).toEqual(["market_not_found"]);
    expect(result.checks.filter((c) => !c.passed).map((c) => c.check)).toEqual(["market_filters"]);
  });

  test("a check that throws becomes check_error, never a pass", () => {
    const result = evaluateRisk(input({ book: book({ asks: levels(["not-a-price", "10"]) }) }));
    expect(result.approved).toBe(false);
    expect(result.failures).toEqual([
      { check: "price_sanity", code: "check_error", message: expect.stringContaining("price_sanity"), limit: null, actual: null },
      { check: "liquidity_impact", code: "check_error", message: expect.stringContaining("liquidity_impact"), limit: null, actual: null },
    ]);
    expect(result.checks.find((c) => c.check === "price_sanity")!.passed).toBe(false);
  });

  test("a size that is not a number is rejected without throwing", () => {
    const result = evaluateRisk(input({ intent: { size_usdc: Number.NaN } }));
    expect(result.approved).toBe(false);
    expect(result.failures.map((f) => [f.check, f.code])).toEqual([
      ["order_size", "order_too_small"],
      ["daily_volume", "check_error"],
      ["concentration", "check_error"],
      ["kelly_cap", "check_error"],
    ]);
  });

  test("a malformed input never throws", () => {
    const broken = { ...input(), limits: undefined } as unknown as RiskInput;
    const result = evaluateRisk(broken);
    expect(result.approved).toBe(false);
    expect(result.checks).toHaveLength(8);
    expect(result.failures.every((f) => f.code === "check_error")).toBe(true);
    expect(result.failures.map((f) => f.check)).toEqual([
      "market_filters",
      "order_size",
      "daily_volume",
      "concentration",
      "kelly_cap",
      "price_sanity",
      "liquidity_impact",
    ]);
  });

  test("evaluation does not stop at the first failure", () => {
    const result = evaluateRisk(input({ state: { breaker: { tripped: true, reason: "kill" } }, intent: { price: 0.61 } }));
    expect(result.failures.map((f) => f.code)).toEqual(["breaker_tripped", "price_far_from_mid"]);
  });
});
