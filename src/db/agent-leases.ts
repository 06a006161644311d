/**
 * Agent leases in the database (the lease port of actors/lease-port.ts; docs/decisions.md "One actor
 * per agent across instances"). A lease row names its owner (INSTANCE_ID), its fencing epoch (one more
 * at every change of owner) and when it lapses unless renewed; every write for the agent is fenced on
 * the epoch (agent_lease_fence, migration 0020). Time is the database's (clock_timestamp()), so the
 * instances' clocks do not matter; this process stops using a lease at its own, earlier, reckoning of
 * the lapse (the renewal's start + TTL).
 *
 * Hand-over: a non-owner that wants an agent NOTIFYs `agent_lease_request` naming the owner; the owner's
 * registry finishes the agent's work under way and releases, which NOTIFYs `agent_lease_released`; the
 * waiter takes the lease at once. Notifications only wake: a waiter also polls, so a lost one (or an
 * owner that died) costs at most the lapse. On PGlite (one process) the same statements run; nobody
 * else ever holds a lease there.
 *
 * The same process's instance row (`service_instances`) is renewed with its leases: a record in
 * progress of an instance whose row lapsed belongs to a dead process (IdempotencyStore.interruptInFlight).
 */
import { sql } from "drizzle-orm";
import type { AgentLease, LeaseHandlers, LeasePort } from "../../actors/lease-port.ts";
import type { Database } from "./database.ts";

export interface LeaseMetrics {
  held(n: number): void;
  /** A lease taken: `free` (no owner), `lapsed` (its owner stopped renewing: dead or cut off), `handoff` (released to us on request). */
  taken(kind: "free" | "lapsed" | "handoff"): void;
  lost(): void;
}

export interface LeaseOptions {
  instanceId: string;
  ttlMs: number;
  renewEveryMs: number;
  log: { info(m: string, f?: Record<string, unknown>): void; warn(m: string, f?: Record<string, unknown>): void };
  metrics?: LeaseMetrics;
}

const REQUEST = "agent_lease_request";
const RELEASED = "agent_lease_released";

class HeldLease implements AgentLease {
  lost = false;
  released = false;
  /** Local time after which this process no longer relies on the lease (renewal start + TTL). */
  validUntil: number;
  constructor(
    readonly agentId: string,
    readonly epoch: number,
    validUntil: number,
    private readonly onStale: (lease: HeldLease) => void,
  ) {
    this.validUntil = validUntil;
  }
  stale(): void {
    this.onStale(this);
  }
}

type Row = Record<string, unknown>;
const rowsOf = (r: unknown): Row[] => ((r as { rows?: Row[] }).rows ?? (r as Row[])) as Row[];

export class DbLeases implements LeasePort {
  readonly instanceId: string;
  private readonly held = new Map<string, HeldLease>();
  private handlers: LeaseHandlers | null = null;
  private readonly waiters = new Map<string, Set<() => void>>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private unlisten: (() => Promise<void>)[] = [];
  private renewing = false;
  private stopped = false;
  /**
   * Agents an instance asked for urgently (a kill): the release hands the lease to that instance
   * directly (owner set to it), so no other waiter takes it in between and the kill is not starved
   * by hand-overs going back and forth between other instances.
   */
  private readonly urgentFor = new Map<string, string>();

