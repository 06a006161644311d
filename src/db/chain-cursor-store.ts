/**
 * The chain source's durable state (src/chain/): its block cursor and the fills it reported `mined`
 * and not yet confirmed (table `chain_cursor`, one row per cursor id), and the wallets it follows
 * (the agents' wallets).
 */
import { eq, sql } from "drizzle-orm";
import type { ChainCursor, ChainCursorStore, WalletDirectory } from "../domain/chain-cursor.ts";
import type { Db } from "./database.ts";
import { agents, chainCursor } from "./schema.ts";

/** The cursor named `id` (one per followed stream; the service uses "order_filled"). */
export class ChainCursorRepository implements ChainCursorStore {
  constructor(
    private readonly db: Db,
    readonly id = "order_filled",
  ) {}

  async load(): Promise<ChainCursor | null> {
    const [row] = await this.db.select().from(chainCursor).where(eq(chainCursor.id, this.id));
    if (!row) return null;
    return {
      blockNumber: row.blockNumber,
      blockHash: (row.blockHash as `0x${string}` | null) ?? null,
      pending: row.pending.map((p) => ({
        fillKey: p.fillKey,
        orderHash: p.orderHash as `0x${string}`,
        maker: p.maker,
        blockNumber: BigInt(p.blockNumber),
        blockHash: p.blockHash as `0x${string}`,
      })),
    };
  }

  async save(cursor: ChainCursor): Promise<void> {
    const values = {
      blockNumber: cursor.blockNumber,
      blockHash: cursor.blockHash,
      pending: cursor.pending.map((p) => ({ fillKey: p.fillKey, orderHash: p.orderHash, maker: p.maker, blockNumber: p.blockNumber.toString(), blockHash: p.blockHash })),
      updatedAt: new Date(),
    };
    await this.db
      .insert(chainCursor)
      .values({ id: this.id, ...values })
      .onConflictDoUpdate({ target: chainCursor.id, set: values });
  }
}

/** Every agent's wallet (the `maker` of its orders), lowercase, each once. */
export class AgentWalletDirectory implements WalletDirectory {
  constructor(private readonly db: Db) {}

  async wallets(): Promise<string[]> {
    const rows = await this.db.selectDistinct({ wallet: sql<string>`lower(${agents.walletAddress})` }).from(agents);
    return rows.map((r) => r.wallet);
  }
}
