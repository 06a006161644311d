/**
 * Per-agent risk limits (docs/api.md#limits): the TypeBox schema, the service
 * defaults, the cross-field rules a schema cannot express, and the merge of a
 * PATCH into the current limits.
 */
// TypeBox's own builders (not Elysia's t): an integer limit is a JSON integer, as a USDC one is a JSON
// number; Elysia's t.Integer would also take a numeric string such as "5".
import { Type as t } from "@sinclair/typebox";
import type { FieldError } from "../domain/field-error.ts";
import { gt, tryFromDecimal } from "../domain/ratio.ts";
import { decimalPlaces, numberToPlainString, USDC_DECIMALS } from "../domain/units.ts";

/** Largest USDC amount a limit may carry (one billion USDC). */
const MAX_USDC = 1_000_000_000;
/** Largest entry count of the deny/allow lists, and longest entry. */
const MAX_LIST_ITEMS = 500;
const MAX_ID_LENGTH = 128;

const Usdc = (description: string) => t.Number({ minimum: 0, maximum: MAX_USDC, description });
const Fraction = (description: string) => t.Number({ minimum: 0, maximum: 1, description });
const Seconds = (max: number, description: string) => t.Integer({ minimum: 0, maximum: max, description });
const Names = (description: string) =>
  t.Array(t.String({ minLength: 1, maxLength: MAX_ID_LENGTH }), { maxItems: MAX_LIST_ITEMS, description });

const limitProperties = {
  min_order_usdc: Usdc("smallest order notional in USDC"),
  max_order_usdc: Usdc("largest order notional in USDC"),
  daily_volume_usdc: Usdc("notional that may be approved per UTC day, in USDC"),
  capital_usdc: Usdc("the agent's capital in USDC (base of the concentration and Kelly caps)"),
  max_market_exposure_pct: Fraction("largest exposure in one market as a fraction of capital_usdc"),
  kelly_fraction: Fraction("multiplier of the Kelly fraction f* (0.25 = quarter Kelly)"),
  kelly_fallback_pct: Fraction("largest order as a fraction of capital_usdc when no probability is given"),
  price_band: Fraction("largest distance of the price from the mid (or last trade)"),
  max_slippage: Fraction("largest distance of the marketable part's average price from the best price"),
  max_depth_share: Fraction("largest share of the opposite side's notional within 0.05 of mid an order may take"),
  book_max_age_s: Seconds(86_400, "oldest order book snapshot accepted, in seconds"),
  min_time_to_end_s: Seconds(10 * 365 * 86_400, "shortest time to the market's end date accepted, in seconds"),
  market_deny: Names("denied markets: outcome token ids or condition ids"),
  category_deny: Names("denied market categories"),
  category_allow: Names("when not empty, the only market categories allowed"),
  max_venue_errors: t.Integer({
    minimum: 1,
    maximum: 1000,
    description: "consecutive venue errors that trip the breaker",
  }),
  breaker_cooldown_s: Seconds(7 * 86_400, "seconds after which a breaker tripped by venue errors closes by itself"),
  // Runaway guards (docs/api.md#runaway-guards), evaluated in the breaker check.
  max_orders_per_minute: t.Integer({ minimum: 1, maximum: 100_000, description: "intents that may be approved in any 60 s" }),
  max_open_orders: t.Integer({ minimum: 1, maximum: 100_000, description: "orders that may be open, awaiting a signature or awaiting approval at once" }),
  duplicate_window_s: Seconds(3600, "an intent with the same market, side, size and price as one approved less than this many seconds ago is refused (0: off)"),
  runaway_trip_count: t.Integer({ minimum: 1, maximum: 10_000, description: "runaway refusals within 60 s that trip the breaker (reason runaway)" }),
  approval_threshold_usdc: t.Union([Usdc("above it an approved intent waits for a person's approval"), t.Null()], {
    description: "above it an approved intent waits as pending_approval for a person (null: off)",
  }),
};

export const LimitsSchema = t.Object(limitProperties, { additionalProperties: false });

/** A partial update of the limits (PATCH /v1/agents/{id}/limits); unknown fields are rejected. */
export const LimitsPatchSchema = t.Partial(t.Object(limitProperties), { additionalProperties: false });

export type Limits = typeof LimitsSchema.static;
export type LimitsPatch = typeof LimitsPatchSchema.static;

/** The service defaults of docs/api.md#limits. Frozen: copy (mergeLimits) before changing. */
export const DEFAULT_LIMITS: Limits = Object.freeze({
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
  market_deny: Object.freeze([]) as unknown as string[],
  category_deny: Object.freeze([]) as unknown as string[],
  category_allow: Object.freeze([]) as unknown as string[],
  max_venue_errors: 5,
  breaker_cooldown_s: 60,
  max_orders_per_minute: 60,
  max_open_orders: 100,
  duplicate_window_s: 5,
  runaway_trip_count: 20,
  approval_threshold_usdc: null,
}) as Limits;

const USDC_FIELDS = ["min_order_usdc", "max_order_usdc", "daily_volume_usdc", "capital_usdc"] as const;

/**
 * Rules across fields, or beyond what the schema expresses, for limits that
 * already passed LimitsSchema. Paths are JSON pointers like TypeBox's
 * ("/min_order_usdc"). An empty list means valid.
 * - USDC amounts carry at most 6 decimals (the venue's base unit).
 * - min_order_usdc ≤ max_order_usdc.
 * - approval_threshold_usdc, when set, carries at most 6 decimals too.
 */
export function validateLimits(limits: Limits): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of USDC_FIELDS) {
    const value = limits[field];
    if (typeof value !== "number" || !Number.isFinite(value)) {
      errors.push({ path: `/${field}`, message: "must be a finite number" });
      continue;
    }
    if (decimalPlaces(numberToPlainString(value)) > USDC_DECIMALS) {
      errors.push({ path: `/${field}`, message: `must have at most ${USDC_DECIMALS} decimal places` });
    }
  }
  const threshold = limits.approval_threshold_usdc;
  if (threshold !== null && threshold !== undefined) {
    if (typeof threshold !== "number" || !Number.isFinite(threshold)) errors.push({ path: "/approval_threshold_usdc", message: "must be a finite number or null" });
    else if (decimalPlaces(numberToPlainString(threshold)) > USDC_DECIMALS) {
      errors.push({ path: "/approval_threshold_usdc", message: `must have at most ${USDC_DECIMALS} decimal places` });
    }
  }
  const min = tryFromDecimal(limits.min_order_usdc);
  const max = tryFromDecimal(limits.max_order_usdc);
  if (min && max && gt(min, max)) {
    errors.push({ path: "/min_order_usdc", message: "must not be greater than max_order_usdc" });
  }
  return errors;
}

/**
 * The current limits with a patch applied: fields present in the patch replace
 * the current ones (arrays are replaced whole, not appended to); fields absent
 * or undefined keep their value. Returns a new object with fresh arrays; the
 * result should be checked with validateLimits before it is stored.
 */
export function mergeLimits(current: Limits, patch: LimitsPatch): Limits {
  const merged = { ...current } as Record<string, unknown>;
  for (const [key, value] of Object.entries(patch)) {
    if (value !== undefined && key in limitProperties) merged[key] = value;
  }
  const out = merged as Limits;
  out.market_deny = [...out.market_deny];
  out.category_deny = [...out.category_deny];
  out.category_allow = [...out.category_allow];
  return out;
}
