/**
 * One actor per agent. It owns the agent's mode, breaker, limits, credentials
 * handle, tracked orders, daily volume and market exposure. Every state change
 * runs through its mailbox, one message at a time, so the risk checks and the
 * reservations they make need no locks. Slow work (database batches, venue
 * calls) runs outside the mailbox; the actor only records its outcome.
 */
import pLimit from "p-limit";
import { Mailbox } from "./mailbox.ts";
import type { Evictable } from "./registry.ts";
import { type Clock, systemClock } from "../src/domain/clock.ts";
import { ACTIVE_STATUSES, type BreakerReason, type OrderStatus } from "../src/domain/order-status.ts";
import type { RiskState } from "../src/risk/types.ts";
import type {
  ActorLimits,
  AgentProfile,
  AgentSnapshot,
  AgentStore,
  BreakerState,
  CredentialsInfo,
  CancelOutcome,
  KillOutcome,
  KillPorts,
  TrackedOrder,
} from "./ports.ts";

export interface AgentView<L> {
  profile: AgentProfile;
  limits: L;
  breaker: BreakerState;
  dailyUsedUnits: bigint;
  day: string;
  openOrders: number;
  credentials: CredentialsInfo | null;
}

export interface ReserveRequest<V extends { approved: boolean }> {
  /** The order to reserve if approved (status awaiting_signature or submitting). */
  order: Omit<TrackedOrder, "tradingDay" | "filledUnits">;
  /** Pure risk evaluation over the actor's state at this instant. */
  evaluate: (state: RiskState) => V;
  /** Starts the durable write of the approved order; not awaited inside the mailbox. */
  persist: (order: TrackedOrder, timestampMs: number) => Promise<void>;
}

export type ReserveResult<V> =
  | { verdict: V; approved: false }
  | { verdict: V; approved: true; order: TrackedOrder; timestampMs: number; written: Promise<void> };

export type SubmissionStart =
  | { ok: true; order: TrackedOrder; finish: (outcome: VenueOutcome) => Promise<void> }
  | { ok: false; reason: "not_found" | "invalid_state" | "expired" | "halted"; status?: OrderStatus };

/** What happened when an order was sent to the venue. */
export type VenueOutcome =
  | { kind: "accepted"; venueOrderId: string; status: "open" | "filled"; filledUnits: bigint }
  | { kind: "rejected" }
  | { kind: "unknown" }
  | { kind: "not_sent" };

