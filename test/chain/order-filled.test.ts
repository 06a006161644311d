/**
 * One OrderFilled log as a fill of the order it names (the exchange's semantics: `side` and the amounts
 * are that order's; maker amount = what its maker gave), and the chain settings.
 */
import { describe, expect, test } from "bun:test";
import { encodeAbiParameters, encodeEventTopics, keccak256, toHex } from "viem";
import { decodeOrderFilled, fillAmounts, fillReportOf, ORDER_FILLED, type MinedLog } from "../../src/chain/order-filled.ts";
import { ConfigError, loadConfig } from "../../src/config.ts";

const HASH = `0x${"ab".repeat(32)}` as const;
const MAKER = "0x1111111111111111111111111111111111111111";
const TAKER = "0x2222222222222222222222222222222222222222";

/** A log as a node gives it, encoded by viem from the event's ABI. */
function logOf(args: { side: number; makerAmountFilled: bigint; takerAmountFilled: bigint; fee?: bigint }): MinedLog {
  const topics = encodeEventTopics({ abi: [ORDER_FILLED], eventName: "OrderFilled", args: { orderHash: HASH, maker: MAKER, taker: TAKER } });
  const data = encodeAbiParameters(
    ORDER_FILLED.inputs.filter((i) => !("indexed" in i && i.indexed)),
    [args.side, 123n, args.makerAmountFilled, args.takerAmountFilled, args.fee ?? 0n, `0x${"00".repeat(32)}`, `0x${"00".repeat(32)}`],
  );
  return {
    address: "0xE111180000d2663C0091e4f400237545B87B996B",
    topics: topics as MinedLog["topics"],
    data,
    blockHash: keccak256(toHex("block")),
    blockNumber: 42n,
    logIndex: 3,
    transactionHash: `0x${"CD".repeat(32)}`,
    transactionIndex: 0,
    removed: false,
  };
}

describe("OrderFilled", () => {
  test("topic0 is the V2/V3 OrderFilled topic of the research notes", () => {
    expect(encodeEventTopics({ abi: [ORDER_FILLED], eventName: "OrderFilled" })[0]).toBe("0xd543adfd945773f1a62f74f0ee55a5e3b9b1a28262980ba90b1a89f2ea84d8ee");
  });

  test("a BUY gives USDC (maker amount) for shares (taker amount); a SELL gives shares for USDC", () => {
    expect(fillAmounts(0, 4_900_000n, 10_000_000n)).toEqual({ sharesUnits: 10_000_000n, usdcUnits: 4_900_000n, price: "0.49" });
    expect(fillAmounts(1, 10_000_000n, 5_100_000n)).toEqual({ sharesUnits: 10_000_000n, usdcUnits: 5_100_000n, price: "0.51" });
    // An average price of several levels: 6 decimals, rounded half up.
    expect(fillAmounts(0, 1_000_000n, 3_000_000n).price).toBe("0.333333");
    expect(fillAmounts(0, 2_000_000n, 3_000_000n).price).toBe("0.666667");
    expect(fillAmounts(0, 0n, 0n)).toEqual({ sharesUnits: 0n, usdcUnits: 0n, price: "0" });
    expect(() => fillAmounts(2, 1n, 1n)).toThrow(RangeError);
  });

  test("a log decodes to the report of the maker's order, keyed by transaction hash and log index", () => {
    const log = logOf({ side: 1, makerAmountFilled: 20_000_000n, takerAmountFilled: 6_300_000n, fee: 12_345n });
    const args = decodeOrderFilled(log)!;
    expect(args).toMatchObject({ orderHash: HASH, maker: MAKER, taker: TAKER, side: 1, tokenId: 123n });
    const at = new Date("2026-11-27T12:00:00Z");
    expect(fillReportOf(log, args, "confirmed", at)).toEqual({
      kind: "fill",
      ref: { orderHash: HASH, venueOrderId: HASH },
      source: "chain",
      fillKey: `tx:0x${"cd".repeat(32)}:3`,
      txHash: `0x${"cd".repeat(32)}`,
      logIndex: 3,
      blockNumber: 42n,
      sharesUnits: 20_000_000n,
      usdcUnits: 6_300_000n,
      feeUnits: 12_345n,
      price: "0.315",
      status: "confirmed",
      at,
    });
    // Another event's log is not an OrderFilled.
    expect(decodeOrderFilled({ ...log, topics: [keccak256(toHex("Other()"))] as MinedLog["topics"] })).toBeNull();
    // A side that is neither BUY nor SELL is no fill.
    const odd = logOf({ side: 7, makerAmountFilled: 1n, takerAmountFilled: 1n });
    expect(fillReportOf(odd, decodeOrderFilled(odd)!, "mined", at)).toBeNull();
  });
});

describe("chain settings", () => {
  test("off by default; on Polygon the three exchanges, 5 confirmations and the Conditional Tokens contract", () => {
    expect(loadConfig({}).chain).toEqual({
      rpcUrl: null,
      confirmations: 5,
      exchanges: ["0xE111180000d2663C0091e4f400237545B87B996B", "0xe2222d279d744050d28e00520010520000310F59", "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa"],
      conditionalTokens: "0x4D97DCd97eC945f40cF65F87097ACe5EA0476045",
      pollMs: 1000,
      startBlock: null,
    });
    expect(loadConfig({ CHAIN_ID: "80002" }).chain).toMatchObject({
      exchanges: ["0xE111180000d2663C0091e4f400237545B87B996B", "0xe2222d279d744050d28e00520010520000310F59", "0x9fE6e61422AdB6F610d8597F9684b16912D50C3D"],
      conditionalTokens: "0x69308FB512518e39F9b16112fA8d994F4e2Bf8bB",
    });
  });

  test("CHAIN_* set", () => {
    const c = loadConfig({
      CHAIN_RPC_URL: "http://127.0.0.1:8545",
      CHAIN_CONFIRMATIONS: "12",
      CHAIN_EXCHANGES: `${MAKER},${TAKER.toUpperCase().replace("0X", "0x")},${MAKER}`,
      CHAIN_CTF_ADDRESS: TAKER,
      CHAIN_POLL_MS: "250",
      CHAIN_START_BLOCK: "65000000",
    }).chain;
    expect(c).toEqual({ rpcUrl: "http://127.0.0.1:8545", confirmations: 12, exchanges: [MAKER, TAKER], conditionalTokens: TAKER, pollMs: 250, startBlock: 65_000_000n });
  });

  test.each([
    [{ CHAIN_RPC_URL: "localhost:8545" }, "CHAIN_RPC_URL"],
    [{ CHAIN_CONFIRMATIONS: "0" }, "CHAIN_CONFIRMATIONS"],
    [{ CHAIN_EXCHANGES: "0x12," }, "CHAIN_EXCHANGES"],
    [{ CHAIN_CTF_ADDRESS: "0x12" }, "CHAIN_CTF_ADDRESS"],
    [{ CHAIN_POLL_MS: "10" }, "CHAIN_POLL_MS"],
    [{ CHAIN_START_BLOCK: "-1" }, "CHAIN_START_BLOCK"],
  ])("%j fails naming %s", (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });
});
