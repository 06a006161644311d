/**
 * The venue simulator's settlement on a local chain (`--chain URL`, issue 22 item 9): every matched
 * submission becomes one transaction that emits the exchanges' `OrderFilled` from the exchange of the
 * market (CTF Exchange V2, its neg-risk twin, or ExchangeV3 of the simulator's chain id), as the real
 * exchange's `matchOrders` does: one log per maker order filled (`taker` = the taker order's maker),
 * then one for the taker order (`taker` = the exchange). The same transaction sets the wallets'
 * outcome-token balances on a Conditional Tokens stand-in (ERC-1155 `balanceOf`).
 *
 * The contract (SimSettlement.sol) is compiled at start-up by npm's `solc` and placed at the real
 * exchanges' and Conditional Tokens' addresses with `anvil_setCode`, so the chain needs to be Anvil
 * (or a node with that method). Transactions are sent from the node's first unlocked account, one at a
 * time, in the order of the matches. `GET /_sim/chain` answers `describe()`.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { type Abi, createTestClient, createWalletClient, http } from "viem";
import { EXCHANGE_V2, exchangeAddress } from "../../eip712/order-typed-data.ts";
import { PRICE_ONE } from "../markets-file.ts";
import type { PaperVenue } from "../paper/paper-venue.ts";
import type { SimTrade } from "./sim-wire.ts";

/** Polymarket's Conditional Tokens contract on Polygon (and the address the stand-in takes). */
export const CONDITIONAL_TOKENS = "0x4D97DCd97eC945f40cF65F87097ACe5EA0476045" as const;
const ZERO32 = `0x${"0".repeat(64)}` as const;

let compiled: { abi: Abi; runtime: `0x${string}` } | null = null;

/** SimSettlement.sol compiled by solc-js (once per process). */
export async function compileSimSettlement(): Promise<{ abi: Abi; runtime: `0x${string}` }> {
  if (compiled) return compiled;
  const solc = ((await import("solc")) as { default: { compile(input: string): string } }).default;
  const content = readFileSync(resolve(import.meta.dir, "SimSettlement.sol"), "utf8");
  const input = {
    language: "Solidity",
    sources: { "SimSettlement.sol": { content } },
    settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { "*": { SimSettlement: ["abi", "evm.deployedBytecode.object"] } } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === "error");
  if (errors.length) throw new Error(`SimSettlement.sol: ${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join("\n")}`);
  const c = out.contracts["SimSettlement.sol"].SimSettlement;
  compiled = { abi: c.abi as Abi, runtime: `0x${c.evm.deployedBytecode.object}` };
  return compiled;
}

export interface SimChainAddresses {
  rpc_url: string;
  exchanges: { ctf_exchange_v2: `0x${string}`; neg_risk_ctf_exchange_v2: `0x${string}`; exchange_v3: `0x${string}` | null };
  conditional_tokens: `0x${string}`;
  /** The account the settlement transactions come from. */
  sender: `0x${string}`;
}

export class SimChain {
  private queue: Promise<unknown> = Promise.resolve();
  /** Outcome-token balances the simulator has settled: `${wallet}:${tokenId}` → 6-decimal units. */
  private readonly balances = new Map<string, bigint>();

  private constructor(
    private readonly rpcUrl: string,
    private readonly chainId: number,
    private readonly abi: Abi,
    private readonly sender: `0x${string}`,
    private readonly wallet: ReturnType<typeof createWalletClient>,
  ) {}

  /** Compiles the contract and places it at the exchanges' and Conditional Tokens' addresses on `rpcUrl`. */
  static async connect(rpcUrl: string, venueChainId: number): Promise<SimChain> {
    const { abi, runtime } = await compileSimSettlement();
    const transport = http(rpcUrl, { timeout: 10_000 });
    const test = createTestClient({ mode: "anvil", transport });
    const wallet = createWalletClient({ transport });
    const [sender] = await wallet.getAddresses();
    if (!sender) throw new Error(`the chain at ${rpcUrl} has no unlocked account to settle from`);
    const chain = new SimChain(rpcUrl, venueChainId, abi, sender, wallet);
    for (const address of chain.contractAddresses()) await test.setCode({ address, bytecode: runtime });
    return chain;
  }

