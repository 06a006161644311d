/**
 * Idempotency-Key records: the first request with a key claims it; when it
 * finishes its status and body are stored, and the same key with the same
 * request replays them for 24 hours. A different request with the key is a 409.
 *
 * A claim also reserves the id body its new resources take (`reservedId`). A record still in
 * progress when the process died is marked interrupted at the next start (`interruptInFlight`);
 * its retry is then resolved by idempotency-recovery.ts: the original outcome when the request
 * created its resource, otherwise the request runs again (`resume`), with the same reserved id.
 *
 * Each claim, and each resume, is a run with a token of its own (`run`, migration 0022): the run's
 * later writes of the record (its answer, its release, its interruption) are conditional on the
 * record still being its own and in progress, so a run that was paused or lost its agent's lease
 * while another instance resolved the record changes nothing of it (docs/decisions.md
 * "Idempotency-Key records across a lease loss").
 */
import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "./database.ts";
import { idempotencyKeys, serviceInstances } from "./schema.ts";
import type { Claim, IdempotencyRecords } from "../domain/idempotency-records.ts";
import { newId } from "../domain/ids.ts";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const IN_PROGRESS = 0;
/** In progress when the process that ran it stopped (crash, kill -9). */
const INTERRUPTED = -1;

/**
 * Whether a record's owner is alive in the life its run belongs to: its instance's row not lapsed, and
 * the same life (a row that lapsed and was registered again began a new one). Records from before
 * lives were recorded (owner_life null) go by the row's expiry alone.
 */
const OWNER_ALIVE = sql`exists (select 1 from ${serviceInstances} s where s.id = ${idempotencyKeys.owner} and s.expires_at > clock_timestamp()
  and (${idempotencyKeys.ownerLife} is null or s.started_at = ${idempotencyKeys.ownerLife}))`;


export class IdempotencyStore implements IdempotencyRecords {
  private lastSweep = 0;
  /** `owner`: this instance's id (INSTANCE_ID), stored on the records it claims. */
  constructor(
    private readonly db: Db,
    private readonly owner: string | null = null,
  ) {}

