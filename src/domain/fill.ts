/**
 * A fill as the order's record holds it: what a source of the venue's truth reported
 * (src/domain/venue-report.ts), as the actor hands it to the fill store. Amounts are 6-decimal units.
 */
import type { FillStatus } from "./venue-report.ts";

/** One fill to record (a `failed` one is never recorded: it is a fill taken back). */
export interface FillRecord {
  fillKey: string;
  tradeId?: string;
  txHash?: string;
  logIndex?: number;
  blockNumber?: bigint;
  source: string;
  price: string;
  sharesUnits: bigint;
  usdcUnits: bigint;
  feeUnits: bigint;
  status: Exclude<FillStatus, "failed">;
  at: Date;
  /**
   * Set for a fill known from a placement's answer (source `rest`): the trades (`trade:<id>`) and
   * transactions (`tx:<hash>`) the answer named. Such a fill counts what the sources' own reports of
   * those trades have not accounted for yet (`coveredBy`), so a trade counts once.
   */
  covers?: string[];
}

/** What an order's counted fills add up to (fills taken back count for nothing). */
export interface FillTotals {
  sharesUnits: bigint;
  usdcUnits: bigint;
}
