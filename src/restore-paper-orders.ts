/**
 * Start-up step of the composition root: the embedded paper venue keeps its books in memory, so the
 * orders this database knows to be resting on it (`open` GTC/GTD orders) are handed back to it before
 * the server takes requests and before the start-up reconciliation runs (docs/decisions.md, "The
 * paper venue restores its resting orders"). Other venues keep their own books: nothing to do.
 */
import type { OrderRepository, RestingOrderRow } from "./db/order-repository.ts";
import type { Logger } from "./observability/logger.ts";
import { PaperVenue, type RestingOrderRecord, type RestoreReport } from "./venues/paper/paper-venue.ts";
import type { Venue } from "./venues/venue.ts";

export async function restorePaperOrders(parts: { venue: Venue; orderRepo: OrderRepository; logger: Logger }): Promise<RestoreReport | null> {
  const { venue, orderRepo, logger } = parts;
  if (!(venue instanceof PaperVenue)) return null;
  const rows = await orderRepo.restingAtVenue();
  const records: RestingOrderRecord[] = [];
  const skipped: RestoreReport["skipped"] = [];
  for (const row of rows) {
    const record = restingOrderRecord(row);
    if (record) records.push(record);
    else skipped.push({ venue_order_id: row.id, reason: "the order has no venue order id" });
  }
  const report = venue.restore(records);
  report.skipped.unshift(...skipped);
  if (report.restored.length || report.withdrawn) {
    logger.info("paper venue: resting orders restored", { restored: report.restored.length, withdrawn_seeded_orders: report.withdrawn });
  }
  // Ids and reasons only: no owner, no credential.
  for (const s of report.skipped.slice(0, 100)) logger.warn("paper venue: order not restored", { venue_order_id: s.venue_order_id, reason: s.reason });
  if (report.skipped.length > 100) logger.warn("paper venue: more orders not restored", { count: report.skipped.length - 100 });
  return report;
}

/**
 * The venue's record of a stored order. Its owner is the order's signer: what the paper venue records
 * for a signed order posted without L2 headers. A delegated order was recorded under its API key, which
 * is stored only sealed and is not opened for this; the paper venue never compares owners (who may
 * cancel an order is decided by the service, by the order's agent).
 */
export function restingOrderRecord(row: RestingOrderRow): RestingOrderRecord | null {
  const venueOrderId = row.venueOrderId ?? row.orderHash;
  const message = row.typedData?.message;
  if (!venueOrderId || !message) return null;
  return {
    venue_order_id: venueOrderId,
    order: message,
    order_type: row.orderType,
    expiration: row.expiration,
    filled_usdc: row.filledUnits,
    owner: message.signer,
    created_at: row.createdAt.getTime(),
  };
}
