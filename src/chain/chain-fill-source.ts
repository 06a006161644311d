/**
 * Fills from the chain (issue 22, item 2): follows the exchanges' `OrderFilled` logs of the agents'
 * wallets through viem and hands each as a `FillReport` to the `VenueReportSink` the composition root
 * gives it. It never writes an order: the sink delivers the report to the owning agent's actor.
 *
 * How it reads the chain (docs/decisions.md, "Fills from the chain"):
 * - A durable cursor (ChainCursorStore): every block up to it has been read, and its fills reported
 *   `confirmed`. A block has `n` confirmations when the head is `n - 1` blocks above it, so the blocks up
 *   to `head - (confirmations - 1)` are read as confirmed, in ranges of at most `maxBlockRange`, with
 *   `eth_getLogs` filtered to the exchanges, the `OrderFilled` topic and the wallets (the `maker` topic,
 *   in groups of `walletsPerQuery`).
 * - The blocks above it (not yet confirmed) are read again on every pass: a fill seen there for the
 *   first time is reported `mined` and kept as pending (in the cursor row, so a restart keeps it); a
 *   pending fill no longer in the chain (its block reorganised away, its transaction dropped or moved to
 *   another log index) is reported `fill_reverted` (reason `reorg`); once its block is confirmed it is
 *   reported `confirmed`.
 * - A pass runs when the head changes (the head is polled every `pollMs`: a new block, or the same
 *   height with another hash), every `catchUpEveryMs` anyway, and at start-up, from the stored cursor:
 *   the catch-up after a crash or downtime (item 10).
 * - The cursor's own block hash is checked on every pass: a reorganisation deeper than the
 *   confirmations moves the cursor back `confirmations` blocks further and reads again (the sink counts
 *   a fill key once, so reading a range twice reports nothing twice); such a fill already reported
 *   confirmed is not taken back (logged).
 */
import { type Block, createPublicClient, http, type PublicClient } from "viem";
import type { ChainCursor, ChainCursorStore, PendingChainFill, WalletDirectory } from "../domain/chain-cursor.ts";
import type { Clock } from "../domain/clock.ts";
import type { FillReport, VenueReportSink } from "../domain/venue-report.ts";
import { chainFillKey, decodeOrderFilled, fillReportOf, type MinedLog, ORDER_FILLED } from "./order-filled.ts";

/** What the chain source needs to log (the service's Logger fits). */
export interface ChainLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface ChainFillSourceOptions {
  /** The JSON-RPC endpoint (CHAIN_RPC_URL); or give `client`. */
  rpcUrl?: string;
  /** A viem public client (tests, or a composition root that shares one). */
  client?: PublicClient;
  /** The exchanges whose logs count (CHAIN_EXCHANGES). */
  exchanges: readonly `0x${string}`[];
  /** Confirmations a fill needs to count (CHAIN_CONFIRMATIONS, at least 1: the block that holds it). */
  confirmations: number;
  cursor: ChainCursorStore;
  wallets: WalletDirectory;
  sink: VenueReportSink;
  logger: ChainLogger;
  clock?: Clock;
  /** Head polling interval (CHAIN_POLL_MS; default 1000). */
  pollMs?: number;
  /** A full pass at least this often even when the head seems still (default 60 s). */
  catchUpEveryMs?: number;
  /** Where a cursor that was never stored starts: this block, or (default) the first block not yet confirmed at first start. */
  startBlock?: bigint;
  /** Most blocks per eth_getLogs (default 2000). */
  maxBlockRange?: number;
  /** Most wallets per eth_getLogs `maker` topic list (default 100). */
  walletsPerQuery?: number;
  /** RPC timeout per call (default 10 s). */
  timeoutMs?: number;
}

export type ChainSourceState = "starting" | "following" | "unreachable" | "stopped";

