/** The Conditional Tokens reader as the actors' PositionBalanceReader (balanceReaderOf): its answer, null on failure, null once the intent's signal aborts. */
import { expect, test } from "bun:test";
import { ConditionalTokensBalances } from "../../src/chain/conditional-tokens.ts";
import { balanceReaderOf } from "../../src/compose-chain.ts";

const WALLET = "0x1111111111111111111111111111111111111111";

test("answers the chain's balance; null when the read fails; null at the signal's abort when the chain is slow", async () => {
  expect(await balanceReaderOf({ readBalance: async () => 7_000_000n }).heldShares(WALLET, "1")).toBe(7_000_000n);
  expect(await balanceReaderOf({ readBalance: async () => Promise.reject(new Error("down")) }).heldShares(WALLET, "1")).toBeNull();
  const slow = balanceReaderOf({ readBalance: () => new Promise<bigint | null>((r) => setTimeout(() => r(5n), 2000)) });
  const started = Date.now();
  expect(await slow.heldShares(WALLET, "1", { signal: AbortSignal.timeout(100) })).toBeNull();
  expect(Date.now() - started).toBeLessThan(1000);
  const aborted = new AbortController();
  aborted.abort();
  expect(await slow.heldShares(WALLET, "1", { signal: aborted.signal })).toBeNull();
  // The real reader against an RPC that does not answer: null, never a throw.
  const down = balanceReaderOf(new ConditionalTokensBalances({ rpcUrl: "http://127.0.0.1:9/", address: "0x4D97DCd97eC945f40cF65F87097ACe5EA0476045", timeoutMs: 500 }));
  expect(await down.heldShares(WALLET, "1", { signal: AbortSignal.timeout(2000) })).toBeNull();
});
