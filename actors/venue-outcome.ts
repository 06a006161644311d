import type { OrderPatch } from "./order-patch.ts";

/** What happened when an order was sent to the venue. */
export type VenueOutcome =
  | { kind: "accepted"; venueOrderId: string; status: "open" | "filled"; filledUnits: bigint }
  | { kind: "rejected" }
  | { kind: "unknown" }
  | { kind: "not_sent" };

/** The change a venue outcome makes to the tracked order; null: none (nothing was sent). */
export function outcomePatch(outcome: VenueOutcome): OrderPatch | null {
  switch (outcome.kind) {
    case "accepted":
      return { status: outcome.status, venueOrderId: outcome.venueOrderId, filledUnits: outcome.filledUnits };
    case "rejected":
      return { status: "rejected" };
    case "unknown":
      return { status: "unknown" };
    case "not_sent":
      return null;
  }
}
