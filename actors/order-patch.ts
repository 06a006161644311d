import type { TrackedOrder } from "./ports.ts";

/** The part of a tracked order a status change may touch. */
export type OrderPatch = Partial<Pick<TrackedOrder, "status" | "venueOrderId" | "filledUnits" | "fillsUsdcUnits">>;
