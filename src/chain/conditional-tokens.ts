/**
 * A wallet's on-chain balance of an outcome token: `balanceOf(wallet, tokenId)` of the Conditional
 * Tokens contract (ERC-1155), through viem. Fits the lifecycle's `PositionBalanceReader` port
 * (`readBalance(wallet, tokenId): Promise<bigint | null>`): null when the chain does not answer (or
 * answers something that is not a balance), never a throw; 6-decimal share units, as the venue's.
 */
import { createPublicClient, http, parseAbiItem, type PublicClient } from "viem";

export const ERC1155_BALANCE_OF = parseAbiItem("function balanceOf(address account, uint256 id) view returns (uint256)");

export interface ConditionalTokensOptions {
  /** CHAIN_RPC_URL; or give `client`. */
  rpcUrl?: string;
  client?: PublicClient;
  /** The Conditional Tokens contract (CHAIN_CTF_ADDRESS). */
  address: `0x${string}`;
  /** Per read (default 3 s). */
  timeoutMs?: number;
}

export class ConditionalTokensBalances {
  private readonly client: PublicClient;

  constructor(private readonly opts: ConditionalTokensOptions) {
    if (!opts.client && !opts.rpcUrl) throw new TypeError("ConditionalTokensBalances needs rpcUrl or client");
    this.client = opts.client ?? createPublicClient({ transport: http(opts.rpcUrl, { timeout: opts.timeoutMs ?? 3000, retryCount: 0 }) });
  }

  /** The wallet's balance of the token (6-decimal units), or null when it cannot be read. */
  async readBalance(wallet: string, tokenId: string | bigint): Promise<bigint | null> {
    if (!/^0x[0-9a-fA-F]{40}$/.test(wallet)) return null;
    let id: bigint;
    try {
      id = typeof tokenId === "bigint" ? tokenId : BigInt(tokenId);
    } catch {
      return null;
    }
    if (id < 0n || id >= 2n ** 256n) return null;
    try {
      return await this.client.readContract({ address: this.opts.address, abi: [ERC1155_BALANCE_OF], functionName: "balanceOf", args: [wallet as `0x${string}`, id] });
    } catch {
      return null;
    }
  }
}
