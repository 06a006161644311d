/**
 * Positions per outcome token from an agent's fills (average cost): a buy adds its shares and what it
 * cost; a sell takes shares out at the average price, and what it received beyond that cost is realized
 * PnL. Shares sold beyond those bought here (held from elsewhere) realize nothing and never make the
 * position negative. Exact 6-decimal units throughout.
 */

export interface PositionFill {
  tokenId: string;
  side: "buy" | "sell";
  sharesUnits: bigint;
  usdcUnits: bigint;
}

export interface Position {
  tokenId: string;
  sharesUnits: bigint;
  costUnits: bigint;
  realizedUnits: bigint;
}

/** Folds fills (oldest first) into positions per token, in the order tokens were first traded. */
export function positionsFrom(fills: readonly PositionFill[]): Position[] {
  const byToken = new Map<string, Position>();
  for (const f of fills) {
    let p = byToken.get(f.tokenId);
    if (!p) byToken.set(f.tokenId, (p = { tokenId: f.tokenId, sharesUnits: 0n, costUnits: 0n, realizedUnits: 0n }));
    if (f.side === "buy") {
      p.sharesUnits += f.sharesUnits;
      p.costUnits += f.usdcUnits;
      continue;
    }
    if (p.sharesUnits <= 0n || f.sharesUnits <= 0n) continue;
    const sold = f.sharesUnits < p.sharesUnits ? f.sharesUnits : p.sharesUnits;
    const costOut = (p.costUnits * sold) / p.sharesUnits;
    const proceeds = (f.usdcUnits * sold) / f.sharesUnits;
    p.realizedUnits += proceeds - costOut;
    p.costUnits -= costOut;
    p.sharesUnits -= sold;
  }
  return [...byToken.values()];
}

/** Average price per share (6-decimal units, floored), 0 for no shares. */
export function averagePriceUnits(p: Position): bigint {
  return p.sharesUnits > 0n ? (p.costUnits * 1_000_000n) / p.sharesUnits : 0n;
}

/** The mark (price units, 6 decimals) of a book: the mid of the best bid and ask, else the side there is, else null. */
export function markUnits(bestBid: bigint | null, bestAsk: bigint | null): bigint | null {
  if (bestBid !== null && bestAsk !== null) return (bestBid + bestAsk) / 2n;
  return bestBid ?? bestAsk;
}

/** Unrealized PnL at `mark`: shares × mark − cost (6-decimal units, floored). */
export function unrealizedUnits(p: Position, mark: bigint): bigint {
  return (p.sharesUnits * mark) / 1_000_000n - p.costUnits;
}
