/**
 * Which of an order's fill rows count, so that a trade counts once whichever sources report it and in
 * whatever order (issue #22: "a fill seen by two sources, or twice, counts once"). Pure: the fill
 * store calls it on all of an order's rows after every change, under the order's row lock, and writes
 * back what changed (docs/decisions.md, "A trade counts once in every order of arrival").
 *
 * The sources name a trade differently: the venue's trade reports (user channel, REST catch-up, the
 * paper venue) by trade id, and by transaction (no log index) only from MINED on; the chain by
 * transaction and log index, never by trade id. Rows that one report shows to be the same fill are
 * merged into one row by the store (same key, same trade id, same log, or a trade report naming a
 * transaction and the chain's one log of that order in it with the same shares). What remains, this
 * module links:
 *
 * - Exact, once a trade report names its transaction: an order's fills in a transaction are what the
 *   chain logged for that order in it. A trade report naming a transaction of which the chain has a
 *   live log of this order (of no other trade id) counts nothing, whatever the shares: it is a twin of
 *   that log's row (a log may be the sum of several trades of one order in one transaction).
 * - Provisional, before: a trade report that names no transaction yet (MATCHED) and a chain log that
 *   no trade report names, with the same shares, are taken as one trade (the chain's row counts, the
 *   report is its twin). Pairs are made in arrival order (row id), preferring equal USDC. Nothing is
 *   merged: when the report later names its transaction, the exact rule takes over, and a pair that
 *   proves wrong (another transaction) comes apart and its rows pair again or count on their own.
 *   The one ambiguity: until a transaction is named, a MATCHED of one trade and the chain's log of
 *   another trade of the same size are taken as one (the order counts one trade less until the missing
 *   report comes), and between reported trades of the same size the pairs may be crosswise (no count
 *   changes, only the trade id shown beside a log until the transactions are known).
 * - A placement's answer (the row with `covers`) counts what the sources' reports of the trades it
 *   names have not accounted for: its answered amounts less the shares of each covered row, in
 *   arrival order (`coveredBy`). A covered row taken back still accounts for its part (that match
 *   failed); a twin accounts for nothing (its counted row does).
 */
import type { FillStatus } from "./venue-report.ts";

/** What the linking reads of one fill row. */
export interface FillFacts {
  id: number;
  tradeId: string | null;
  txHash: string | null;
  logIndex: number | null;
  sharesUnits: bigint;
  usdcUnits: bigint;
  status: FillStatus;
  /** Set on a placement answer's row only. */
  covers: readonly string[] | null;
  /** A placement answer's row: the shares and USDC the answer said matched (null on older rows: its current amounts). */
  placedSharesUnits: bigint | null;
  placedUsdcUnits: bigint | null;
}

export interface FillReckoning {
  /** Every row's twin: the id of the row that counts for it, or null when it counts on its own (or is taken back). */
  twinOf: Map<number, number | null>;
  /** Every placement answer's row: the shares and USDC it counts. */
  placement: Map<number, { sharesUnits: bigint; usdcUnits: bigint }>;
}

/** The links and the placement answers' amounts of one order's rows (any order; ids give the arrival order). */
export function reckonFills(input: readonly FillFacts[]): FillReckoning {
  const rows = [...input].sort((a, b) => a.id - b.id);
  const twinOf = new Map<number, number | null>(rows.map((r) => [r.id, null]));
  const live = rows.filter((r) => r.status !== "failed" && r.covers === null);
  const logs = live.filter((r) => r.logIndex !== null);
  const reports = live.filter((r) => r.logIndex === null);

  // Exact: a trade report naming a transaction the chain logged for this order (a log of another
  // trade id is another trade's: then this one's log is not in yet).
  const named = new Set<string>();
  for (const r of reports) {
    if (!r.txHash) continue;
    named.add(r.txHash);
    const log = logs.find((l) => l.txHash === r.txHash && (l.tradeId === null || l.tradeId === r.tradeId));
    if (log) twinOf.set(r.id, log.id);
  }

  // Provisional: a trade report with no transaction yet and a log no report names, same shares.
  const waiting = reports.filter((r) => r.txHash === null && r.tradeId !== null);
  const paired = new Set<number>();
  for (const l of logs) {
    if (l.tradeId !== null || (l.txHash !== null && named.has(l.txHash))) continue;
    const same = waiting.filter((r) => !paired.has(r.id) && r.sharesUnits === l.sharesUnits);
    const r = same.find((x) => x.usdcUnits === l.usdcUnits) ?? same[0];
    if (!r) continue;
    paired.add(r.id);
    twinOf.set(r.id, l.id);
  }

  // Placement answers: their amounts less what the covered rows account for.
  const placement = new Map<number, { sharesUnits: bigint; usdcUnits: bigint }>();
  for (const p of rows) {
    if (p.covers === null) continue;
    const placed = p.placedSharesUnits ?? p.sharesUnits;
    const placedUsdc = p.placedUsdcUnits ?? p.usdcUnits;
    let left = placed;
    for (const r of rows) {
      if (left <= 0n) break;
      if (r.covers !== null || twinOf.get(r.id) !== null) continue;
      if (!coveredBy(p.covers, r)) continue;
      left -= r.sharesUnits < left ? r.sharesUnits : left;
    }
    placement.set(p.id, { sharesUnits: left, usdcUnits: left <= 0n ? 0n : placedUsdc - (placedUsdc * (placed - left)) / placed });
  }
  return { twinOf, placement };
}

/**
 * Whether a source's fill (`f`) is one of the trades a placement's answer named (`covers`). It is
 * when it shares a trade id or a transaction with them; it is not when it carries a kind of name the
 * answer gave and that name differs (another trade: a later fill of the resting order); otherwise
 * (nothing to compare: the chain's log against an answer that named trades only) it is taken as one
 * of them, in the order reported: the placement's matches are the order's first fills.
 */
export function coveredBy(covers: readonly string[], f: { tradeId: string | null; txHash: string | null }): "named" | "unnamed" | false {
  const trades = covers.filter((k) => k.startsWith("trade:"));
  const txs = covers.filter((k) => k.startsWith("tx:"));
  if (f.tradeId && trades.includes(`trade:${f.tradeId}`)) return "named";
  if (f.txHash && txs.includes(`tx:${f.txHash.toLowerCase()}`)) return "named";
  if (f.tradeId && trades.length) return false;
  if (f.txHash && txs.length) return false;
  return "unnamed";
}
