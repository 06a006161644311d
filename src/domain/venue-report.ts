/**
 * What a source of the venue's truth (the chain's `OrderFilled` logs, the venue's user channel and its
 * REST catch-up, the paper venue) reports about an order. Sources never write an order: they hand a
 * report to a `VenueReportSink` that the composition root wires, which finds the owning agent and
 * delivers the report to its actor as a message; the actor applies it through the order lifecycle
 * table (src/domain/order-lifecycle.ts) and is the only writer of the order's status and counts.
 *
 * Amounts are 6-decimal base units (USDC and outcome-token shares both have 6 decimals on Polymarket).
 */

export type VenueReportSource = "chain" | "user_channel" | "rest" | "paper";

/** How an order is named by a source: its EIP-712 hash (chain, payload orders), or the venue's id. */
export interface OrderRef {
  /** The EIP-712 hash of the order the agent signed (lowercase 0x hex). */
  orderHash?: `0x${string}`;
  /** The venue's order id (on Polymarket this is the order hash as well; the paper venue has its own). */
  venueOrderId?: string;
}

/**
 * A trade's state as the venue reports it. `matched` (user channel MATCHED), `mined`, `confirmed`
 * (on the chain with enough confirmations), `retrying`; `failed` takes the fill back.
 */
export type FillStatus = "matched" | "mined" | "confirmed" | "retrying" | "failed";

export interface FillReport {
  kind: "fill";
  ref: OrderRef;
  source: VenueReportSource;
  /**
   * The key that makes a fill count once across sources and repeats: `trade:<venue trade id>` when
   * the venue names the trade, else `tx:<transaction hash>:<log index>`. A source that knows both
   * gives `tradeId` and `txHash`/`logIndex` too, so the fill is matched across sources.
   */
  fillKey: string;
  tradeId?: string;
  txHash?: `0x${string}`;
  logIndex?: number;
  blockNumber?: bigint;
  /** Shares of the outcome token this order bought or sold in this fill (6-decimal units). */
  sharesUnits: bigint;
  /** USDC paid (buy) or received (sell) in this fill (6-decimal units). */
  usdcUnits: bigint;
  /** Fee charged in this fill (6-decimal units of what the fee is charged in). */
  feeUnits: bigint;
  /** Decimal text of the price per share of this fill. */
  price: string;
  status: FillStatus;
  at: Date;
  /**
   * Only on a fill known from a placement's answer (source `rest`, key `order:<venue order id>:placement`):
   * the trades (`trade:<id>`) and transactions (`tx:<hash>`) the answer named, possibly none. That fill
   * stands for the order's matches at placement until the sources report them one by one; each such
   * report takes its shares out of it, so a trade counts once (docs/decisions.md).
   */
  covers?: string[];
}

/** A fill taken back: its block was reorganised away, or the venue reported the trade FAILED. */
export interface FillRevertedReport {
  kind: "fill_reverted";
  ref: OrderRef;
  source: VenueReportSource;
  fillKey: string;
  reason: "reorg" | "trade_failed";
  at: Date;
}

/** The venue cancelled the order (cancelled elsewhere, by the venue, or a GTD order expired). */
export interface OrderClosedReport {
  kind: "cancelled" | "expired";
  ref: OrderRef;
  source: VenueReportSource;
  /** What the venue says was matched in all (6-decimal share units), when it says. */
  sizeMatchedUnits?: bigint;
  at: Date;
}

/** The venue accepted the order onto its book (user channel PLACEMENT). */
export interface OrderPlacedReport {
  kind: "placed";
  ref: OrderRef;
  source: VenueReportSource;
  at: Date;
}

export type VenueReport = FillReport | FillRevertedReport | OrderClosedReport | OrderPlacedReport;

/** Where sources hand their reports. Never throws; an order it cannot find is logged and dropped. */
export interface VenueReportSink {
  report(r: VenueReport): void;
}
