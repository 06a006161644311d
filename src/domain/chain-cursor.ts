/**
 * Where the chain source (src/chain/) is in the chain, as the store keeps it (table `chain_cursor`):
 * every block up to `blockNumber` has been read and its fills reported `confirmed`; `pending` are the
 * fills reported `mined` from later blocks, not yet confirmed, kept so that a fill whose block is
 * reorganised away is taken back even across a restart.
 */
export interface PendingChainFill {
  fillKey: string;
  orderHash: `0x${string}`;
  /** The wallet (the log's `maker` topic), lowercase. */
  maker: string;
  blockNumber: bigint;
  blockHash: `0x${string}`;
}

export interface ChainCursor {
  /** The last block read and confirmed. */
  blockNumber: bigint;
  /** Its hash when read: a different hash later means a reorganisation deeper than the confirmations. */
  blockHash: `0x${string}` | null;
  pending: PendingChainFill[];
}

/** The store's side of the cursor (one row per cursor id). */
export interface ChainCursorStore {
  load(): Promise<ChainCursor | null>;
  save(cursor: ChainCursor): Promise<void>;
}

/** The wallets whose fills the chain source follows: the agents' wallets (`maker` of their orders). */
export interface WalletDirectory {
  /** Lowercase 0x addresses. */
  wallets(): Promise<string[]>;
}
