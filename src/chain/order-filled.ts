/**
 * The exchanges' `OrderFilled` event (CTF Exchange V2, its neg-risk twin and ExchangeV3 share it) and
 * what one log says about the order it names, as a fill of that order.
 *
 * Which order a log is the fill of: the exchange logs one `OrderFilled` per order filled in a match,
 * `orderHash` being that order's EIP-712 hash and `maker` that order's maker (its funds wallet). A
 * resting (maker) order's log has the taker order's maker as `taker`; the taker order's own log has the
 * exchange as `taker`. So a log is a fill of the order `orderHash`, placed by the wallet `maker`; the
 * `taker` topic names a counterparty and never one of our orders.
 *
 * Amounts are that order's: `side` is its side (0 BUY, 1 SELL), `makerAmountFilled` what its maker gave
 * and `takerAmountFilled` what it received (CTF Exchange V2 mixins/Trading.sol). A BUY gives USDC for
 * shares, a SELL gives shares for USDC; the fee (in USDC) is separate: a SELL's proceeds are
 * `takerAmountFilled - fee`, a BUY pays `fee` on top.
 */
import { decodeEventLog, parseAbiItem, type Log } from "viem";
import type { FillReport, FillStatus } from "../domain/venue-report.ts";
import { ratio, toDecimalString, div } from "../domain/ratio.ts";

export const ORDER_FILLED = parseAbiItem(
  "event OrderFilled(bytes32 indexed orderHash, address indexed maker, address indexed taker, uint8 side, uint256 tokenId, uint256 makerAmountFilled, uint256 takerAmountFilled, uint256 fee, bytes32 builder, bytes32 metadata)",
);

export interface OrderFilledArgs {
  orderHash: `0x${string}`;
  maker: `0x${string}`;
  taker: `0x${string}`;
  side: number;
  tokenId: bigint;
  makerAmountFilled: bigint;
  takerAmountFilled: bigint;
  fee: bigint;
}

/** The shares and USDC of one fill of an order, from its side and its maker/taker amounts; price = USDC / shares. */
export function fillAmounts(side: number, makerAmountFilled: bigint, takerAmountFilled: bigint): { sharesUnits: bigint; usdcUnits: bigint; price: string } {
  if (side !== 0 && side !== 1) throw new RangeError(`OrderFilled side must be 0 (BUY) or 1 (SELL), got ${side}`);
  const sharesUnits = side === 0 ? takerAmountFilled : makerAmountFilled;
  const usdcUnits = side === 0 ? makerAmountFilled : takerAmountFilled;
  // Both amounts have 6 decimals, so the ratio is the price per share; 6 decimals, as the venue's prices.
  const price = sharesUnits === 0n ? "0" : toDecimalString(div(ratio(usdcUnits), ratio(sharesUnits)), 6);
  return { sharesUnits, usdcUnits, price };
}

/** The fill key of a log: `tx:<transaction hash>:<log index>` (lowercase). */
export function chainFillKey(txHash: string, logIndex: number): string {
  return `tx:${txHash.toLowerCase()}:${logIndex}`;
}

/** A log as getLogs gives it (mined, so its block and position are known). */
export type MinedLog = Log<bigint, number, false>;

/** Decodes an `OrderFilled` log; null for any other log. */
export function decodeOrderFilled(log: MinedLog): OrderFilledArgs | null {
  try {
    const d = decodeEventLog({ abi: [ORDER_FILLED], data: log.data, topics: log.topics, strict: true });
    if (d.eventName !== "OrderFilled") return null;
    const a = d.args;
    return {
      orderHash: a.orderHash.toLowerCase() as `0x${string}`,
      maker: a.maker.toLowerCase() as `0x${string}`,
      taker: a.taker.toLowerCase() as `0x${string}`,
      side: a.side,
      tokenId: a.tokenId,
      makerAmountFilled: a.makerAmountFilled,
      takerAmountFilled: a.takerAmountFilled,
      fee: a.fee,
    };
  } catch {
    return null;
  }
}

/** The fill report of one decoded log of a mined block; null when its side is not BUY or SELL. */
export function fillReportOf(log: MinedLog, args: OrderFilledArgs, status: FillStatus, at: Date): FillReport | null {
  if (args.side !== 0 && args.side !== 1) return null;
  const { sharesUnits, usdcUnits, price } = fillAmounts(args.side, args.makerAmountFilled, args.takerAmountFilled);
  const txHash = log.transactionHash.toLowerCase() as `0x${string}`;
  return {
    kind: "fill",
    ref: { orderHash: args.orderHash, venueOrderId: args.orderHash },
    source: "chain",
    fillKey: chainFillKey(txHash, log.logIndex),
    txHash,
    logIndex: log.logIndex,
    blockNumber: log.blockNumber,
    sharesUnits,
    usdcUnits,
    feeUnits: args.fee,
    price,
    status,
    at,
  };
}
