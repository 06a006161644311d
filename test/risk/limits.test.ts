import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import {
  DEFAULT_LIMITS,
  LimitsPatchSchema,
  LimitsSchema,
  mergeLimits,
  validateLimits,
  type Limits,
} from "../../src/risk/limits.ts";

const withField = (field: string, value: unknown) => ({ ...DEFAULT_LIMITS, [field]: value });

describe("DEFAULT_LIMITS", () => {
  test("are the defaults of CONTRACT 5.3", () => {
    expect({ ...DEFAULT_LIMITS }).toEqual({
      min_order_usdc: 1,
      max_order_usdc: 100,
      daily_volume_usdc: 1000,
      capital_usdc: 1000,
      max_market_exposure_pct: 0.2,
      kelly_fraction: 0.25,
      kelly_fallback_pct: 0.02,
      price_band: 0.1,
      max_slippage: 0.02,
      max_depth_share: 0.25,
      book_max_age_s: 60,
      min_time_to_end_s: 3600,
      market_deny: [],
      category_deny: [],
      category_allow: [],
      max_venue_errors: 5,
      breaker_cooldown_s: 60,
      max_orders_per_minute: 60,
      max_open_orders: 100,
      duplicate_window_s: 5,
      runaway_trip_count: 20,
      approval_threshold_usdc: null,
    });
  });

  test("pass the schema and the cross-field rules", () => {
    expect(Value.Check(LimitsSchema, DEFAULT_LIMITS)).toBe(true);
    expect(validateLimits(DEFAULT_LIMITS)).toEqual([]);
  });

  test("are frozen", () => {
    expect(Object.isFrozen(DEFAULT_LIMITS)).toBe(true);
    expect(Object.isFrozen(DEFAULT_LIMITS.market_deny)).toBe(true);
  });
});

describe("LimitsSchema", () => {
  test("rejects negative amounts", () => {
    for (const f of ["min_order_usdc", "max_order_usdc", "daily_volume_usdc", "capital_usdc"]) {
      expect(Value.Check(LimitsSchema, withField(f, -1))).toBe(false);
      expect(Value.Check(LimitsSchema, withField(f, 0))).toBe(true);
    }
  });

  test("keeps fractions between 0 and 1", () => {
    for (const f of ["max_market_exposure_pct", "kelly_fraction", "kelly_fallback_pct", "price_band", "max_slippage", "max_depth_share"]) {
      expect(Value.Check(LimitsSchema, withField(f, 0))).toBe(true);
      expect(Value.Check(LimitsSchema, withField(f, 1))).toBe(true);
      expect(Value.Check(LimitsSchema, withField(f, 1.01))).toBe(false);
      expect(Value.Check(LimitsSchema, withField(f, -0.01))).toBe(false);
    }
  });

  test("wants integers for counts and seconds", () => {
    for (const f of ["book_max_age_s", "min_time_to_end_s", "max_venue_errors", "breaker_cooldown_s"]) {
      expect(Value.Check(LimitsSchema, withField(f, 1.5))).toBe(false);
      expect(Value.Check(LimitsSchema, withField(f, -1))).toBe(false);
      expect(Value.Check(LimitsSchema, withField(f, 10))).toBe(true);
    }
    expect(Value.Check(LimitsSchema, withField("max_venue_errors", 0))).toBe(false);
  });

  test("wants lists of non-empty strings of bounded size", () => {
    for (const f of ["market_deny", "category_deny", "category_allow"]) {
      expect(Value.Check(LimitsSchema, withField(f, ["politics"]))).toBe(true);
      expect(Value.Check(LimitsSchema, withField(f, [""]))).toBe(false);
      expect(Value.Check(LimitsSchema, withField(f, [1]))).toBe(false);
      expect(Value.Check(LimitsSchema, withField(f, ["x".repeat(129)]))).toBe(false);
      expect(Value.Check(LimitsSchema, withField(f, Array.from({ length: 501 }, (_, i) => `c${i}`)))).toBe(false);
    }
  });

  test("rejects unknown fields and missing fields", () => {
    expect(Value.Check(LimitsSchema, { ...DEFAULT_LIMITS, extra: 1 })).toBe(false);
    const { capital_usdc: _, ...missing } = DEFAULT_LIMITS;
    expect(Value.Check(LimitsSchema, missing)).toBe(false);
  });
});

