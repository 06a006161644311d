/**
 * Reads of agents' sealed credentials, gathered into one statement per batch: every delegated
 * placement reads its agent's (CredentialsService.readSealed), and one prepared statement per read
 * was one round trip and one statement's start and end each in PostgreSQL, more of its CPU per
 * delegated intent than the read itself (docs/benchmarks.md, "PostgreSQL's CPU per delegated intent").
 *
 * Each read is answered by a statement that starts after it was asked for (never by one already
 * under way): what it answers is what was stored when its statement ran, as a read of its own would
 * have. Reads asked for while a batch's statement runs wait for it and go together in the next one
 * (as the group-commit writers do, batch-writer.ts); one batch runs at a time.
 */
import type { QueryStatement } from "./database.ts";
import { pgTextArray } from "./pg-text-array.ts";

/** The most agents one statement reads: bounds its array parameter. */
const MAX_BATCH = 64;

/**
 * The sealed bytes (hex, as Database.query answers text) of the agents named in $1 (a text[]): each
 * found agent's id and ciphertext. It finds them by the primary key (QueryOptions.byIndex: on PGlite
 * the plan made while the table was small stays an index scan as it grows).
 */
const SEALED_MANY = "select agent_id, encode(ciphertext, 'hex') from credentials where agent_id = any($1::text[])";

type Waiter = { resolve: (sealed: Uint8Array | null) => void; reject: (error: unknown) => void };

export class SealedCredentialReads {
  /** Agents asked for since the last batch started, with who waits for each. */
  private pending = new Map<string, Waiter[]>();
  private running = false;
  private scheduled = false;

  constructor(private readonly query: QueryStatement) {}

  /** The agent's sealed credentials as stored when the statement reading them runs; null when it has none. */
  read(agentId: string): Promise<Uint8Array | null> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(agentId);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(agentId, [{ resolve, reject }]);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running || this.pending.size === 0) return;
    this.scheduled = true;
    // At the end of this event-loop turn: the reads asked for in the same turn share the statement.
    setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.running || this.pending.size === 0) return;
    let batch = this.pending;
    if (batch.size <= MAX_BATCH) this.pending = new Map();
    else {
      const entries = [...batch];
      batch = new Map(entries.slice(0, MAX_BATCH));
      this.pending = new Map(entries.slice(MAX_BATCH));
    }
    this.running = true;
    void this.run(batch).finally(() => {
      this.running = false;
      this.schedule();
    });
  };

  private async run(batch: Map<string, Waiter[]>): Promise<void> {
    try {
      const rows = await this.query(SEALED_MANY, [pgTextArray([...batch.keys()])], { byIndex: true });
      const found = new Map<string, string>();
      for (const [agentId, hex] of rows) if (agentId !== null && hex !== null) found.set(agentId, hex);
      for (const [agentId, waiters] of batch) {
        const hex = found.get(agentId);
        // Each waiter its own copy: a caller may wipe the bytes it was given.
        for (const w of waiters) w.resolve(hex === undefined ? null : new Uint8Array(Buffer.from(hex, "hex")));
      }
    } catch (error) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(error);
    }
  }
}
