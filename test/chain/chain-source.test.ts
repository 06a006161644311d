/**
 * Fills from the chain against a real node: Anvil (one per file), the venue simulator settling every
 * match on it (`chain`: OrderFilled from the exchange's address), Polymarket's official client as both
 * sides of each trade, and the chain source reading the logs of the agents' wallets with its cursor in
 * the database (both databases).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ClobClient, OrderType, Side } from "@polymarket/clob-client-v2";
import { createPublicClient, http, type LocalAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ChainFillSource } from "../../src/chain/chain-fill-source.ts";
import { ConditionalTokensBalances } from "../../src/chain/conditional-tokens.ts";
import type { Database } from "../../src/db/database.ts";
import { AgentWalletDirectory, ChainCursorRepository } from "../../src/db/chain-cursor-store.ts";
import type { FillReport, VenueReport } from "../../src/domain/venue-report.ts";
import { SimChain } from "../../src/venues/sim/sim-chain.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import markets from "../../fixtures/markets.json" with { type: "json" };
import { type Anvil, startAnvil } from "../support/anvil.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { freshDatabase } from "../support/fresh-database.ts";
import { officialSigner } from "../support/official-client.ts";

/** Confirmations a fill needs here (the default on Polygon is 5 too). */
const CONF = 5;
const POLL_MS = 100;
// The first plain 0.01-tick market; its Yes book is seeded with bids at 0.48 and asks at 0.50, so an
// order at 0.49 is alone at the top of its side and the counterparty's order fills it first.
const PLAIN = (markets as any[]).find((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
const YES: string = PLAIN.tokens[0].token_id;
// The neg-risk 0.001-tick market (settled by the Neg Risk CTF Exchange): Yes bids 0.238, asks 0.242.
const NEG = (markets as any[]).find((m) => m.accepting_orders && !m.closed && m.neg_risk);
const NEG_YES: string = NEG.tokens[0].token_id;

let anvil: Anvil;
let sim: VenueSim;
let chain: ReturnType<SimChain["describe"]>;

beforeAll(async () => {
  anvil = await startAnvil();
  sim = startVenueSim({ port: 0, chain: await SimChain.connect(anvil.url, 137) });
  chain = await (await fetch(`${sim.url}/_sim/chain`)).json();
}, 60_000);

afterAll(async () => {
  await sim?.stop();
  await anvil?.stop();
});

/** The sink the composition root would wire, recording what it is handed and when. */
class RecordingSink {
  readonly got: { report: VenueReport; at: number }[] = [];
  report(r: VenueReport): void {
    this.got.push({ report: r, at: Date.now() });
  }
  of(orderHash: string, kind?: VenueReport["kind"]): { report: VenueReport; at: number }[] {
    return this.got.filter((g) => g.report.ref.orderHash === orderHash.toLowerCase() && (!kind || g.report.kind === kind));
  }
  fills(orderHash: string, status: FillReport["status"]): FillReport[] {
    return this.of(orderHash, "fill")
      .map((g) => g.report as FillReport)
      .filter((r) => r.status === status);
  }
  async waitFor<T>(what: string, find: () => T | undefined, timeoutMs = 5000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms; got ${JSON.stringify(this.got.map((g) => ({ ...g.report, sharesUnits: undefined, usdcUnits: undefined, feeUnits: undefined, blockNumber: undefined })))}`);
      await Bun.sleep(20);
    }
  }
}

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/** A trading client of `account` on the simulator (API key over L1, as a new user gets one). */
async function clientOf(account: LocalAccount): Promise<ClobClient> {
  const l1 = new ClobClient({ host: sim.url, chain: 137, signer: officialSigner(account) });
  const creds = await l1.createOrDeriveApiKey();
  return new ClobClient({ host: sim.url, chain: 137, signer: officialSigner(account), creds, throwOnError: true });
}

/**
 * `maker` rests a GTC order at 0.49 for 10 shares; `taker` crosses it (FAK) in full. Answers both
 * order hashes and the settlement transaction's hash.
 */
async function restAndFill(maker: LocalAccount, taker: LocalAccount, makerSide: Side): Promise<{ makerOrder: string; takerOrder: string; txHash: string }> {
  const m = await clientOf(maker);
  const t = await clientOf(taker);
  const rest: any = await m.createAndPostOrder({ tokenID: YES, price: 0.49, size: 10, side: makerSide }, undefined, OrderType.GTC);
  expect(rest).toMatchObject({ success: true, status: "live" });
  const takerSide = makerSide === Side.BUY ? Side.SELL : Side.BUY;
  const took: any = await t.postOrder(await t.createOrder({ tokenID: YES, price: 0.49, size: 10, side: takerSide }), OrderType.FAK);
  expect(took).toMatchObject({ success: true, status: "matched" });
  expect(took.transactionsHashes).toHaveLength(1);
  return { makerOrder: rest.orderID.toLowerCase(), takerOrder: took.orderID.toLowerCase(), txHash: took.transactionsHashes[0].toLowerCase() };
}

describeEachDatabase("fills from the chain", (kind, open) => {
  let database: Database;
  let t: TestApp;
  let n = 0;
  const sources: ChainFillSource[] = [];

  beforeAll(async () => {
    database = await open();
    t = await createTestApp(database);
  });

  afterAll(async () => {
    for (const s of sources) await s.stop();
  });

  /** An agent (so the chain source follows its wallet) trading through the official client. */
  async function agentAccount(): Promise<LocalAccount> {
    const account = privateKeyToAccount(generatePrivateKey());
    await t.newAgent({ body: { wallet_address: account.address } });
    return account;
  }

  function follow(db: Database, cursorId: string, sink: RecordingSink): ChainFillSource {
    const s = new ChainFillSource({
      rpcUrl: anvil.url,
      exchanges: [chain.exchanges.ctf_exchange_v2, chain.exchanges.neg_risk_ctf_exchange_v2, chain.exchanges.exchange_v3!],
      confirmations: CONF,
      cursor: new ChainCursorRepository(db.db, cursorId),
      wallets: new AgentWalletDirectory(db.db),
      sink,
      logger: quiet,
      pollMs: POLL_MS,
    });
    sources.push(s);
    return s;
  }

  const cursorId = () => `test-${kind}-${process.pid}-${++n}`;

  test("a resting order filled by a counterparty: mined at once, confirmed within 2 s of its 5th confirmation and not before; amounts as the maker's", async () => {
    const sink = new RecordingSink();
    const source = follow(database, cursorId(), sink);
    await source.start();
    const maker = await agentAccount();
    const taker = await agentAccount();
    const stranger = privateKeyToAccount(generatePrivateKey()); // no agent: its fills are not ours
    const { makerOrder, takerOrder, txHash } = await restAndFill(maker, taker, Side.BUY);

    const mined = await sink.waitFor("mined report", () => sink.fills(makerOrder, "mined")[0]);
    expect(mined).toMatchObject({
      kind: "fill",
      source: "chain",
      ref: { orderHash: makerOrder, venueOrderId: makerOrder },
      txHash,
      // The maker bought 10 shares at 0.49: it gave 4.9 USDC (maker amount) for 10 shares (taker amount).
      sharesUnits: 10_000_000n,
      usdcUnits: 4_900_000n,
      feeUnits: 0n,
      price: "0.49",
    });
    expect(mined.fillKey).toBe(`tx:${txHash}:${mined.logIndex}`);
    // The taker order's own log (its wallet is an agent's too): a sell of 10 shares for 4.9 USDC.
    const takerMined = await sink.waitFor("taker's mined report", () => sink.fills(takerOrder, "mined")[0]);
    expect(takerMined).toMatchObject({ txHash, sharesUnits: 10_000_000n, usdcUnits: 4_900_000n, price: "0.49" });
    expect(takerMined.fillKey).not.toBe(mined.fillKey);

    // 4 confirmations: not yet.
    await anvil.mine(CONF - 2);
    await Bun.sleep(POLL_MS * 6);
    expect(sink.fills(makerOrder, "confirmed")).toHaveLength(0);
    expect(source.status()).toMatchObject({ state: "following", pending: 2 });

    // The 5th: confirmed within 2 s.
    await anvil.mine(1);
    const confirmedAt = Date.now();
    const confirmed = await sink.waitFor("confirmed report", () => sink.of(makerOrder, "fill").find((g) => (g.report as FillReport).status === "confirmed"));
    expect(confirmed.at - confirmedAt).toBeLessThan(2000);
    expect(confirmed.report).toMatchObject({ fillKey: mined.fillKey, sharesUnits: 10_000_000n, usdcUnits: 4_900_000n, price: "0.49", blockNumber: mined.blockNumber });
    await sink.waitFor("taker's confirmed report", () => sink.fills(takerOrder, "confirmed")[0]);

    // Each once, whatever more blocks come; nothing for a wallet that is not an agent's.
    await anvil.mine(3);
    await Bun.sleep(POLL_MS * 5);
    expect(sink.fills(makerOrder, "mined")).toHaveLength(1);
    expect(sink.fills(makerOrder, "confirmed")).toHaveLength(1);
    expect(sink.got.every((g) => g.report.kind === "fill")).toBe(true);
    expect(source.status().pending).toBe(0);

    // The wallets' outcome-token balances on the Conditional Tokens stand-in (ERC-1155 balanceOf).
    const balances = new ConditionalTokensBalances({ rpcUrl: anvil.url, address: chain.conditional_tokens });
    expect(await balances.readBalance(maker.address, YES)).toBe(10_000_000n);
    expect(await balances.readBalance(taker.address, BigInt(YES))).toBe(0n);
    expect(await balances.readBalance(stranger.address, YES)).toBe(0n);
    expect(await balances.readBalance("not a wallet", YES)).toBeNull();
    const down = new ConditionalTokensBalances({ rpcUrl: "http://127.0.0.1:9/", address: chain.conditional_tokens, timeoutMs: 500 });
    expect(await down.readBalance(maker.address, YES)).toBeNull();
  });

  test("a resting sell: shares given, USDC received", async () => {
    const sink = new RecordingSink();
    const source = follow(database, cursorId(), sink);
    await source.start();
    const maker = await agentAccount();
    const { makerOrder, txHash } = await restAndFill(maker, privateKeyToAccount(generatePrivateKey()), Side.SELL);
    await anvil.mine(CONF - 1);
    const confirmed = await sink.waitFor("confirmed report", () => sink.fills(makerOrder, "confirmed")[0]);
    expect(confirmed).toMatchObject({ txHash, sharesUnits: 10_000_000n, usdcUnits: 4_900_000n, price: "0.49" });
    await source.stop();
  });

  test("one transaction settling a taker against two resting orders on the neg-risk exchange: a fill per order, each its own amounts", async () => {
    const sink = new RecordingSink();
    const source = follow(database, cursorId(), sink);
    await source.start();
    const [a, b] = [await agentAccount(), await agentAccount()];
    const opts = { tickSize: "0.001" as const, negRisk: true };
    const restA: any = await (await clientOf(a)).createAndPostOrder({ tokenID: NEG_YES, price: 0.24, size: 5, side: Side.BUY }, opts, OrderType.GTC);
    const restB: any = await (await clientOf(b)).createAndPostOrder({ tokenID: NEG_YES, price: 0.24, size: 7, side: Side.BUY }, opts, OrderType.GTC);
    const taker = await clientOf(privateKeyToAccount(generatePrivateKey()));
    const took: any = await taker.postOrder(await taker.createOrder({ tokenID: NEG_YES, price: 0.24, size: 12, side: Side.SELL }, opts), OrderType.FAK);
    expect(took).toMatchObject({ success: true, status: "matched", tradeIDs: [expect.any(String), expect.any(String)] });
    // Both trades were settled by the one transaction.
    const txHash = took.transactionsHashes[0].toLowerCase();
    expect(took.transactionsHashes).toEqual([took.transactionsHashes[0], took.transactionsHashes[0]]);
    await anvil.mine(CONF - 1);
    const fa = await sink.waitFor("A's fill", () => sink.fills(restA.orderID, "confirmed")[0]);
    const fb = await sink.waitFor("B's fill", () => sink.fills(restB.orderID, "confirmed")[0]);
    expect(fa).toMatchObject({ txHash, sharesUnits: 5_000_000n, usdcUnits: 1_200_000n, price: "0.24" });
    expect(fb).toMatchObject({ txHash, sharesUnits: 7_000_000n, usdcUnits: 1_680_000n, price: "0.24" });
    expect(fa.logIndex).not.toBe(fb.logIndex);
    // The logs came from the Neg Risk CTF Exchange's address.
    const receipt = await createPublicClient({ transport: http(anvil.url) }).getTransactionReceipt({ hash: txHash });
    expect(new Set(receipt.logs.map((l) => l.address.toLowerCase()))).toEqual(new Set([chain.exchanges.neg_risk_ctf_exchange_v2.toLowerCase()]));
    expect(receipt.logs).toHaveLength(3); // two makers, then the taker
    await source.stop();
  });

  test("a reorg before confirmation takes the fill back (evm_snapshot, evm_revert, other blocks); it is never confirmed", async () => {
    const sink = new RecordingSink();
    const source = follow(database, cursorId(), sink);
    await source.start();
    const maker = await agentAccount();
    const snapshot = await anvil.rpc<string>("evm_snapshot");
    const { makerOrder } = await restAndFill(maker, privateKeyToAccount(generatePrivateKey()), Side.BUY);
    const mined = await sink.waitFor("mined report", () => sink.fills(makerOrder, "mined")[0]);
    await anvil.mine(2);
    await Bun.sleep(POLL_MS * 3);

    expect(await anvil.rpc<boolean>("evm_revert", [snapshot])).toBe(true);
    await anvil.mine(CONF + 2);
    const reverted = await sink.waitFor("fill_reverted", () => sink.of(makerOrder, "fill_reverted")[0]?.report);
    expect(reverted).toMatchObject({ kind: "fill_reverted", source: "chain", fillKey: mined.fillKey, reason: "reorg", ref: { orderHash: makerOrder } });
    await anvil.mine(CONF);
    await Bun.sleep(POLL_MS * 5);
    expect(sink.fills(makerOrder, "confirmed")).toHaveLength(0);
    expect(sink.of(makerOrder, "fill_reverted")).toHaveLength(1);
    expect(source.status().pending).toBe(0);
    await source.stop();
  });

  test("the cursor survives a restart (database closed and opened again); a fill made while stopped is caught up at start; a fill reorganised away while stopped is taken back", async () => {
    const fresh = freshDatabase(kind);
    let db = await fresh.open();
    try {
      const app = await createTestApp(db);
      const maker = privateKeyToAccount(generatePrivateKey());
      await app.newAgent({ body: { wallet_address: maker.address } });
      const id = cursorId();

      // First run: follows, sees a fill mined (pending), stops before it is confirmed.
      const sink1 = new RecordingSink();
      const first = follow(db, id, sink1);
      await first.start();
      const snapshot = await anvil.rpc<string>("evm_snapshot");
      const gone = await restAndFill(maker, privateKeyToAccount(generatePrivateKey()), Side.BUY);
      const goneMined = await sink1.waitFor("mined report", () => sink1.fills(gone.makerOrder, "mined")[0]);
      await first.stop();
      const stored = await new ChainCursorRepository(db.db, id).load();
      expect(stored!.blockNumber).toBe(first.status().cursorBlock!);
      expect(stored!.pending.map((p) => p.fillKey)).toEqual([goneMined.fillKey]);
      await db.close();

      // While stopped: that block is reorganised away, and another fill is made and confirmed.
      expect(await anvil.rpc<boolean>("evm_revert", [snapshot])).toBe(true);
      await anvil.mine(1);
      const made = await restAndFill(maker, privateKeyToAccount(generatePrivateKey()), Side.BUY);
      await anvil.mine(CONF + 1);

      // Second run on the reopened database: starts from the stored cursor.
      db = await fresh.open();
      const reopened = await new ChainCursorRepository(db.db, id).load();
      expect(reopened).toEqual(stored);
      const sink2 = new RecordingSink();
      const second = follow(db, id, sink2);
      await second.start(); // resolves after the first pass
      expect(sink2.fills(made.makerOrder, "confirmed")).toHaveLength(1);
      expect(sink2.fills(made.makerOrder, "confirmed")[0]).toMatchObject({ txHash: made.txHash, sharesUnits: 10_000_000n, usdcUnits: 4_900_000n });
      expect(sink2.of(gone.makerOrder, "fill_reverted").map((g) => g.report)).toEqual([
        expect.objectContaining({ fillKey: goneMined.fillKey, reason: "reorg" }),
      ]);
      expect(second.status().cursorBlock!).toBeGreaterThan(stored!.blockNumber);
      expect((await new ChainCursorRepository(db.db, id).load())!.pending).toEqual([]);
      await second.stop();

      // A third start reads nothing again: the cursor is past it.
      const sink3 = new RecordingSink();
      const third = follow(db, id, sink3);
      await third.start();
      await third.stop();
      expect(sink3.got).toEqual([]);
    } finally {
      await db.close();
      fresh.cleanup();
    }
  });
});
