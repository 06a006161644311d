import { toUnits, USDC_DECIMALS } from "../src/domain/units.ts";

/** Whether an intent's size (exact 6-decimal units) is strictly above approval_threshold_usdc; null or absent: never. */
export function aboveThreshold(sizeUnits: bigint, threshold: number | null | undefined): boolean {
  if (threshold === null || threshold === undefined) return false;
  return sizeUnits > toUnits(threshold, USDC_DECIMALS, "floor");
}