export interface KillResult {
  cancelled: string[];
  /** Orders the venue had already matched before the cancel reached it. */
  filled: string[];
  failed: string[];
  credentialsDeleted: boolean;
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export class AgentActor<L extends ActorLimits> implements Evictable {
  private readonly mailbox = new Mailbox();
  private profile: AgentProfile;
  private limits: L;
  private breaker: BreakerState;
  private venueErrorStreak: number;
  private credentials: CredentialsInfo | null;
  private readonly active = new Map<string, TrackedOrder>();
  private readonly daily = new Map<string, bigint>();
  private readonly exposure = new Map<string, bigint>();
  private lastTimestampMs: number;
  /** Durable writes of reserved orders that have not finished yet. */
  private readonly writes = new Map<string, Promise<void>>();
  /** Venue calls in flight, by order id; resolve when the outcome is recorded. */
  private readonly inflight = new Map<string, Promise<void>>();
  private killChain: Promise<unknown> = Promise.resolve();
  /** Kills running or queued: the actor is never evicted under one. */
  private killsRunning = 0;

  constructor(
    snapshot: AgentSnapshot<L>,
    private readonly store: AgentStore<L>,
    private readonly clock: Clock = systemClock,
  ) {
    this.profile = snapshot.profile;
    this.limits = snapshot.limits;
    this.breaker = snapshot.breaker;
    this.venueErrorStreak = snapshot.venueErrorStreak;
    this.credentials = snapshot.credentials;
    for (const o of snapshot.activeOrders) this.active.set(o.id, { ...o });
    for (const [day, units] of Object.entries(snapshot.dailyUsedUnits)) this.daily.set(day, units);
    for (const [cond, units] of Object.entries(snapshot.exposureUnits)) this.exposure.set(cond, units);
    this.lastTimestampMs = snapshot.lastOrderTimestampMs;
  }

  get id(): string {
    return this.profile.id;
  }

  // ---------------------------------------------------------------- reads

  view(): AgentView<L> {
    const now = this.clock.now();
    const day = utcDay(now);
    return {
      profile: { ...this.profile },
      limits: this.limits,
      breaker: { ...this.currentBreaker(now) },
      dailyUsedUnits: this.daily.get(day) ?? 0n,
      day,
      openOrders: this.active.size,
      credentials: this.credentials,
    };
  }

  tracked(orderId: string): TrackedOrder | undefined {
    const o = this.active.get(orderId);
    return o ? { ...o } : undefined;
  }

  // ---------------------------------------------------------------- agent settings

  /** Replaces the limits with `change(current)`; a throw from `change` leaves them as they were. */
  updateLimits(change: (current: L) => L): Promise<AgentView<L>> {
    return this.mailbox.send(async () => {
      const next = change(this.limits);
      await this.store.saveLimits(this.profile.id, next);
      this.limits = next;
      return this.view();
    });
  }

  tripBreaker(reason: BreakerReason): Promise<AgentView<L>> {
    return this.mailbox.send(async () => {
      const now = this.clock.now();
      // A kill halt is the strongest: tripping it again by hand must not turn it into a
      // manual trip (which would let credentials in before a resume).
      const current = this.currentBreaker(now);
      if (current.state === "tripped" && current.reason === "kill" && reason !== "kill") return this.view();
      this.breaker = { state: "tripped", reason, since: new Date(now) };
      await this.store.saveBreaker(this.profile.id, this.breaker, this.venueErrorStreak);
      return this.view();
    });
  }

  /** Closes the breaker (after a kill or a manual trip, or early after venue errors). */
  resume(): Promise<AgentView<L>> {
    return this.mailbox.send(async () => {
      this.breaker = { state: "closed", reason: null, since: new Date(this.clock.now()) };
      this.venueErrorStreak = 0;
      await this.store.saveBreaker(this.profile.id, this.breaker, 0);
      return this.view();
    });
  }

  /** Stores sealed credentials and moves to delegated mode; refused while halted by a kill. */
  setCredentials(sealed: Uint8Array, info: CredentialsInfo): Promise<{ ok: true; view: AgentView<L> } | { ok: false }> {
    return this.mailbox.send(async () => {
      if (this.breaker.state === "tripped" && this.breaker.reason === "kill") return { ok: false as const };
      await this.store.saveCredentials(this.profile.id, sealed, info);
      this.credentials = info;
      this.profile = { ...this.profile, mode: "delegated" };
      return { ok: true as const, view: this.view() };
    });
  }

  clearCredentials(): Promise<AgentView<L>> {
    return this.mailbox.send(async () => {
      await this.store.deleteCredentials(this.profile.id);
      this.credentials = null;
      this.profile = { ...this.profile, mode: "payload" };
      return this.view();
    });
  }

  // ---------------------------------------------------------------- intents

  /**
   * Evaluates an intent against the actor's state and, when approved, reserves
   * its notional at once, so concurrent intents can never overshoot together.
   */
  reserve<V extends { approved: boolean }>(req: ReserveRequest<V>): Promise<ReserveResult<V>> {
    return this.mailbox.send(() => {
      const now = this.clock.now();
      const day = utcDay(now);
      const verdict = req.evaluate(this.riskState(now, req.order.conditionId));
      if (!verdict.approved) return { verdict, approved: false as const };
      const order: TrackedOrder = { ...req.order, tradingDay: day, filledUnits: 0n };
      this.track(order);
      const timestampMs = Math.max(now, this.lastTimestampMs + 1);
      this.lastTimestampMs = timestampMs;
      if (order.status === "submitting") this.openInflight(order.id);
      const written = req.persist({ ...order }, timestampMs);
      this.writes.set(order.id, written);
      written.then(
        () => this.writes.delete(order.id),
        () => {
          this.writes.delete(order.id);
          // Never durably written: the order does not exist. Close its venue call slot (nothing
          // was sent) and give its reservation back.
          void this.finishers.get(order.id)?.({ kind: "not_sent" });
          void this.mailbox.send(() => this.forget(order.id));
        },
      );
      return { verdict, approved: true as const, order: { ...order }, timestampMs, written };
    });
  }

  /**
   * Moves an order awaiting its signature to `submitting`, refusing when the
   * agent is halted, the order is not awaiting a signature, or its deadline passed.
   */
  beginSubmission(orderId: string, expire: (order: TrackedOrder) => Promise<void>): Promise<SubmissionStart> {
    return this.mailbox.send(async () => {
      const order = this.active.get(orderId);
      if (!order) return { ok: false as const, reason: "not_found" as const };
      if (order.status !== "awaiting_signature") return { ok: false as const, reason: "invalid_state" as const, status: order.status };
      const now = this.clock.now();
      if (this.currentBreaker(now).state === "tripped") return { ok: false as const, reason: "halted" as const };
      if (order.signatureDeadline && now > order.signatureDeadline.getTime()) {
        await expire({ ...order });
        this.apply(order.id, { status: "expired" });
        return { ok: false as const, reason: "expired" as const };
      }
      this.apply(order.id, { status: "submitting" });
      const finish = this.openInflight(order.id);
      return { ok: true as const, order: { ...order }, finish };
    });
  }

  /**
   * The last gate before an order is sent to the venue: false once the breaker
   * has tripped (a kill trips it synchronously), so nothing is placed after a
   * halt, even an order approved just before it.
   */
  mayPlace(): Promise<boolean> {
    return this.mailbox.send(() => this.currentBreaker(this.clock.now()).state === "closed");
  }

  /** Whether a venue call for this order is in flight in this process. */
  isInflight(orderId: string): boolean {
    return this.inflight.has(orderId);
  }

  /** The finisher of a delegated order's placement, opened by reserve(). */
  finishPlacement(orderId: string): ((outcome: VenueOutcome) => Promise<void>) | undefined {
    return this.finishers.get(orderId);
  }

  /** Records a status change made elsewhere (expiry, venue fill, reconciliation, single cancel). */
  transition(orderId: string, patch: Partial<Pick<TrackedOrder, "status" | "venueOrderId" | "filledUnits">>): Promise<void> {
    return this.mailbox.send(() => {
      this.apply(orderId, patch);
    });
  }

  /**
   * Changes an order only if the actor has it in one of `from`: the guard for
   * client cancels and expiry racing a submission. Returns whether it changed.
   */
  transitionIf(orderId: string, from: OrderStatus[], patch: Partial<Pick<TrackedOrder, "status" | "venueOrderId" | "filledUnits">>): Promise<boolean> {
    return this.mailbox.send(() => {
      const o = this.active.get(orderId);
      if (!o || !from.includes(o.status)) return false;
      this.apply(orderId, patch);
      return true;
    });
  }

  /** Runs the risk evaluation against the current state without reserving anything (dry run). */
  evaluateOnly<V>(conditionId: string, evaluate: (state: RiskState) => V): Promise<V> {
    return this.mailbox.send(() => evaluate(this.riskState(this.clock.now(), conditionId)));
  }

  private riskState(now: number, conditionId: string): RiskState {
    const breaker = this.currentBreaker(now);
    return {
      breaker: { tripped: breaker.state === "tripped", reason: breaker.reason },
      daily_used_usdc_units: this.daily.get(utcDay(now)) ?? 0n,
      market_exposure_usdc_units: this.exposure.get(conditionId) ?? 0n,
    };
  }

  /** The limits in force; read inside a mailbox message for a consistent view. */
  currentLimits(): L {
    return this.limits;
  }

  /**
   * Counts a fill learned after an order ended (a cancelled order that had
   * partly filled): that part keeps counting against the daily volume and exposure.
   */
  addLateFill(order: Pick<TrackedOrder, "tradingDay" | "conditionId" | "side">, filledUnits: bigint): Promise<void> {
    return this.mailbox.send(() => {
      if (filledUnits <= 0n) return;
      this.daily.set(order.tradingDay, (this.daily.get(order.tradingDay) ?? 0n) + filledUnits);
      const signed = order.side === "buy" ? filledUnits : -filledUnits;
      this.exposure.set(order.conditionId, (this.exposure.get(order.conditionId) ?? 0n) + signed);
    });
  }

  /** Counts a venue error or success toward the venue-errors breaker. */
  recordVenueResult(ok: boolean): Promise<void> {
    return this.mailbox.send(async () => {
      if (ok) {
        if (this.venueErrorStreak === 0) return;
        this.venueErrorStreak = 0;
        await this.store.saveBreaker(this.profile.id, this.breaker, 0);
        return;
      }
      this.venueErrorStreak++;
      if (this.venueErrorStreak >= this.limits.max_venue_errors && this.breaker.state === "closed") {
        this.breaker = { state: "tripped", reason: "venue_errors", since: new Date(this.clock.now()) };
      }
      await this.store.saveBreaker(this.profile.id, this.breaker, this.venueErrorStreak);
    });
  }

  // ---------------------------------------------------------------- kill switch

  /**
   * Trips the breaker at once, then cancels every tracked order concurrently
   * under one deadline. Orders whose cancellation is not confirmed in time are
   * failed. Delegated credentials are deleted afterwards. Kills run one after
   * another, so a second kill is harmless.
   *
   * At most `concurrency` cancellations are in flight. A cancellation the venue
   * has not answered after `stallMs` gives its slot back while other orders
   * still wait for one, and goes to the back of the line for another attempt
   * (a cancel is idempotent: "already cancelled" counts as done); so a venue
   * that holds some requests open cannot keep the others from being tried.
   * Once nobody waits, unanswered cancels stay in flight until the deadline.
   */
  kill(ports: KillPorts, opts: { deadlineAt: number; concurrency: number; stallMs?: number }): Promise<KillResult> {
    // The breaker trips synchronously, before any queued message runs.
    this.breaker = { state: "tripped", reason: "kill", since: new Date(this.clock.now()) };
    this.killsRunning++;
    const run = this.killChain.then(() => this.runKill(ports, opts)).finally(() => this.killsRunning--);
    this.killChain = run.catch(() => undefined);
    return run;
  }

  private async runKill(ports: KillPorts, opts: { deadlineAt: number; concurrency: number; stallMs?: number }): Promise<KillResult> {
    const targets = await this.mailbox.send(async () => {
      this.breaker = { state: "tripped", reason: "kill", since: this.breaker.since ?? new Date(this.clock.now()) };
      await this.store.saveBreaker(this.profile.id, this.breaker, this.venueErrorStreak);
      return [...this.active.values()].map((o) => o.id);
    });
    const remaining = Math.max(0, opts.deadlineAt - this.clock.now());
    const signal = AbortSignal.timeout(remaining);
    const deadline = new Promise<"deadline">((resolve) => {
      if (signal.aborted) resolve("deadline");
      else signal.addEventListener("abort", () => resolve("deadline"), { once: true });
    });
    const limit = pLimit(opts.concurrency);
    const stallMs = opts.stallMs ?? Math.max(100, Math.min(1000, Math.floor(remaining / 5)));
    const outcomes = await Promise.all(
      targets.map(async (id) => {
        const outcome = await this.cancelForKill(id, ports, { signal, deadline, limit, stallMs });
        return outcome ? { orderId: id, ...outcome } : null;
      }),
    );
    const done = outcomes.filter((o): o is NonNullable<typeof o> => o !== null);
    if (done.length) await ports.saveOutcomes(done);
    const result: KillResult = { cancelled: [], filled: [], failed: [], credentialsDeleted: false };
    await this.mailbox.send(async () => {
      for (const o of done) {
        this.apply(o.orderId, o.filledUnits !== undefined ? { status: o.status, filledUnits: o.filledUnits } : { status: o.status });
        result[o.status].push(o.orderId);
      }
      if (this.profile.mode === "delegated" || this.credentials) {
        result.credentialsDeleted = await this.store.deleteCredentials(this.profile.id);
        this.credentials = null;
        this.profile = { ...this.profile, mode: "payload" };
      }
    });
    return result;
  }

  private async cancelForKill(
    id: string,
    ports: KillPorts,
    k: { signal: AbortSignal; deadline: Promise<"deadline">; limit: ReturnType<typeof pLimit>; stallMs: number },
  ): Promise<Omit<KillOutcome, "orderId"> | null> {
    const written = this.writes.get(id);
    if (written) {
      const r = await Promise.race([written.then(() => "ok" as const, () => "gone" as const), k.deadline]);
      if (r === "gone") return null;
      if (r === "deadline") {
        const reason = "kill deadline passed before the order was written";
        // The row lands later: make it say what the kill answered, instead of awaiting a signature.
        written.then(() => ports.saveOutcomes([{ orderId: id, status: "failed", reason }])).catch(() => undefined);
        return { status: "failed", reason };
      }
    }
    let order = this.active.get(id);
    if (!order) return null;
    if (order.status === "awaiting_signature") return { status: "cancelled", reason: "kill switch" };
    const flight = this.inflight.get(id);
    if (flight) {
      // Placed while the kill runs: wait for the venue's answer, then cancel what it accepted.
      const r = await Promise.race([flight.then(() => "ok" as const), k.deadline]);
      if (r === "deadline") return { status: "failed", reason: "kill deadline passed while the order was being placed" };
      order = this.active.get(id);
      if (!order) return null;
    }
    // An order without a venue id (unknown after a timeout, or submitting from an earlier process)
    // may still be at the venue: the port cancels it by its order hash.
    const snapshot = { ...order };
    for (;;) {
      const attempt = await k.limit(() => this.cancelAttempt(snapshot, ports, k));
      if (attempt !== "failed" && attempt !== "stalled") {
        return attempt.status === "filled"
          ? { status: "filled", reason: "matched at the venue before the kill", filledUnits: attempt.filledUnits }
          : { status: "cancelled", reason: "kill switch", filledUnits: attempt.filledUnits };
      }
      if (attempt === "failed" || k.signal.aborted) {
        return { status: "failed", reason: "cancellation not confirmed before the kill deadline" };
      }
      // "stalled": the slot went to a waiting order; try again from the back of the line.
    }
  }

  /** One cancellation inside a concurrency slot; "stalled" when it gave the slot up to waiting orders. */
  private async cancelAttempt(
    order: TrackedOrder,
    ports: KillPorts,
    k: { signal: AbortSignal; limit: ReturnType<typeof pLimit>; stallMs: number },
  ): Promise<Exclude<CancelOutcome, { status: "failed" }> | "failed" | "stalled"> {
    if (k.signal.aborted) return "failed";
    const stall = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const watch = (ms: number) => {
      timer = setTimeout(() => {
        if (k.limit.pendingCount > 0) stall.abort();
        else watch(Math.max(10, Math.floor(k.stallMs / 10)));
      }, ms);
    };
    watch(k.stallMs);
    try {
      const outcome = await ports.cancelAtVenue(order, AbortSignal.any([k.signal, stall.signal]));
      if (outcome.status !== "failed") return outcome;
      return stall.signal.aborted && !k.signal.aborted ? "stalled" : "failed";
    } finally {
      clearTimeout(timer);
    }
  }

  // ---------------------------------------------------------------- registry

  canEvict(now: number, idleMs: number): boolean {
    return this.mailbox.idleFor(now) >= idleMs && this.writes.size === 0 && this.inflight.size === 0 && this.killsRunning === 0;
  }

  // ---------------------------------------------------------------- internals

  private readonly finishers = new Map<string, (outcome: VenueOutcome) => Promise<void>>();

  /** Opens an in-flight venue call; its finisher records the outcome through the mailbox. */
  private openInflight(orderId: string): (outcome: VenueOutcome) => Promise<void> {
    let settle!: () => void;
    this.inflight.set(orderId, new Promise<void>((r) => (settle = r)));
    const finish = (outcome: VenueOutcome) =>
      this.mailbox
        .send(() => {
          switch (outcome.kind) {
            case "accepted":
              this.apply(orderId, { status: outcome.status, venueOrderId: outcome.venueOrderId, filledUnits: outcome.filledUnits });
              break;
            case "rejected":
              this.apply(orderId, { status: "rejected" });
              break;
            case "unknown":
              this.apply(orderId, { status: "unknown" });
              break;
            case "not_sent":
              break;
          }
        })
        .finally(() => {
          this.inflight.delete(orderId);
          this.finishers.delete(orderId);
          settle();
        });
    this.finishers.set(orderId, finish);
    return finish;
  }

  private currentBreaker(now: number): BreakerState {
    const b = this.breaker;
    if (
      b.state === "tripped" &&
      b.reason === "venue_errors" &&
      b.since &&
      now - b.since.getTime() >= this.limits.breaker_cooldown_s * 1000
    ) {
      this.breaker = { state: "closed", reason: null, since: new Date(now) };
      this.venueErrorStreak = 0;
      void this.store.saveBreaker(this.profile.id, this.breaker, 0).catch(() => undefined);
    }
    return this.breaker;
  }

  private track(order: TrackedOrder): void {
    this.active.set(order.id, order);
    this.addCounts(order, 1n);
  }

  /** Drops an order that never came to exist (its write failed), returning its reservation. */
  private forget(orderId: string): void {
    const o = this.active.get(orderId);
    if (!o) return;
    this.addCounts(o, -1n);
    this.active.delete(orderId);
  }

  private apply(orderId: string, patch: Partial<Pick<TrackedOrder, "status" | "venueOrderId" | "filledUnits">>): void {
    const o = this.active.get(orderId);
    if (!o) return;
    this.addCounts(o, -1n);
    Object.assign(o, patch);
    this.addCounts(o, 1n);
    if (!ACTIVE_STATUSES.has(o.status)) this.active.delete(orderId);
  }

  /** Adds (sign 1) or removes (sign -1) an order's share of the daily volume and exposure. */
  private addCounts(o: TrackedOrder, sign: bigint): void {
    const daily = countedNotional(o);
    this.daily.set(o.tradingDay, (this.daily.get(o.tradingDay) ?? 0n) + sign * daily);
    const exp = exposureOf(o);
    this.exposure.set(o.conditionId, (this.exposure.get(o.conditionId) ?? 0n) + sign * exp);
  }
}

/** Notional an order counts against the daily volume: all of it while reserved, open, filled or unresolved; else what filled. */
export function countedNotional(o: Pick<TrackedOrder, "status" | "notionalUnits" | "filledUnits">): bigint {
  return ACTIVE_STATUSES.has(o.status) || o.status === "filled" || o.status === "failed" ? o.notionalUnits : o.filledUnits;
}

/** An order's share of its market's exposure: buys count while reserved, open or filled; sells reduce it only as they fill. */
export function exposureOf(o: Pick<TrackedOrder, "side" | "status" | "notionalUnits" | "filledUnits">): bigint {
  return o.side === "buy" ? countedNotional(o) : -o.filledUnits;
}
