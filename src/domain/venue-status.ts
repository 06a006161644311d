/** What a venue's answer about an order means for our order record. */
import { toUnits } from "./units.ts";
import type { VenueOrderStatus } from "./order-status.ts";

/** A venue's filled USDC amount as 6-decimal base units (floored); 0 when absent or unreadable. */
export function filledUnitsOf(filledUsdc: string | undefined): bigint {
  try {
    return filledUsdc ? toUnits(filledUsdc, 6, "floor") : 0n;
  } catch {
    return 0n;
  }
}

/** Our status for an order the venue holds: matched → filled; unmatched (FOK/FAK) or cancelled → cancelled; else open. */
export function orderStatusFor(status: VenueOrderStatus): "open" | "filled" | "cancelled" {
  if (status === "matched") return "filled";
  if (status === "unmatched" || status === "cancelled") return "cancelled";
  return "open";
}