  describe(): SimChainAddresses {
    let v3: `0x${string}` | null = null;
    try {
      v3 = exchangeAddress(false, "v2", this.chainId);
    } catch {
      // no ExchangeV3 on this chain id
    }
    return {
      rpc_url: this.rpcUrl,
      exchanges: { ctf_exchange_v2: EXCHANGE_V2, neg_risk_ctf_exchange_v2: exchangeAddress(true, "v1", this.chainId), exchange_v3: v3 },
      conditional_tokens: CONDITIONAL_TOKENS,
      sender: this.sender,
    };
  }

  private contractAddresses(): `0x${string}`[] {
    const d = this.describe();
    return [d.exchanges.ctf_exchange_v2, d.exchanges.neg_risk_ctf_exchange_v2, ...(d.exchanges.exchange_v3 ? [d.exchanges.exchange_v3] : []), d.conditional_tokens];
  }

  /** The wallet's settled balance of the token (what the stand-in's balanceOf answers). */
  balanceOf(wallet: string, tokenId: string): bigint {
    return this.balances.get(`${wallet.toLowerCase()}:${tokenId}`) ?? 0n;
  }

  /**
   * Settles the trades of one taker order (one submission's matches) in one transaction; resolves
   * with its hash once the node has it. Transactions go out one at a time, in call order.
   */
  settle(trades: readonly SimTrade[], venue: PaperVenue): Promise<`0x${string}`> {
    const send = async () => {
      const taker = venue.order(trades[0]!.taker_order_id);
      if (!taker) throw new Error(`settlement of an unknown order ${trades[0]!.taker_order_id}`);
      const market = venue.marketForToken(taker.token_id);
      const exchange = exchangeAddress(market?.neg_risk ?? false, market?.version ?? "v1", this.chainId);
      const fills: Record<string, unknown>[] = [];
      const touched = new Set<string>();
      let takerShares = 0n;
      let takerUsdc = 0n;
      for (const t of trades) {
        const maker = venue.order(t.maker_order_id);
        if (!maker) continue;
        const usdc = (t.size * t.price) / PRICE_ONE;
        takerShares += t.size;
        takerUsdc += usdc;
        fills.push(this.fill(t.maker_order_id, maker.maker, taker.maker, maker.side, t.token_id, t.size, usdc));
        this.move(maker.side === "buy" ? maker.maker : taker.maker, maker.side === "buy" ? taker.maker : maker.maker, t.token_id, t.size, touched);
      }
      fills.push(this.fill(taker.id, taker.maker, exchange, taker.side, taker.token_id, takerShares, takerUsdc));
      const balances = [...touched].map((k) => {
        const [owner, tokenId] = k.split(":");
        return { owner, tokenId: BigInt(tokenId!), amount: this.balances.get(k) ?? 0n };
      });
      return this.wallet.writeContract({ address: exchange, abi: this.abi, functionName: "settle", args: [fills, CONDITIONAL_TOKENS, balances], account: this.sender, chain: null });
    };
    const p = this.queue.then(send, send);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** An order's fill as its OrderFilled says it: what its maker gave (maker amount) and received (taker amount). */
  private fill(orderHash: string, maker: string, taker: string, side: "buy" | "sell", tokenId: string, shares: bigint, usdc: bigint) {
    return {
      orderHash,
      maker,
      taker,
      side: side === "buy" ? 0 : 1,
      tokenId: BigInt(tokenId),
      makerAmountFilled: side === "buy" ? usdc : shares,
      takerAmountFilled: side === "buy" ? shares : usdc,
      fee: 0n,
      builder: ZERO32,
      metadata: ZERO32,
    };
  }

  /** Shares from the seller to the buyer (the seller's balance stays at zero or above: the simulator checks no holdings). */
  private move(buyer: string, seller: string, tokenId: string, shares: bigint, touched: Set<string>): void {
    const b = `${buyer.toLowerCase()}:${tokenId}`;
    const s = `${seller.toLowerCase()}:${tokenId}`;
    const held = this.balances.get(s) ?? 0n;
    this.balances.set(s, held > shares ? held - shares : 0n);
    this.balances.set(b, (this.balances.get(b) ?? 0n) + shares);
    touched.add(b).add(s);
  }
}