  async claim(scope: string, key: string, requestHash: string, now = new Date()): Promise<Claim> {
    await this.sweep(now);
    const reservedId = newId("ord", now.getTime()).slice(4);
    // The run's token: the reserved id is fresh for every claim (a resume takes a new token, below).
    const run = reservedId;
    const inserted = await this.db
      .insert(idempotencyKeys)
      .values({ scope, key, requestHash, status: IN_PROGRESS, body: "", contentType: "", createdAt: now, reservedId, owner: this.owner, run, ownerLife: this.life() })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    if (inserted.length) return { kind: "claimed", reservedId, run };
    const [row] = await this.db.select().from(idempotencyKeys).where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
    if (!row) return this.claim(scope, key, requestHash, now);
    if (now.getTime() - row.createdAt.getTime() > IDEMPOTENCY_TTL_MS) {
      await this.db.delete(idempotencyKeys).where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key), eq(idempotencyKeys.createdAt, row.createdAt)));
      return this.claim(scope, key, requestHash, now);
    }
    if (row.requestHash !== requestHash) return { kind: "conflict" };
    if (row.status === IN_PROGRESS) return (await this.interruptIfOwnerGone(scope, key)) ? { kind: "interrupted", reservedId: row.reservedId } : { kind: "in_progress" };
    if (row.status === INTERRUPTED) return { kind: "interrupted", reservedId: row.reservedId };
    return { kind: "replay", status: row.status, body: row.body, contentType: row.contentType };
  }

  /**
   * A record in progress whose run is dead (another instance's whose row lapsed: it died, or is paused
   * or cut off past its lease; or a run of an earlier life of its instance, this one's too) is
   * interrupted at once by the retry that finds it, rather than at the next periodic pass
   * (interruptInFlight): the retry resolves now. This instance's own runs are dead only once its life
   * changed (its own row lapsing for a moment does not end the runs it is still making).
   */
  private async interruptIfOwnerGone(scope: string, key: string): Promise<boolean> {
    if (!this.owner) return false;
    const ownLife = sql`(select ${serviceInstances.startedAt} from ${serviceInstances} where ${serviceInstances.id} = ${this.owner})`;
    const rows = await this.db
      .update(idempotencyKeys)
      .set({ status: INTERRUPTED })
      .where(
        and(
          eq(idempotencyKeys.scope, scope),
          eq(idempotencyKeys.key, key),
          eq(idempotencyKeys.status, IN_PROGRESS),
          sql`not ${OWNER_ALIVE}`,
          sql`(${idempotencyKeys.owner} <> ${this.owner} or ${idempotencyKeys.ownerLife} <> ${ownLife})`,
        ),
      )
      .returning({ key: idempotencyKeys.key });
    return rows.length > 0;
  }

  /**
   * Run `run`'s record, in progress, in the life of this instance the run belongs to: once this
   * instance's registration lapsed (a paused or stalled process), its runs of the earlier life are dead
   * runs whose records the retries resolve (OWNER_ALIVE), and this process writes nothing more of them.
   */
  private ownRun(scope: string, key: string, run: string) {
    return and(
      eq(idempotencyKeys.scope, scope),
      eq(idempotencyKeys.key, key),
      eq(idempotencyKeys.run, run),
      eq(idempotencyKeys.status, IN_PROGRESS),
      this.owner ? sql`(${idempotencyKeys.ownerLife} is null or ${idempotencyKeys.ownerLife} = ${this.life()})` : undefined,
    );
  }

  /**
   * The current life of this instance (its `service_instances.started_at`), read in the statement that
   * writes it on a record: null while its row has lapsed (paused or cut off past its TTL).
   */
  private life() {
    return this.owner
      ? sql`(select ${serviceInstances.startedAt} from ${serviceInstances} where ${serviceInstances.id} = ${this.owner} and ${serviceInstances.expiresAt} > clock_timestamp())`
      : null;
  }

  /** Whether the answer to this very request is stored under the key (completed, not expired); claims nothing. */
  async hasAnswer(scope: string, key: string, requestHash: string, now = new Date()): Promise<boolean> {
    const [row] = await this.db
      .select({ requestHash: idempotencyKeys.requestHash, status: idempotencyKeys.status, createdAt: idempotencyKeys.createdAt })
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
    return !!row && row.requestHash === requestHash && row.status > 0 && now.getTime() - row.createdAt.getTime() <= IDEMPOTENCY_TTL_MS;
  }

  /** Stores the answer of run `run`; false (nothing written) when the record is no longer that run's in progress. */
  async complete(scope: string, key: string, run: string, status: number, body: string, contentType: string): Promise<boolean> {
    const rows = await this.db
      .update(idempotencyKeys)
      .set({ status, body, contentType })
      .where(this.ownRun(scope, key, run))
      .returning({ key: idempotencyKeys.key });
    return rows.length > 0;
  }

  /** Stores the answer a retry resolved for an interrupted record (idempotency-recovery.ts); false when another retry took it first. */
  async completeInterrupted(scope: string, key: string, status: number, body: string, contentType: string): Promise<boolean> {
    const rows = await this.db
      .update(idempotencyKeys)
      .set({ status, body, contentType })
      .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key), eq(idempotencyKeys.status, INTERRUPTED)))
      .returning({ key: idempotencyKeys.key });
    return rows.length > 0;
  }

  /**
   * Leaves run `run`'s record interrupted: the run may have been cut off midway (it lost its agent's
   * lease), so its retry resolves from what the database holds (idempotency-recovery.ts) instead of
   * running again under a new claim. Nothing is written when the record is no longer that run's.
   */
  async interrupt(scope: string, key: string, run: string): Promise<boolean> {
    const rows = await this.db
      .update(idempotencyKeys)
      .set({ status: INTERRUPTED })
      .where(this.ownRun(scope, key, run))
      .returning({ key: idempotencyKeys.key });
    return rows.length > 0;
  }

  /**
   * Records in progress whose process is gone are marked interrupted: at start-up (before requests
   * are served) and then periodically (src/jobs.ts), so a retry of a request a dead instance was
   * running resolves instead of answering 409. Gone: claimed by this instance's id (an earlier run of
   * it), by no instance (before leases), or by one whose `service_instances` row lapsed. Records of
   * instances alive are left alone. Returns how many were marked.
   */
  async interruptInFlight(opts: { startup: boolean; sole?: boolean } = { startup: true }): Promise<number> {
    // The only process on its database (PGlite's data-directory lock): every record in progress at
    // start-up is a dead process's, whatever instance name it ran under (the default name has the pid).
    if (opts.startup && opts.sole) {
      const rows = await this.db.update(idempotencyKeys).set({ status: INTERRUPTED }).where(eq(idempotencyKeys.status, IN_PROGRESS)).returning({ key: idempotencyKeys.key });
      return rows.length;
    }
    const rows = await this.db
      .update(idempotencyKeys)
      .set({ status: INTERRUPTED })
      .where(
        and(
          eq(idempotencyKeys.status, IN_PROGRESS),
          or(
            isNull(idempotencyKeys.owner),
            opts.startup && this.owner ? eq(idempotencyKeys.owner, this.owner) : undefined,
            and(this.owner ? sql`${idempotencyKeys.owner} <> ${this.owner}` : undefined, sql`not ${OWNER_ALIVE}`),
          ),
        ),
      )
      .returning({ key: idempotencyKeys.key });
    return rows.length;
  }

  /**
   * Takes an interrupted record over to run its request again, as a new run of this instance (its
   * token answered; the record's owner is this instance from now on, so it is interrupted again only
   * if this one dies); null when another retry took it first.
   */
  async resume(scope: string, key: string, now = new Date()): Promise<string | null> {
    const run = newId("ord", now.getTime()).slice(4);
    const rows = await this.db
      .update(idempotencyKeys)
      .set({ status: IN_PROGRESS, run, owner: this.owner, ownerLife: this.life() })
      .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key), eq(idempotencyKeys.status, INTERRUPTED)))
      .returning({ key: idempotencyKeys.key });
    return rows.length > 0 ? run : null;
  }

  /** Forgets run `run`'s claim, whose request did not finish in a way worth replaying (nothing when it is no longer that run's). */
  async release(scope: string, key: string, run: string): Promise<void> {
    await this.db.delete(idempotencyKeys).where(this.ownRun(scope, key, run));
  }

  private async sweep(now: Date): Promise<void> {
    if (now.getTime() - this.lastSweep < 60_000) return;
    this.lastSweep = now.getTime();
    await this.db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, new Date(now.getTime() - IDEMPOTENCY_TTL_MS)));
  }
}
