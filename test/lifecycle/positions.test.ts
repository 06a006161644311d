/** Positions from fills at average cost (src/domain/positions.ts): pure arithmetic, exact units. */
import { expect, test } from "bun:test";
import { averagePriceUnits, markUnits, positionsFrom, unrealizedUnits } from "../../src/domain/positions.ts";

const buy = (tokenId: string, shares: bigint, usdc: bigint) => ({ tokenId, side: "buy" as const, sharesUnits: shares, usdcUnits: usdc });
const sell = (tokenId: string, shares: bigint, usdc: bigint) => ({ tokenId, side: "sell" as const, sharesUnits: shares, usdcUnits: usdc });

test("buys at two prices average; a partial sell realizes against the average; a full sell closes", () => {
  // 10 at 0.40 and 10 at 0.60: 20 shares, cost 10, average 0.50.
  let [p] = positionsFrom([buy("T", 10_000_000n, 4_000_000n), buy("T", 10_000_000n, 6_000_000n)]);
  expect(p).toEqual({ tokenId: "T", sharesUnits: 20_000_000n, costUnits: 10_000_000n, realizedUnits: 0n });
  expect(averagePriceUnits(p)).toBe(500_000n);
  // Sell 5 at 0.70: +1.00 realized (5 × 0.20), 15 left at cost 7.50.
  [p] = positionsFrom([buy("T", 10_000_000n, 4_000_000n), buy("T", 10_000_000n, 6_000_000n), sell("T", 5_000_000n, 3_500_000n)]);
  expect(p).toEqual({ tokenId: "T", sharesUnits: 15_000_000n, costUnits: 7_500_000n, realizedUnits: 1_000_000n });
  // Marked at 0.45: 15 × 0.45 − 7.50 = −0.75.
  expect(unrealizedUnits(p, 450_000n)).toBe(-750_000n);
  // Sell the rest at 0.30: −3.00 more realized; nothing held, nothing left at cost.
  [p] = positionsFrom([buy("T", 10_000_000n, 4_000_000n), buy("T", 10_000_000n, 6_000_000n), sell("T", 5_000_000n, 3_500_000n), sell("T", 15_000_000n, 4_500_000n)]);
  expect(p).toEqual({ tokenId: "T", sharesUnits: 0n, costUnits: 0n, realizedUnits: -2_000_000n });
  expect(averagePriceUnits(p)).toBe(0n);
});

test("shares sold beyond those bought here (held from elsewhere) realize nothing and never go negative; tokens stay apart", () => {
  const ps = positionsFrom([buy("A", 4_000_000n, 2_000_000n), sell("A", 10_000_000n, 6_000_000n), sell("B", 1_000_000n, 500_000n), buy("B", 2_000_000n, 800_000n)]);
  // A: only the 4 held realize: 4 × 0.60 − 2.00 = 0.40.
  expect(ps[0]).toEqual({ tokenId: "A", sharesUnits: 0n, costUnits: 0n, realizedUnits: 400_000n });
  // B: the sell came before any buy: nothing realized; then 2 bought.
  expect(ps[1]).toEqual({ tokenId: "B", sharesUnits: 2_000_000n, costUnits: 800_000n, realizedUnits: 0n });
});

test("the mark is the mid, one side alone, or none", () => {
  expect(markUnits(480_000n, 500_000n)).toBe(490_000n);
  expect(markUnits(null, 500_000n)).toBe(500_000n);
  expect(markUnits(480_000n, null)).toBe(480_000n);
  expect(markUnits(null, null)).toBeNull();
});