  constructor(
    private readonly database: Database,
    private readonly opts: LeaseOptions,
  ) {
    this.instanceId = opts.instanceId;
    // Renewal runs from the start (also where nobody calls start(): tests on one process).
    this.timer = setInterval(() => void this.renew(), this.opts.renewEveryMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /**
   * Registers the instance and listens for hand-over requests (and releases). `sole`: no other process
   * can be on this database (PGlite, behind its data-directory lock): the leases an earlier process
   * left are released at once instead of lapsing.
   */
  async start(opts: { sole?: boolean } = {}): Promise<void> {
    if (opts.sole) await this.database.db.execute(sql`update agent_leases set owner = null, expires_at = clock_timestamp() where owner is not null`);
    await this.registerInstance();
    if (this.database.listen) {
      this.unlisten.push(
        await this.database.listen(REQUEST, (payload) => {
          try {
            const { agent, owner, urgent, from } = JSON.parse(payload) as { agent: string; owner: string; urgent?: boolean; from?: string };
            if (owner === this.instanceId && this.held.has(agent)) {
              if (urgent === true && typeof from === "string" && from !== this.instanceId) this.urgentFor.set(agent, from);
              this.handlers?.releaseRequested(agent, urgent === true);
            }
          } catch {
            // not ours
          }
        }),
      );
      this.unlisten.push(await this.database.listen(RELEASED, (agent) => this.wake(agent)));
    }
  }

  /** This instance's current life (service_instances.started_at), as its last registration found it. */
  private life: string | null = null;

  /**
   * Registers (renews) this instance's row. A row that had lapsed (the process paused, cut off or
   * stalled past its TTL) begins a new life: the records in progress of the earlier one are a dead
   * run's for the other instances (IdempotencyStore), whatever this process does later. A row a
   * clean stop lapsed (`-infinity`, stop()) does not: a process started again under the name interrupts
   * the records of its earlier run at start-up anyway (and test apps that share one name in one process
   * do not end each other's lives by stopping).
   */
  private async registerInstance(renewed: string[] = []): Promise<void> {
    // Never past the leases just renewed: once another instance may take this one's agents (their
    // leases lapsed), this registration has lapsed too, so a paused process's runs of this life write
    // nothing more (idempotency-store.ts), however the renewal's two statements were spaced.
    const until = renewed.length
      ? sql`least(clock_timestamp() + ${this.opts.ttlMs} * interval '1 millisecond', (select min(expires_at) from agent_leases where owner = ${this.instanceId} and agent_id = any(string_to_array(${renewed.join(",")}, ','))))`
      : sql`clock_timestamp() + ${this.opts.ttlMs} * interval '1 millisecond'`;
    const rows = rowsOf(
      await this.database.db.execute(
        sql`insert into service_instances (id, started_at, expires_at) values (${this.instanceId}, clock_timestamp(), ${until})
            on conflict (id) do update set expires_at = excluded.expires_at,
              started_at = case when service_instances.expires_at < clock_timestamp() and service_instances.expires_at <> '-infinity'::timestamptz
                                then excluded.started_at else service_instances.started_at end
            returning started_at::text as life`,
      ),
    );
    const life = String(rows[0]?.life ?? "");
    if (this.life !== null && life !== this.life && !this.stopped) {
      this.opts.log.warn("this instance's registration had lapsed (paused, cut off or stalled past LEASE_TTL_MS): its requests in progress are left to the other instances to resolve", {
        instance: this.instanceId,
      });
    }
    this.life = life;
  }

  setHandlers(handlers: LeaseHandlers): void {
    this.handlers = handlers;
  }

  get heldCount(): number {
    return this.held.size;
  }

  /** Whether this process holds the agent's lease now. */
  holds(agentId: string): boolean {
    const l = this.held.get(agentId);
    return !!l && !l.lost && Date.now() < l.validUntil;
  }

  async acquire(agentId: string, opts: { waitMs: number; ask: boolean; urgent?: boolean }): Promise<AgentLease | null> {
    const mine = this.held.get(agentId);
    if (mine && !mine.lost && Date.now() < mine.validUntil) return mine;
    const deadline = Date.now() + opts.waitMs;
    let askedAt = 0;
    let askedOwner: string | null = null;
    let handoff = false;
    for (;;) {
      const started = Date.now();
      const r = await this.tryTake(agentId);
      if (r.epoch !== null) {
        // Its own lease taken again with the same epoch (nobody held it in between): the lease the
        // actor runs under goes on.
        if (mine && !mine.lost && mine.epoch === r.epoch) {
          mine.validUntil = started + this.opts.ttlMs;
          return mine;
        }
        const lease = new HeldLease(agentId, r.epoch, started + this.opts.ttlMs, (l) => this.staleWrite(l));
        const previous = this.held.get(agentId);
        if (previous) previous.lost = true;
        this.held.set(agentId, lease);
        this.opts.metrics?.held(this.held.size);
        // The owner as read just before the take: none or this instance (free), one whose lease had
        // lapsed (a take-over), or one that released it meanwhile (a hand-over when asked).
        const kind = r.owner === null || r.owner === this.instanceId ? (handoff ? "handoff" : "free") : r.lapsed ? "lapsed" : handoff ? "handoff" : "free";
        this.opts.metrics?.taken(kind);
        if (kind !== "free") this.opts.log.info("lease taken", { agent_id: agentId, epoch: r.epoch, from: r.owner, kind });
        return lease;
      }
      if (!opts.ask || Date.now() >= deadline || this.stopped) return null;
      // An urgent request (a kill) asks again at once when the lease moved to another owner meanwhile
      // (the one it asked had handed it on), and more often.
      if (Date.now() - askedAt > (opts.urgent ? 200 : 500) || (opts.urgent && r.owner !== askedOwner)) {
        askedAt = Date.now();
        askedOwner = r.owner;
        handoff = true;
        await this.database.db.execute(sql`select pg_notify(${REQUEST}, ${JSON.stringify({ agent: agentId, owner: r.owner, from: this.instanceId, urgent: opts.urgent === true })})`);
      }
      // Wake on the release, else poll: the lapse (an owner that died), or every 100 ms.
      const waitMs = Math.max(5, Math.min(100, r.remainingMs + 5, deadline - Date.now()));
      await this.waitFor(agentId, waitMs);
    }
  }

  async release(lease: AgentLease): Promise<void> {
    const held = lease as HeldLease;
    const wasHeld = this.held.get(lease.agentId) === held;
    if (!held.lost) held.released = true;
    held.lost = true;
    // Asked for urgently (a kill): handed to that instance directly with a new epoch, live for one TTL
    // (it takes it at once; if it does not, the lease lapses as a dead owner's would).
    const to = wasHeld ? (this.urgentFor.get(lease.agentId) ?? null) : null;
    if (wasHeld) {
      this.held.delete(lease.agentId);
      this.urgentFor.delete(lease.agentId);
      this.opts.metrics?.held(this.held.size);
    }
    if (to) {
      // Handed over with a new epoch, under the agent's exclusive advisory lock as agent_lease_take
      // changes it: this instance's writes under way finish first, later ones are refused. (The taker,
      // finding itself the owner, keeps that epoch.)
      await this.database.db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(7214993, hashtext(${lease.agentId}))`);
        await tx.execute(
          sql`with r as (update agent_leases set owner = ${to}, epoch = epoch + 1, expires_at = clock_timestamp() + ${this.opts.ttlMs} * interval '1 millisecond'
                           where agent_id = ${lease.agentId} and epoch = ${lease.epoch} and owner = ${this.instanceId} returning agent_id)
                select pg_notify(${RELEASED}, agent_id) from r`,
        );
      });
    } else {
      await this.database.db.execute(
        sql`with r as (update agent_leases set owner = null, expires_at = clock_timestamp()
                       where agent_id = ${lease.agentId} and epoch = ${lease.epoch} and owner = ${this.instanceId} returning agent_id)
            select pg_notify(${RELEASED}, agent_id) from r`,
      );
    }
    if (to) this.opts.log.info("lease handed over", { agent_id: lease.agentId, epoch: lease.epoch, to, urgent: true });
  }

  /** Renews every held lease (and this instance's row); those no longer ours are lost. */
  private async renew(): Promise<void> {
    if (this.renewing || this.stopped) return;
    this.renewing = true;
    const started = Date.now();
    try {
      // Leases are renewed first, then what was not renewed expires: a renewal that comes late (a
      // stalled event loop) but finds the lease still this instance's, at the same epoch, keeps it.
      // The instance's row is registered after its leases, and never to outlive them (registerInstance).
      const ids = [...this.held.keys()];
      if (!ids.length) {
        await this.registerInstance();
        return;
      }
      const rows = rowsOf(
        await this.database.db.execute(
          sql`update agent_leases set expires_at = clock_timestamp() + ${this.opts.ttlMs} * interval '1 millisecond'
              where owner = ${this.instanceId} and agent_id = any(string_to_array(${ids.join(",")}, ',')) returning agent_id, epoch`,
        ),
      );
      await this.registerInstance(rows.map((r) => String(r.agent_id)));
      const renewed = new Map(rows.map((r) => [String(r.agent_id), Number(r.epoch)]));
      for (const id of ids) {
        const lease = this.held.get(id);
        if (!lease || lease.lost) continue;
        if (renewed.get(id) === lease.epoch) lease.validUntil = started + this.opts.ttlMs;
        else this.lose(lease, "taken over by another instance");
      }
    } catch (error) {
      this.opts.log.warn("lease renewal failed", { error: String(error) });
    } finally {
      this.renewing = false;
      this.expireLocally(Date.now());
    }
  }

  /** Leases whose time ran out without a renewal (the database unreachable, the process paused): lost. */
  private expireLocally(now: number): void {
    for (const lease of this.held.values()) if (!lease.lost && now >= lease.validUntil) this.lose(lease, "not renewed in time");
  }

  private staleWrite(lease: HeldLease): void {
    if (!lease.lost) this.lose(lease, "a write was refused for a stale epoch");
  }

  private lose(lease: HeldLease, why: string): void {
    lease.lost = true;
    const current = this.held.get(lease.agentId) === lease;
    this.opts.log.warn("lease lost: this instance no longer owns the agent and writes nothing for it", { agent_id: lease.agentId, epoch: lease.epoch, why });
    // An older lease of an agent this instance took again since (a late write of its old actor) is
    // not the current actor's: that one stays.
    if (!current) return;
    this.held.delete(lease.agentId);
    this.urgentFor.delete(lease.agentId);
    this.opts.metrics?.lost();
    this.opts.metrics?.held(this.held.size);
    this.handlers?.lost(lease.agentId);
  }

  /** Takes the lease if it is free, lapsed or this instance's; else says whose it is and for how long. */
  private async tryTake(agentId: string): Promise<{ epoch: number | null; owner: string | null; lapsed: boolean; remainingMs: number }> {
    // agent_lease_take (migration 0020): one statement, its own transaction; the agent's exclusive
    // advisory lock is held from before the epoch changes until it commits (see lease-fence.ts).
    const rows = rowsOf(await this.database.db.execute(sql`select * from agent_lease_take(${agentId}, ${this.instanceId}, ${this.opts.ttlMs})`));
    const r = rows[0] ?? {};
    const epoch = r.epoch === null || r.epoch === undefined ? null : Number(r.epoch);
    return { epoch, owner: (r.owner as string | null) ?? null, lapsed: r.lapsed === true, remainingMs: Number(r.remaining_ms ?? 0) };
  }

  private waitFor(agentId: string, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      let set = this.waiters.get(agentId);
      if (!set) this.waiters.set(agentId, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        set!.delete(done);
        if (!set!.size) this.waiters.delete(agentId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
    });
  }

  private wake(agentId: string): void {
    const set = this.waiters.get(agentId);
    if (set) for (const w of [...set]) w();
  }

  /** Stops renewing and listening; the leases still held are released by the registry first (releaseAll). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.allSettled(this.unlisten.map((u) => u()));
    try {
      // The instance is gone: its records in progress may be resolved by the others at once (-infinity:
      // lapsed by a clean stop, see registerInstance).
      await this.database.db.execute(sql`update service_instances set expires_at = '-infinity' where id = ${this.instanceId}`);
    } catch {
      // the database is unreachable: the row lapses by itself
    }
  }
}

/**
 * One seal key per database: the first instance stores its public key's fingerprint; an instance
 * whose key has another one gets the stored fingerprint back (it must not start: it could not open
 * the credentials the others sealed). Null when the keys match.
 */
export async function checkSealKeyFingerprint(database: Database, fingerprint: string): Promise<string | null> {
  await database.db.execute(sql`insert into cluster_settings (name, value) values ('seal_key_fingerprint', ${fingerprint}) on conflict (name) do nothing`);
  const rows = rowsOf(await database.db.execute(sql`select value from cluster_settings where name = 'seal_key_fingerprint'`));
  const stored = String(rows[0]?.value ?? "");
  return stored === fingerprint ? null : stored;
}