export interface ChainSourceStatus {
  state: ChainSourceState;
  /** The last block read and confirmed. */
  cursorBlock: bigint | null;
  /** The head at the last pass. */
  headBlock: bigint | null;
  /** Fills reported mined and awaiting confirmations. */
  pending: number;
  lastError: string | null;
}

export class ChainFillSource {
  private readonly client: PublicClient;
  private readonly exchanges: `0x${string}`[];
  private readonly confirmations: bigint;
  private readonly pollMs: number;
  private readonly catchUpEveryMs: number;
  private readonly maxRange: bigint;
  private readonly walletsPerQuery: number;
  private readonly clock: Clock;
  private cursor: ChainCursor | null = null;
  private head: { number: bigint; hash: `0x${string}` } | null = null;
  private state: ChainSourceState = "stopped";
  private lastError: string | null = null;
  private timers: ReturnType<typeof setInterval>[] = [];
  /** The pass under way, and whether another one was asked for meanwhile. */
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  /** Block timestamps read this pass. */
  private readonly times = new Map<bigint, Date>();

  constructor(private readonly opts: ChainFillSourceOptions) {
    if (!opts.client && !opts.rpcUrl) throw new TypeError("ChainFillSource needs rpcUrl or client");
    if (!Number.isInteger(opts.confirmations) || opts.confirmations < 1) throw new RangeError("confirmations must be an integer of at least 1");
    if (opts.exchanges.length === 0) throw new RangeError("ChainFillSource needs at least one exchange address");
    this.client = opts.client ?? createPublicClient({ transport: http(opts.rpcUrl, { timeout: opts.timeoutMs ?? 10_000, retryCount: 1 }) });
    this.exchanges = opts.exchanges.map((a) => a.toLowerCase() as `0x${string}`);
    this.confirmations = BigInt(opts.confirmations);
    this.pollMs = opts.pollMs ?? 1000;
    this.catchUpEveryMs = opts.catchUpEveryMs ?? 60_000;
    this.maxRange = BigInt(opts.maxBlockRange ?? 2000);
    this.walletsPerQuery = opts.walletsPerQuery ?? 100;
    this.clock = opts.clock ?? { now: () => Date.now() };
  }

