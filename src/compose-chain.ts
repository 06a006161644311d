/**
 * The composition of the chain source (src/chain/): with CHAIN_RPC_URL set, the `OrderFilled` follower
 * over the stored cursor and the agents' wallets, handing its reports to `sink`, and the Conditional
 * Tokens balance reader; both null when CHAIN_RPC_URL is unset (the source is off).
 */
import { createPublicClient, http } from "viem";
import type { PositionBalanceReader } from "../actors/ports.ts";
import { ChainFillSource } from "./chain/chain-fill-source.ts";
import { ConditionalTokensBalances } from "./chain/conditional-tokens.ts";
import type { Config } from "./config.ts";
import type { Database } from "./db/database.ts";
import { AgentWalletDirectory, ChainCursorRepository } from "./db/chain-cursor-store.ts";
import type { Clock } from "./domain/clock.ts";
import type { VenueReport, VenueReportSink } from "./domain/venue-report.ts";
import type { Logger } from "./observability/logger.ts";

export interface ChainParts {
  /** The OrderFilled follower; call start() once the service is up and stop() at shutdown. */
  source: ChainFillSource | null;
  /** `readBalance(wallet, tokenId)` of the Conditional Tokens contract (a PositionBalanceReader). */
  balances: ConditionalTokensBalances | null;
}

export function createChain(parts: { config: Config; database: Database; logger: Logger; sink: VenueReportSink; clock?: Clock }): ChainParts {
  const { chain } = parts.config;
  if (!chain.rpcUrl) return { source: null, balances: null };
  const client = createPublicClient({ transport: http(chain.rpcUrl, { timeout: 10_000, retryCount: 1 }) });
  const logger = parts.logger.child({ component: "chain" });
  return {
    source: new ChainFillSource({
      client,
      exchanges: chain.exchanges,
      confirmations: chain.confirmations,
      cursor: new ChainCursorRepository(parts.database.db),
      wallets: new AgentWalletDirectory(parts.database.db),
      sink: parts.sink,
      logger,
      clock: parts.clock,
      pollMs: chain.pollMs,
      ...(chain.startBlock !== null ? { startBlock: chain.startBlock } : {}),
    }),
    balances: new ConditionalTokensBalances({ client, address: chain.conditionalTokens }),
  };
}

/**
 * The Conditional Tokens reader as the actors' `PositionBalanceReader` port (`heldShares`): the
 * balance, or null when the chain does not answer or has not answered when `signal` aborts (an intent
 * never waits for the chain longer than it waits for the venue).
 */
export function balanceReaderOf(reader: Pick<ConditionalTokensBalances, "readBalance">): PositionBalanceReader {
  return {
    heldShares(wallet, tokenId, opts) {
      const signal = opts?.signal;
      if (signal?.aborted) return Promise.resolve(null);
      const read = reader.readBalance(wallet, tokenId).catch(() => null);
      if (!signal) return read;
      return new Promise((resolve) => {
        const onAbort = () => resolve(null);
        signal.addEventListener("abort", onAbort, { once: true });
        void read.then((v) => {
          signal.removeEventListener("abort", onAbort);
          resolve(v);
        });
      });
    },
  };
}

/** Until a sink that reaches the actors is wired: each report logged, nothing applied. */
export function loggingSink(logger: Logger): VenueReportSink {
  return {
    report(r: VenueReport) {
      logger.info("venue report (no sink wired: not applied)", { kind: r.kind, source: r.source, order_hash: r.ref.orderHash ?? null, fill_key: "fillKey" in r ? r.fillKey : null });
    },
  };
}