describe("LimitsPatchSchema", () => {
  test("every field is optional", () => {
    expect(Value.Check(LimitsPatchSchema, {})).toBe(true);
    expect(Value.Check(LimitsPatchSchema, { max_order_usdc: 50 })).toBe(true);
    expect(Value.Check(LimitsPatchSchema, { category_allow: ["sports"] })).toBe(true);
  });

  test("still validates the values and rejects unknown fields", () => {
    expect(Value.Check(LimitsPatchSchema, { max_order_usdc: -5 })).toBe(false);
    expect(Value.Check(LimitsPatchSchema, { kelly_fraction: 2 })).toBe(false);
    expect(Value.Check(LimitsPatchSchema, { max_orders: 5 })).toBe(false);
  });
});

describe("validateLimits", () => {
  test("min_order_usdc above max_order_usdc fails; equal passes", () => {
    expect(validateLimits({ ...DEFAULT_LIMITS, min_order_usdc: 100 })).toEqual([]);
    expect(validateLimits({ ...DEFAULT_LIMITS, min_order_usdc: 100.000001 })).toEqual([
      { path: "/min_order_usdc", message: "must not be greater than max_order_usdc" },
    ]);
  });

  test("USDC amounts carry at most 6 decimals", () => {
    expect(validateLimits({ ...DEFAULT_LIMITS, capital_usdc: 1000.123456 })).toEqual([]);
    const errors = validateLimits({ ...DEFAULT_LIMITS, capital_usdc: 1000.1234567, daily_volume_usdc: 0.0000001 });
    expect(errors.map((e) => e.path).sort()).toEqual(["/capital_usdc", "/daily_volume_usdc"]);
    expect(errors[0].message).toContain("6 decimal places");
  });

  test("fractions may carry any number of decimals", () => {
    expect(validateLimits({ ...DEFAULT_LIMITS, kelly_fraction: 0.123456789 })).toEqual([]);
  });
});

describe("mergeLimits", () => {
  test("fields in the patch replace the current ones; others stay", () => {
    const merged = mergeLimits(DEFAULT_LIMITS, { max_order_usdc: 50, category_allow: ["sports"] });
    expect(merged.max_order_usdc).toBe(50);
    expect(merged.category_allow).toEqual(["sports"]);
    expect(merged.min_order_usdc).toBe(1);
    expect(merged.capital_usdc).toBe(1000);
  });

  test("arrays are replaced whole, and undefined fields are ignored", () => {
    const current: Limits = { ...DEFAULT_LIMITS, market_deny: ["a", "b"] };
    expect(mergeLimits(current, { market_deny: ["c"] }).market_deny).toEqual(["c"]);
    expect(mergeLimits(current, { market_deny: [] }).market_deny).toEqual([]);
    expect(mergeLimits(current, { market_deny: undefined }).market_deny).toEqual(["a", "b"]);
  });

  test("does not change its inputs and returns fresh arrays", () => {
    const current: Limits = mergeLimits(DEFAULT_LIMITS, { category_deny: ["crypto"] });
    const patch = { price_band: 0.05 };
    const merged = mergeLimits(current, patch);
    expect(current.price_band).toBe(0.1);
    expect(patch).toEqual({ price_band: 0.05 });
    merged.category_deny.push("sports");
    expect(current.category_deny).toEqual(["crypto"]);
    expect(DEFAULT_LIMITS.category_deny).toEqual([]);
  });

  test("ignores keys that are not limits", () => {
    const merged = mergeLimits(DEFAULT_LIMITS, { nope: 1 } as never);
    expect("nope" in merged).toBe(false);
  });
});