  /** Starts following: a first pass from the stored cursor (resolves when it has run), then the head poll. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.state = "starting";
    // The cursor is read from the database at each start: another instance may have moved it meanwhile.
    this.cursor = null;
    const poll = setInterval(() => void this.pollHead(), this.pollMs);
    const catchUp = setInterval(() => void this.sync(), this.catchUpEveryMs);
    for (const t of [poll, catchUp]) (t as { unref?: () => void }).unref?.();
    this.timers.push(poll, catchUp);
    await this.sync();
  }

  /** No new passes; resolves when the one under way has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.again = false;
    await this.running?.catch(() => undefined);
    this.state = "stopped";
  }

  status(): ChainSourceStatus {
    return {
      state: this.state,
      cursorBlock: this.cursor?.blockNumber ?? null,
      headBlock: this.head?.number ?? null,
      pending: this.cursor?.pending.length ?? 0,
      lastError: this.lastError,
    };
  }

  /** Runs a pass now (or right after the one under way); resolves when it has run. Never throws. */
  sync(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async () => {
      do {
        this.again = false;
        try {
          await this.pass();
          if (this.state !== "stopped") this.state = "following";
          this.lastError = null;
        } catch (error) {
          this.lastError = this.describe(error);
          if (this.state !== "stopped") this.state = "unreachable";
          this.opts.logger.warn("chain source: pass failed; retried at the next block", { error: this.lastError });
        }
      } while (this.again && !this.stopped);
    };
    this.running = run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Reads the head; a new one (number or hash) starts a pass. */
  private async pollHead(): Promise<void> {
    if (this.stopped || this.running) return;
    try {
      const b = await this.client.getBlock({ blockTag: "latest" });
      if (!this.head || b.number !== this.head.number || b.hash !== this.head.hash) await this.sync();
    } catch (error) {
      this.lastError = this.describe(error);
      this.state = "unreachable";
    }
  }

  /**
   * An error in one line, without the RPC URL (a provider's URL often carries its API key): viem's
   * short message, else the first line of the message.
   */
  private describe(error: unknown): string {
    const short = (error as { shortMessage?: unknown })?.shortMessage;
    let text = typeof short === "string" ? short : error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
    if (this.opts.rpcUrl) text = text.split(this.opts.rpcUrl).join("<CHAIN_RPC_URL>");
    return text.replace(/https?:\/\/\S+/g, "<url>");
  }

  /** One pass: confirmed blocks from the cursor, then the unconfirmed ones above them. */
  private async pass(): Promise<void> {
    this.times.clear();
    const latest = await this.client.getBlock({ blockTag: "latest" });
    const head = latest.number!;
    this.head = { number: head, hash: latest.hash! };
    let cursor = this.cursor ?? (await this.opts.cursor.load());
    if (!cursor) {
      // A first start reads the blocks not yet confirmed at the head (below them: history it does not read).
      const start = this.opts.startBlock !== undefined ? this.opts.startBlock - 1n : head - this.confirmations;
      cursor = { blockNumber: start < 0n ? 0n : start, blockHash: null, pending: [] };
      if (start <= head && start >= 0n) cursor.blockHash = (await this.client.getBlock({ blockNumber: cursor.blockNumber })).hash!;
      await this.opts.cursor.save(cursor);
      this.opts.logger.info("chain source: cursor created", { block: cursor.blockNumber.toString() });
    }
    this.cursor = cursor;
    cursor = await this.checkCursorBlock(cursor, head);

    const wallets = await this.opts.wallets.wallets();
    const followed = new Set(wallets.map((w) => w.toLowerCase()));
    const pending = new Map(cursor.pending.map((p) => [p.fillKey, p]));
    const seen = new Set<string>();
    const safe = head - (this.confirmations - 1n);

    // 1. Confirmed blocks, range by range; the cursor is stored after each range.
    let from = cursor.blockNumber + 1n;
    while (from <= safe && !this.stopped) {
      const to = from + this.maxRange - 1n < safe ? from + this.maxRange - 1n : safe;
      const logs = await this.logs(wallets, from, to);
      for (const log of logs) {
        const report = await this.reportOf(log, "confirmed");
        if (!report) continue;
        seen.add(report.fillKey);
        pending.delete(report.fillKey);
        this.opts.sink.report(report);
      }
      const toBlock = await this.client.getBlock({ blockNumber: to });
      cursor = { blockNumber: to, blockHash: toBlock.hash!, pending: [...pending.values()] };
      await this.opts.cursor.save(cursor);
      this.cursor = cursor;
      from = to + 1n;
    }
    if (this.stopped) return;

    // 2. Unconfirmed blocks above the cursor: new fills are mined; pending ones gone are taken back.
    if (cursor.blockNumber < head) {
      const logs = await this.logs(wallets, cursor.blockNumber + 1n, head);
      for (const log of logs) {
        const key = chainFillKey(log.transactionHash, log.logIndex);
        const known = pending.get(key);
        if (known) {
          seen.add(key);
          if (known.blockHash !== log.blockHash) pending.set(key, { ...known, blockNumber: log.blockNumber, blockHash: log.blockHash });
          continue;
        }
        const report = await this.reportOf(log, "mined");
        if (!report) continue;
        seen.add(key);
        const args = decodeOrderFilled(log)!;
        pending.set(key, { fillKey: key, orderHash: args.orderHash, maker: args.maker, blockNumber: log.blockNumber, blockHash: log.blockHash });
        this.opts.sink.report(report);
      }
    }
    // 3. Pending fills found nowhere from the cursor to the head: their block was reorganised away.
    for (const p of [...pending.values()]) {
      if (followed.has(p.maker)) {
        if (!seen.has(p.fillKey)) this.revert(p, pending);
      } else if (p.blockNumber <= cursor.blockNumber) {
        pending.delete(p.fillKey); // a wallet no longer followed (its agent removed): forgotten
      }
    }
    const changed = pending.size !== cursor.pending.length || cursor.pending.some((p) => pending.get(p.fillKey)?.blockHash !== p.blockHash);
    cursor = { ...cursor, pending: [...pending.values()] };
    this.cursor = cursor;
    if (changed) await this.opts.cursor.save(cursor);
  }

  /**
   * The cursor block must still be the block read: if its hash changed, the chain was reorganised
   * below the confirmations; the cursor steps back and those blocks are read again.
   */
  private async checkCursorBlock(cursor: ChainCursor, head: bigint): Promise<ChainCursor> {
    if (cursor.blockHash === null && cursor.blockNumber <= head) {
      const b = await this.client.getBlock({ blockNumber: cursor.blockNumber });
      return (this.cursor = { ...cursor, blockHash: b.hash! });
    }
    if (cursor.blockNumber > head) {
      // The chain is lower than the cursor: only a deep reorganisation (or another chain) does that.
      this.opts.logger.error("chain source: the head is below the cursor; reading again from below the head", { cursor: cursor.blockNumber.toString(), head: head.toString() });
      return this.rewind(cursor, head);
    }
    const b = await this.client.getBlock({ blockNumber: cursor.blockNumber });
    if (b.hash === cursor.blockHash) return cursor;
    this.opts.logger.error("chain source: a confirmed block was reorganised away; reading again (confirmed fills are not taken back)", {
      block: cursor.blockNumber.toString(),
    });
    return this.rewind(cursor, cursor.blockNumber);
  }

  private async rewind(cursor: ChainCursor, below: bigint): Promise<ChainCursor> {
    let back = below - this.confirmations;
    if (back < 0n) back = 0n;
    const b = await this.client.getBlock({ blockNumber: back });
    const next = { blockNumber: back, blockHash: b.hash!, pending: cursor.pending };
    await this.opts.cursor.save(next);
    return (this.cursor = next);
  }

  private revert(p: PendingChainFill, pending: Map<string, PendingChainFill>): void {
    pending.delete(p.fillKey);
    this.opts.sink.report({
      kind: "fill_reverted",
      ref: { orderHash: p.orderHash, venueOrderId: p.orderHash },
      source: "chain",
      fillKey: p.fillKey,
      reason: "reorg",
      at: new Date(this.clock.now()),
    });
  }

  /** The `OrderFilled` logs of `wallets` as makers in [from, to], in chain order. */
  private async logs(wallets: string[], from: bigint, to: bigint): Promise<MinedLog[]> {
    if (wallets.length === 0) return [];
    const out: MinedLog[] = [];
    for (let i = 0; i < wallets.length; i += this.walletsPerQuery) {
      const group = wallets.slice(i, i + this.walletsPerQuery) as `0x${string}`[];
      const logs = await this.client.getLogs({ address: this.exchanges, event: ORDER_FILLED, args: { maker: group }, fromBlock: from, toBlock: to, strict: true });
      for (const l of logs) if (!l.removed && l.blockNumber !== null) out.push(l as unknown as MinedLog);
    }
    out.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
    return out;
  }

  private async reportOf(log: MinedLog, status: "mined" | "confirmed"): Promise<FillReport | null> {
    const args = decodeOrderFilled(log);
    if (!args) return null;
    return fillReportOf(log, args, status, await this.blockTime(log.blockNumber));
  }

  private async blockTime(n: bigint): Promise<Date> {
    let t = this.times.get(n);
    if (!t) {
      const b: Block = await this.client.getBlock({ blockNumber: n });
      t = new Date(Number(b.timestamp) * 1000);
      this.times.set(n, t);
    }
    return t;
  }
}
