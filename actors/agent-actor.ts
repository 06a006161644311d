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
import { type OrderAmounts, orderAmounts } from "../src/domain/amounts.ts";
import { type Clock, systemClock } from "../src/domain/clock.ts";
import { newId } from "../src/domain/ids.ts";
import type { Market, OrderBook } from "../src/domain/market.ts";
import { ACTIVE_STATUS_LIST, ACTIVE_STATUSES, type BreakerReason, HALT_REASONS, type OrderStatus } from "../src/domain/order-status.ts";
import type { VenueCredentials } from "../src/domain/venue-credentials.ts";
import { filledUnitsOf, orderStatusFor } from "../src/domain/venue-status.ts";
import { verifySignedOrder } from "../src/eip712/verify-signed-order.ts";
import { evaluateRisk } from "../src/risk/evaluate-risk.ts";
import type { Limits } from "../src/risk/limits.ts";
import type { RiskResult, RiskState } from "../src/risk/types.ts";
import { aboveThreshold } from "./above-threshold.ts";
import { type BuiltOrder, buildOrder } from "./build-order.ts";
import { addCounts, addLateFillCounts, type OrderCounts, utcDay } from "./order-counts.ts";
import type { OrderPatch } from "./order-patch.ts";
import { approvedLastMinute, countRunawayRefusal, isRunawayRefusal, staleApprovals } from "./runaway-guard.ts";
import { outcomePatch, type VenueOutcome } from "./venue-outcome.ts";
import type { DecisionMessage, IntentAnswer, IntentMessage, Placed, ReconcileResult, Refusal, SubmitSignedMessage } from "./messages.ts";
import type {
  ActorLimits,
  AgentProfile,
  AgentSnapshot,
  AgentStore,
  BreakerState,
  CredentialsInfo,
  CancelOutcome,
  HeartbeatState,
  KillOutcome,
  KillPorts,
  CancelRetry,
  OrderPorts,
  StatusPatch,
  StoredOrder,
  RecentApproval,
  TrackedOrder,
  VenueAuthPassThrough,
  VenueCancelResult,
  VenueOrderView,
  VenuePostResult,
} from "./ports.ts";


export interface AgentView<L> {
  profile: AgentProfile;
  limits: L;
  breaker: BreakerState;
  dailyUsedUnits: bigint;
  day: string;
  openOrders: number;
  credentials: CredentialsInfo | null;
  heartbeat: HeartbeatState | null;
}

export interface ReserveRequest<V extends { approved: boolean }> {
  /** The order to reserve if approved (status awaiting_signature or submitting). */
  order: Omit<TrackedOrder, "tradingDay" | "filledUnits">;
  /** Pure risk evaluation over the actor's state at this instant. */
  evaluate: (state: RiskState) => V;
  /** What the duplicate guard compares (market, side, size, price); absent: no runaway guards. */
  fingerprint?: string;
  /** Whether the approved order waits for a person (above approval_threshold_usdc), decided with the limits in force. */
  hold?: (limits: ActorLimits) => boolean;
  /** Starts the durable write of the approved order; not awaited inside the mailbox. */
  persist: (order: TrackedOrder, timestampMs: number) => Promise<void>;
}

export type ReserveResult<V> =
  | { verdict: V; approved: false }
  | { verdict: V; approved: true; order: TrackedOrder; timestampMs: number; written: Promise<void> };

export type SubmissionStart =
  | { ok: true; order: TrackedOrder; finish: (outcome: VenueOutcome) => Promise<void> }
  | { ok: false; reason: "not_found" | "invalid_state" | "expired" | "halted"; status?: OrderStatus };

export interface KillResult {
  cancelled: string[];
  /** Orders the venue had already matched before the cancel reached it. */
  filled: string[];
  failed: string[];
  credentialsDeleted: boolean;
}

/** Statuses an order is cancelled in locally (it has not reached the venue). */
const LOCAL_STATUSES: ReadonlySet<OrderStatus> = new Set(["awaiting_signature", "pending_approval"]);

/** What a heartbeat beat found. */
export type BeatResult<L> = { kind: "ok"; view: AgentView<L> } | { kind: "off" } | { kind: "missed"; deadlineAt: Date; claimed: boolean };

export class AgentActor<L extends ActorLimits, R extends StoredOrder = StoredOrder> implements Evictable {
  private readonly mailbox: Mailbox;
  private profile: AgentProfile;
  private limits: L;
  private breaker: BreakerState;
  private venueErrorStreak: number;
  private credentials: CredentialsInfo | null;
  private readonly active = new Map<string, TrackedOrder>();
  private readonly daily = new Map<string, bigint>();
  private readonly exposure = new Map<string, bigint>();
  /** The daily volume and exposure tallies together, for the bookkeeping functions (order-counts.ts). */
  private readonly counts: OrderCounts = { daily: this.daily, exposure: this.exposure };
  private lastTimestampMs: number;
  /** Durable writes of reserved orders that have not finished yet. */
  private readonly writes = new Map<string, Promise<void>>();
  /** Venue calls in flight, by order id; resolve when the outcome is recorded. */
  private readonly inflight = new Map<string, Promise<void>>();
  private killChain: Promise<unknown> = Promise.resolve();
  /** Kills running or queued: the actor is never evicted under one. */
  private killsRunning = 0;
  private heartbeat: HeartbeatState | null;
  /** A kill for a missed heartbeat has been claimed and not finished: no second one is started. */
  private heartbeatKill = false;
  /** Approved intents, oldest first, kept for the rate and duplicate guards. */
  private approvals: RecentApproval[];
  /** The latest approval time of each remembered intent (market, side, size, price). */
  private readonly lastApproval = new Map<string, number>();
  /** Times of intents refused by a runaway guard in the last minute. */
  private runawayRefusals: number[] = [];

  constructor(
    snapshot: AgentSnapshot<L>,
    private readonly store: AgentStore<L>,
    private readonly clock: Clock = systemClock,
    /** The order path's ports (store, venue, credentials); tests of the state alone leave them out. */
    private readonly ports?: OrderPorts<R>,
    opts: { mailboxCapacity?: number } = {},
  ) {
    this.mailbox = new Mailbox(opts.mailboxCapacity, clock);
    this.profile = snapshot.profile;
    this.limits = snapshot.limits;
    this.breaker = snapshot.breaker;
    this.venueErrorStreak = snapshot.venueErrorStreak;
    this.credentials = snapshot.credentials;
    for (const o of snapshot.activeOrders) this.active.set(o.id, { ...o });
    for (const [day, units] of Object.entries(snapshot.dailyUsedUnits)) this.daily.set(day, units);
    for (const [cond, units] of Object.entries(snapshot.exposureUnits)) this.exposure.set(cond, units);
    this.lastTimestampMs = snapshot.lastOrderTimestampMs;
    this.heartbeat = snapshot.heartbeat ?? null;
    this.approvals = [...(snapshot.recentApprovals ?? [])].sort((a, b) => a.at - b.at);
    for (const a of this.approvals) this.lastApproval.set(a.fingerprint, a.at);
  }

  get id(): string {
    return this.profile.id;
  }

  /** The agent's organization (fixed for its life): read on every request, without building a view. */
  get orgId(): string {
    return this.profile.orgId;
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
      heartbeat: this.heartbeat ? { ...this.heartbeat } : null,
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
      if (current.state === "tripped" && current.reason && HALT_REASONS.has(current.reason) && !HALT_REASONS.has(reason)) return this.view();
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
      this.runawayRefusals = [];
      await this.store.saveBreaker(this.profile.id, this.breaker, 0);
      return this.view();
    });
  }

  /** Stores sealed credentials and moves to delegated mode; refused while halted by a kill. */
  setCredentials(sealed: Uint8Array, info: CredentialsInfo): Promise<{ ok: true; view: AgentView<L> } | { ok: false }> {
    return this.mailbox.send(async () => {
      if (this.breaker.state === "tripped" && this.breaker.reason && HALT_REASONS.has(this.breaker.reason)) return { ok: false as const };
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
    return this.mailbox.send(async () => {
      const now = this.clock.now();
      const day = utcDay(now);
      const verdict = req.evaluate(this.riskState(now, req.order.conditionId, req.fingerprint));
      if (!verdict.approved) {
        if (req.fingerprint !== undefined) await this.countRunawayRefusal(now, verdict);
        return { verdict, approved: false as const };
      }
      const order: TrackedOrder = { ...req.order, tradingDay: day, filledUnits: 0n };
      if (req.hold?.(this.limits)) {
        // Above approval_threshold_usdc: reserved now, sent on nothing until a person approves.
        order.status = "pending_approval";
        order.signatureDeadline = null;
        order.approvalDeadline = new Date(now + (this.ports?.config.approvalTtlS ?? 3600) * 1000);
      }
      if (req.fingerprint !== undefined) {
        this.approvals.push({ at: now, fingerprint: req.fingerprint });
        this.lastApproval.set(req.fingerprint, now);
      }
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
  transition(orderId: string, patch: OrderPatch): Promise<void> {
    return this.mailbox.send(() => {
      this.apply(orderId, patch);
    });
  }

  /**
   * Changes an order only if the actor has it in one of `from`: the guard for
   * client cancels and expiry racing a submission. Returns whether it changed.
   */
  transitionIf(orderId: string, from: OrderStatus[], patch: OrderPatch): Promise<boolean> {
    return this.mailbox.send(() => {
      const o = this.active.get(orderId);
      if (!o || !from.includes(o.status)) return false;
      this.apply(orderId, patch);
      return true;
    });
  }

  /** Runs the risk evaluation against the current state without reserving anything (dry run). */
  evaluateOnly<V>(conditionId: string, evaluate: (state: RiskState) => V, fingerprint?: string): Promise<V> {
    return this.mailbox.send(() => evaluate(this.riskState(this.clock.now(), conditionId, fingerprint)));
  }

  private riskState(now: number, conditionId: string, fingerprint?: string): RiskState {
    const breaker = this.currentBreaker(now);
    const state: RiskState = {
      breaker: { tripped: breaker.state === "tripped", reason: breaker.reason },
      daily_used_usdc_units: this.daily.get(utcDay(now)) ?? 0n,
      market_exposure_usdc_units: this.exposure.get(conditionId) ?? 0n,
    };
    if (fingerprint === undefined) return state;
    this.pruneApprovals(now);
    const last = this.lastApproval.get(fingerprint);
    state.runaway = {
      approved_last_minute: approvedLastMinute(this.approvals, now),
      open_orders: this.active.size,
      duplicate_age_ms: last === undefined ? null : Math.max(0, now - last),
    };
    return state;
  }

  /** Forgets approvals older than both the last minute and the duplicate window. */
  private pruneApprovals(now: number): void {
    const drop = staleApprovals(this.approvals, now, this.limits.duplicate_window_s);
    for (const a of this.approvals.slice(0, drop)) {
      if (this.lastApproval.get(a.fingerprint) === a.at) this.lastApproval.delete(a.fingerprint);
    }
    if (drop) this.approvals.splice(0, drop);
  }

  /**
   * Counts an intent refused by a runaway guard; `runaway_trip_count` of them within a minute trip
   * the breaker (reason runaway), which a halt by the kill switch or a heartbeat outranks.
   */
  private async countRunawayRefusal(now: number, verdict: unknown): Promise<void> {
    if (!isRunawayRefusal(verdict)) return;
    const tripAt = this.limits.runaway_trip_count;
    const counted = countRunawayRefusal(this.runawayRefusals, now, tripAt);
    this.runawayRefusals = counted.refusals;
    if (!counted.trip) return;
    if (this.currentBreaker(now).state === "tripped") return;
    this.breaker = { state: "tripped", reason: "runaway", since: new Date(now) };
    this.runawayRefusals = [];
    await this.store.saveBreaker(this.profile.id, this.breaker, this.venueErrorStreak);
    this.ports?.observer.warn("runaway guard tripped the breaker", { agent_id: this.profile.id, refusals_in_a_minute: tripAt });
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
      addLateFillCounts(this.counts, order, filledUnits);
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
  kill(ports: KillPorts, opts: { deadlineAt: number; concurrency: number; stallMs?: number; reason?: "kill" | "heartbeat" }): Promise<KillResult> {
    // The breaker trips synchronously, before any queued message runs.
    this.breaker = { state: "tripped", reason: opts.reason ?? "kill", since: new Date(this.clock.now()) };
    this.killsRunning++;
    const run = this.killChain.then(() => this.runKill(ports, opts)).finally(() => this.killsRunning--);
    this.killChain = run.catch(() => undefined);
    return run;
  }

  private async runKill(ports: KillPorts, opts: { deadlineAt: number; concurrency: number; stallMs?: number; reason?: "kill" | "heartbeat" }): Promise<KillResult> {
    const targets = await this.mailbox.send(async () => {
      this.breaker = { state: "tripped", reason: opts.reason ?? "kill", since: this.breaker.since ?? new Date(this.clock.now()) };
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
    if (LOCAL_STATUSES.has(order.status)) return { status: "cancelled", reason: "kill switch" };
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

  // ---------------------------------------------------------------- the order path (messages from the features)

  private requirePorts(): OrderPorts<R> {
    if (!this.ports) throw new Error("this actor was built without its order ports");
    return this.ports;
  }

  /**
   * An intent: the eight checks on this actor's state, the reservation, the order (amounts and typed
   * data), its durable write through the order store, and in delegated mode the placement at the venue.
   */
  intent(msg: IntentMessage): Promise<IntentAnswer<R>> {
    return this.mailbox.admit(() => this.runIntent(msg));
  }

  private async runIntent(msg: IntentMessage): Promise<IntentAnswer<R>> {
    const p = this.requirePorts();
    let market: Market | null;
    let book: OrderBook | null;
    try {
      [market, book] = await Promise.all([p.venue.getMarketByToken(msg.marketId), p.venue.getBook(msg.marketId)]);
    } catch {
      return { kind: "venue_unavailable", detail: "the venue could not be reached for the market and its book; nothing was created, try again" };
    }
    let amounts: OrderAmounts | null = null;
    try {
      amounts = orderAmounts({ side: msg.side, sizeUnits: msg.sizeUnits, price: msg.priceText });
    } catch {
      amounts = null; // price or size the venue cannot express: the checks reject it
    }
    const intent = { market_id: msg.marketId, side: msg.side, size_usdc: msg.sizeUsdc, price: msg.price, probability: msg.probability };
    const evaluate = (state: RiskState): RiskResult => {
      const verdict = evaluateRisk({ intent, limits: this.limits as unknown as Limits, state, market, book, now_ms: this.clock.now() });
      if (verdict.approved && !amounts) {
        // Defensive: an order the venue cannot express is never approved.
        return {
          approved: false,
          checks: verdict.checks.map((c) => (c.check === "order_size" ? { ...c, passed: false } : c)),
          failures: [{ check: "order_size", code: "order_too_small", message: "the order rounds to no shares at this price", limit: null, actual: 0 }],
        };
      }
      return verdict;
    };
    const conditionId = market?.condition_id ?? "";
    // The duplicate guard's key: the same market, side, size and price (exact units and decimal text).
    const fingerprint = `${msg.marketId}|${msg.side}|${msg.sizeUnits}|${msg.priceText}`;
    if (msg.dryRun) {
      const verdict = await this.evaluateOnly(conditionId, evaluate, fingerprint);
      p.observer.verdict(verdict);
      return { kind: "dry_run", verdict };
    }

    const profile = this.profile;
    const mode = profile.mode;
    if (mode === "delegated" && !this.credentials?.scopes.includes("order:place")) {
      return {
        kind: "invalid_state",
        detail: "the agent's venue credentials lack the order:place scope; submit credentials with it, or delete them to use payload mode",
      };
    }
    const now = this.clock.now();
    const orderId = msg.reservedId ? `ord_${msg.reservedId}` : newId("ord", now);
    const decisionId = newId("dec", now);
    const signatureDeadline = mode === "payload" ? new Date(now + p.config.signatureTtlS * 1000) : null;
    const negRisk = market?.neg_risk ?? false;
    // The market's protocol version picks the exchange domain (docs/api.md#the-unsigned-order); none means v1.
    const version = market?.version === "v2" ? "v2" : "v1";
    const agentId = profile.id;
    let built: BuiltOrder | null = null;

    const result = await this.reserve({
      order: {
        id: orderId,
        mode,
        marketId: msg.marketId,
        conditionId,
        side: msg.side,
        notionalUnits: amounts?.notionalUnits ?? msg.sizeUnits,
        status: mode === "payload" ? "awaiting_signature" : "submitting",
        venueOrderId: null,
        signatureDeadline,
      },
      evaluate,
      fingerprint,
      hold: (limits) => aboveThreshold(msg.sizeUnits, limits.approval_threshold_usdc),
      persist: (order: TrackedOrder, timestampMs: number) => {
        const b = buildOrder({
          profile,
          chainId: p.config.chainId,
          builderCode: p.config.builderCode,
          negRisk,
          version,
          tokenId: msg.marketId,
          side: msg.side,
          amounts: amounts!,
          timestampMs,
        });
        built = b;
        const at = new Date(timestampMs);
        return p.orders.insert(
          {
            id: order.id,
            orgId: msg.orgId,
            agentId,
            mode,
            marketId: msg.marketId,
            conditionId,
            side: msg.side,
            sizeUnits: msg.sizeUnits,
            price: msg.priceText,
            notionalUnits: order.notionalUnits,
            orderType: msg.orderType,
            expiration: msg.expiration,
            status: order.status,
            orderHash: b.hash,
            // Stored without its `types`: they are always ORDER_TYPES (see the column in schema.ts).
            typedData: { domain: b.typedData.domain, primaryType: b.typedData.primaryType, message: b.typedData.message },
            signatureDeadline: order.signatureDeadline,
            approvalDeadline: order.approvalDeadline ?? null,
            clientOrderId: msg.clientOrderId,
            decisionId,
            tradingDay: order.tradingDay,
            history: [
              {
                status: order.status,
                at: at.toISOString(),
                reason: order.status === "pending_approval" ? "approved by the risk engine; above approval_threshold_usdc, waiting for a person" : "approved by the risk engine",
              },
            ],
            createdAt: at,
            updatedAt: at,
          },
          { id: decisionId, orgId: msg.orgId, agentId, approved: true, intent: msg.record, failures: [], checks: [], orderId, createdAt: at },
        );
      },
    });
    p.observer.verdict(result.verdict);

    if (!result.approved) {
      const verdict = result.verdict;
      await p.orders.insertDecision({
        id: decisionId,
        orgId: msg.orgId,
        agentId,
        approved: false,
        intent: msg.record,
        failures: verdict.failures,
        checks: verdict.checks,
        orderId: null,
        createdAt: new Date(this.clock.now()),
      });
      return { kind: "rejected", decisionId, verdict };
    }

    await result.written;
    const b = built! as BuiltOrder;
    if (result.order.status === "pending_approval") {
      return { kind: "pending_approval", orderId, mode, decisionId, verdict: result.verdict, orderHash: b.hash, approvalDeadline: result.order.approvalDeadline! };
    }
    if (mode === "payload") {
      return {
        kind: "payload",
        orderId,
        decisionId,
        verdict: result.verdict,
        unsignedOrder: b.typedData,
        orderHash: b.hash,
        orderType: msg.orderType,
        expiration: msg.expiration,
        signatureDeadline: signatureDeadline!,
      };
    }
    const finish = this.finishPlacement(orderId)!;
    const timeout = () => ({ signal: AbortSignal.timeout(p.config.venueTimeoutMs) });
    const placed = await this.place({ id: orderId, notionalUnits: result.order.notionalUnits }, finish, () =>
      p.credentials.withAgentCredentials(agentId, (credentials) =>
        p.venue.placeDelegatedOrder({ credentials, client_order_id: orderId, order: b.message, order_type: msg.orderType, expiration: msg.expiration }, timeout()),
      ),
    );
    return { kind: "delegated", orderId, decisionId, verdict: result.verdict, orderHash: b.hash, placed };
  }

  /** Submit-signed (payload mode): checks the signature over the stored order and forwards it to the venue. */
  submitSigned(msg: SubmitSignedMessage<R>): Promise<Placed<R>> {
    return this.mailbox.admit(() => this.runSubmitSigned(msg));
  }

  private async runSubmitSigned(msg: SubmitSignedMessage<R>): Promise<Placed<R>> {
    const p = this.requirePorts();
    const row = msg.order;
    if (row.mode !== "payload" || !row.typedData || !row.orderHash) {
      return { kind: "invalid_state", detail: "only payload-mode orders take a signature", status: row.status };
    }
    if (row.status !== "awaiting_signature") {
      return { kind: "invalid_state", detail: `the order is ${row.status}, not awaiting a signature`, status: row.status };
    }
    if (row.signatureDeadline && this.clock.now() > row.signatureDeadline.getTime()) {
      await this.expire(row.id);
      return { kind: "expired", orderId: row.id };
    }
    const message = row.typedData.message;
    // Types 0-2: a 65-byte signature recovering to the signer; type 3: the ERC-7739 wrapper, its inner
    // signature recovering to the agent's owner (src/eip712/verify-signed-order.ts).
    const check = verifySignedOrder({
      domain: row.typedData.domain,
      message,
      orderHash: row.orderHash,
      signature: msg.signature,
      owner: this.profile.ownerAddress,
    });
    if (!check.ok) return { kind: "invalid_signature", reason: check.reason };
    // Awaiting a signature → submitting, in the actor and in the store in one message, so an expiry
    // or a cancel cannot slip in between; the store says `submitting` before the venue hears of it.
    const start = await this.mailbox.send(async () => {
      const order = this.active.get(row.id);
      const now = this.clock.now();
      if (!order) return { ok: false as const, reason: "not_found" as const };
      if (order.status !== "awaiting_signature") return { ok: false as const, reason: "invalid_state" as const, status: order.status };
      if (this.currentBreaker(now).state === "tripped") return { ok: false as const, reason: "halted" as const };
      if (order.signatureDeadline && now > order.signatureDeadline.getTime()) {
        await p.orders.transition(row.id, ["awaiting_signature"], "expired", "signature deadline passed");
        this.apply(order.id, { status: "expired" });
        return { ok: false as const, reason: "expired" as const };
      }
      const moved = await p.orders.transition(row.id, ["awaiting_signature"], "submitting", "signature verified");
      if (!moved) {
        const stored = await p.orders.get(row.id);
        this.apply(row.id, { status: stored?.status ?? "expired" });
        return stored?.status === "expired" || !stored ? { ok: false as const, reason: "expired" as const } : { ok: false as const, reason: "invalid_state" as const, status: stored.status };
      }
      this.apply(order.id, { status: "submitting" });
      return { ok: true as const, finish: this.openInflight(order.id) };
    });
    if (!start.ok) {
      if (start.reason === "expired") return { kind: "expired", orderId: row.id };
      if (start.reason === "halted") {
        return { kind: "invalid_state", detail: "the agent's breaker is tripped; no order is forwarded until it is resumed", status: row.status };
      }
      const stored = await p.orders.get(row.id);
      const status = stored?.status ?? ("status" in start ? start.status : undefined);
      return { kind: "invalid_state", detail: `the order is ${status ?? "not awaiting a signature"}`, status };
    }
    return this.place(
      { id: row.id, notionalUnits: row.notionalUnits },
      start.finish,
      () =>
        p.venue.postSignedOrder(
          {
            order: message,
            signature: msg.signature as `0x${string}`,
            order_type: row.orderType,
            expiration: row.expiration,
            owner: msg.venueAuth?.api_key,
            venue_auth: msg.venueAuth,
          },
          { signal: AbortSignal.timeout(p.config.venueTimeoutMs) },
        ),
      (venueOrderId) =>
        p.credentials.withAgentCredentialsOrNone(row.agentId, (credentials) =>
          p.venue.cancelOrder({ venue_order_id: venueOrderId, credentials }, { signal: AbortSignal.timeout(p.config.venueTimeoutMs) }),
        ),
    );
  }

  /**
   * Sends one order to the venue and records what happened: in the store first, then in the actor.
   * The order is already `submitting` in the store, so a crash in between leaves a row that
   * reconciliation settles; nothing here ever posts an order twice.
   */
  private async place(
    order: { id: string; notionalUnits: bigint },
    finish: (outcome: VenueOutcome) => Promise<void>,
    call: () => Promise<VenuePostResult | null>,
    /** Cancels an order the venue accepted after someone else (the kill switch) had already settled it. */
    cancelLate?: (venueOrderId: string) => Promise<VenueCancelResult>,
  ): Promise<Placed<R>> {
    const p = this.requirePorts();
    if (!(await this.mayPlace())) {
      // Halted (a kill) after the order was approved or signed: it is never sent.
      await p.orders.transition(order.id, ["submitting"], "rejected", "the agent was halted before the order was sent");
      await finish({ kind: "rejected" });
      return { kind: "invalid_state", detail: "the agent's breaker tripped before the order was sent; nothing was placed", orderId: order.id };
    }
    const done = p.observer.venueCall("post_order");
    let result: VenuePostResult | null;
    try {
      result = await call();
    } catch (error) {
      done(false);
      if (!(error instanceof Error && error.name === "VenueUnavailableError")) p.observer.error("venue call failed", { order_id: order.id, error });
      const row = await p.orders.transition(order.id, ["submitting"], "unknown", "venue did not answer in time");
      await finish({ kind: "unknown" });
      await this.recordVenueResult(false);
      return { kind: "venue_timeout", orderId: order.id, status: row?.status ?? "unknown" };
    }
    if (result === null) {
      done(true);
      await p.orders.transition(order.id, ["submitting"], "rejected", "no credentials to place the order with");
      await finish({ kind: "rejected" });
      return { kind: "invalid_state", detail: "the agent has no venue credentials; submit them again or use payload mode", orderId: order.id };
    }
    if (!result.ok) {
      done(false);
      await p.orders.transition(order.id, ["submitting"], "rejected", `venue refused: ${result.error.slice(0, 200)}`);
      await finish({ kind: "rejected" });
      await this.recordVenueResult(false);
      return { kind: "venue_rejected", error: result.error.slice(0, 500), orderId: order.id, status: "rejected" };
    }
    done(true);
    let filledUnits = filledUnitsOf(result.filled_usdc);
    const status = orderStatusFor(result.status);
    if (status === "filled" && filledUnits === 0n) filledUnits = order.notionalUnits;
    const reason = status === "filled" ? "matched at the venue" : status === "cancelled" ? "not matched (fill-or-kill / fill-and-kill)" : "resting at the venue";
    const row = await p.orders.transition(order.id, ["submitting"], status, reason, { venueOrderId: result.venue_order_id, filledUnits });
    if (status === "cancelled") {
      await finish({ kind: "accepted", venueOrderId: result.venue_order_id, status: "open", filledUnits });
      await this.transition(order.id, { status: "cancelled", filledUnits });
    } else {
      await finish({ kind: "accepted", venueOrderId: result.venue_order_id, status, filledUnits });
    }
    await this.recordVenueResult(true);
    if (!row) {
      // The kill switch gave up on this order before the venue answered: take it off the venue again.
      const late = cancelLate ? await cancelLate(result.venue_order_id).catch(() => ({ ok: false as const, error: "unreachable" })) : null;
      p.observer.warn("order accepted by the venue after it was settled here", {
        order_id: order.id,
        venue_order_id: result.venue_order_id,
        cancelled_again: late?.ok ?? false,
      });
      return { kind: "invalid_state", detail: "the order was settled (kill switch) while the venue was accepting it; a cancellation was sent", orderId: order.id };
    }
    return { kind: "ok", order: row };
  }

  /**
   * Moves an order in the store and makes the actor hold what the store then says (whoever moved
   * the row: this change, or one that got there first). One message, so nothing interleaves.
   */
  private settle(id: string, from: OrderStatus[], to: OrderStatus, reason: string, patch: StatusPatch = {}): Promise<{ row: R | null; moved: boolean }> {
    const p = this.requirePorts();
    return this.mailbox.send(async () => {
      const moved = await p.orders.transition(id, from, to, reason, patch);
      const row = moved ?? (await p.orders.get(id));
      if (row) this.apply(id, { status: row.status, venueOrderId: row.venueOrderId, filledUnits: row.filledUnits });
      return { row, moved: moved !== null };
    });
  }

  /**
   * Cancels one order: locally while it awaits a signature, at the venue once it is open. `venueAuth`:
   * the owner's L2 headers over this order's DELETE /order, sent as they are instead of any stored
   * credentials (payload mode at a venue that needs the owner's keys to cancel).
   */
  cancel(row: R, venueAuth?: VenueAuthPassThrough): Promise<Placed<R>> {
    return this.mailbox.admit(() => this.runCancel(row, venueAuth));
  }

  private async runCancel(row: R, venueAuth?: VenueAuthPassThrough): Promise<Placed<R>> {
    const p = this.requirePorts();
    if (LOCAL_STATUSES.has(row.status)) {
      const done = await this.mailbox.send(async () => {
        const o = this.active.get(row.id);
        if (!o || !LOCAL_STATUSES.has(o.status)) return null;
        const moved = await p.orders.transition(row.id, [o.status], "cancelled", "cancelled by the client");
        const now = moved ?? (await p.orders.get(row.id));
        if (now) this.apply(row.id, { status: now.status, venueOrderId: now.venueOrderId, filledUnits: now.filledUnits });
        return now;
      });
      if (!done) {
        const now = await p.orders.get(row.id);
        return { kind: "invalid_state", detail: `the order is ${now?.status}`, status: now?.status };
      }
      return { kind: "ok", order: done };
    }
    // An order left `unknown` by a time-out has no venue id yet: the venue's id is its order hash.
    const venueOrderId = row.venueOrderId ?? row.orderHash;
    if ((row.status === "open" || row.status === "unknown") && venueOrderId) {
      const timeout = () => ({ signal: AbortSignal.timeout(p.config.venueTimeoutMs) });
      let result: VenueCancelResult;
      try {
        result = venueAuth
          ? await p.venue.cancelOrder({ venue_order_id: venueOrderId, venue_auth: { ...venueAuth, address: venueAuth.address ?? row.typedData?.message.signer ?? this.profile.signerAddress } }, timeout())
          : await p.credentials.withAgentCredentialsOrNone(row.agentId, (credentials) => p.venue.cancelOrder({ venue_order_id: venueOrderId, credentials }, timeout()));
      } catch {
        return { kind: "venue_unavailable", detail: "the venue could not be reached to cancel the order; nothing was changed, try again" };
      }
      if (!result.ok) {
        // A rate limit or a server error of the venue changed nothing: unavailable (503, with the
        // venue's Retry-After), safe to retry; any other refusal is the venue's answer about the order.
        if (result.status !== undefined && (result.status === 429 || result.status >= 500)) {
          return {
            kind: "venue_unavailable",
            detail: "the venue did not take the cancellation now; nothing was changed, try again",
            retryAfterS: Math.max(1, Math.ceil(result.retry_after_s ?? 2)),
          };
        }
        return { kind: "venue_rejected", error: result.error.slice(0, 500), orderId: row.id, status: row.status };
      }
      // A venue confirms an order that already filled as "done" too: read what it holds, so a
      // fill is recorded as a fill (and keeps counting against the limits), not as a cancellation.
      const state = await this.readVenueOrder(row.agentId, venueOrderId);
      const filledUnits = state ? filledUnitsOf(state.filled_usdc) : undefined;
      if (state?.status === "matched") {
        await this.settle(row.id, ["open", "unknown"], "filled", "matched at the venue before the cancellation", { filledUnits: filledUnits || row.notionalUnits });
        return { kind: "invalid_state", detail: "the order filled at the venue before it could be cancelled", status: "filled" };
      }
      const { row: done } = await this.settle(row.id, ["open", "unknown"], "cancelled", "cancelled by the client", filledUnits !== undefined ? { filledUnits } : {});
      return { kind: "ok", order: done! };
    }
    return { kind: "invalid_state", detail: `an order that is ${row.status} cannot be cancelled`, status: row.status };
  }

  /** The venue's state of an order, or null when it cannot be read (best effort). */
  private async readVenueOrder(agentId: string, venueOrderId: string): Promise<VenueOrderView | null> {
    const p = this.requirePorts();
    try {
      return await p.credentials.withAgentCredentialsOrNone(agentId, (credentials) =>
        p.venue.getOrder({ venue_order_id: venueOrderId, credentials }, { signal: AbortSignal.timeout(p.config.venueTimeoutMs) }),
      );
    } catch {
      return null;
    }
  }

  /**
   * Expires one unsigned order past its deadline (the sweep and a late submit-signed), releasing its
   * reservation. A submission in progress wins: the order is then no longer awaiting a signature.
   */
  expire(orderId: string, phase: "awaiting_signature" | "pending_approval" = "awaiting_signature"): Promise<boolean> {
    const p = this.requirePorts();
    return this.mailbox.send(async () => {
      const o = this.active.get(orderId);
      // Only the phase whose deadline came: an order approved meanwhile now awaits its signature,
      // under a new deadline, and is not expired for the approval deadline it met.
      if (o && o.status !== phase) return false;
      if (phase === "pending_approval" && o?.approvalDeadline && this.clock.now() < o.approvalDeadline.getTime()) return false;
      const reason = phase === "pending_approval" ? "approval deadline passed: nobody approved it in time" : "signature deadline passed";
      const moved = await p.orders.transition(orderId, [phase], "expired", reason);
      if (moved) this.apply(orderId, { status: "expired" });
      return moved !== null;
    });
  }

  // ---------------------------------------------------------------- a person's approval

  /**
   * Approves an order pending approval (docs/api.md#approval-above-a-threshold): a payload-mode order
   * then awaits its signature (its signature deadline starts now), a delegated one is placed. Up to
   * and including its approval deadline; the expiry sweep may expire it from that same instant on,
   * and whichever of the two reaches this actor first wins.
   */
  approve(msg: DecisionMessage<R>): Promise<Placed<R>> {
    return this.mailbox.admit(() => this.runApprove(msg));
  }

  private async runApprove(msg: DecisionMessage<R>): Promise<Placed<R>> {
    const p = this.requirePorts();
    const id = msg.order.id;
    const note = msg.reason ? `: ${msg.reason}` : "";
    const start = await this.mailbox.send(async () => {
      const o = this.active.get(id);
      if (!o || o.status !== "pending_approval") return { ok: false as const, refusal: await this.notPending(id) };
      const now = this.clock.now();
      if (o.approvalDeadline && now > o.approvalDeadline.getTime()) {
        const moved = await p.orders.transition(id, ["pending_approval"], "expired", "approval deadline passed: nobody approved it in time");
        if (moved) this.apply(id, { status: "expired" });
        return { ok: false as const, refusal: { kind: "expired" as const, orderId: id, detail: `order ${id} passed its approval deadline` } };
      }
      if (this.currentBreaker(now).state === "tripped") {
        return {
          ok: false as const,
          refusal: { kind: "invalid_state" as const, detail: "the agent's breaker is tripped; nothing is approved until it is resumed", status: o.status, orderId: id },
        };
      }
      if (o.mode === "payload") {
        const deadline = new Date(now + p.config.signatureTtlS * 1000);
        const moved = await p.orders.transition(id, ["pending_approval"], "awaiting_signature", `approved by ${msg.by}${note}`, { signatureDeadline: deadline, by: msg.by });
        if (!moved) return { ok: false as const, refusal: await this.notPending(id) };
        o.signatureDeadline = deadline;
        this.apply(id, { status: "awaiting_signature" });
        return { ok: true as const, row: moved, finish: null };
      }
      const moved = await p.orders.transition(id, ["pending_approval"], "submitting", `approved by ${msg.by}${note}`, { by: msg.by });
      if (!moved) return { ok: false as const, refusal: await this.notPending(id) };
      this.apply(id, { status: "submitting" });
      return { ok: true as const, row: moved, finish: this.openInflight(id) };
    });
    if (!start.ok) return start.refusal;
    if (!start.finish) return { kind: "ok", order: start.row };
    const row = start.row;
    const message = row.typedData?.message;
    if (!message) {
      await p.orders.transition(id, ["submitting"], "rejected", "the stored order has no message to place");
      await start.finish({ kind: "rejected" });
      return { kind: "invalid_state", detail: "the stored order cannot be placed", orderId: id };
    }
    const timeout = () => ({ signal: AbortSignal.timeout(p.config.venueTimeoutMs) });
    return this.place({ id, notionalUnits: row.notionalUnits }, start.finish, () =>
      p.credentials.withAgentCredentials(row.agentId, (credentials) =>
        p.venue.placeDelegatedOrder({ credentials, client_order_id: id, order: message, order_type: row.orderType, expiration: row.expiration }, timeout()),
      ),
    );
  }

  /** Rejects an order pending approval: `rejected`, its reservation released, the decision in its history. */
  reject(msg: DecisionMessage<R>): Promise<Placed<R>> {
    const p = this.requirePorts();
    const id = msg.order.id;
    const note = msg.reason ? `: ${msg.reason}` : "";
    return this.mailbox.admit(() =>
      this.mailbox.send(async (): Promise<Placed<R>> => {
        const o = this.active.get(id);
        if (!o || o.status !== "pending_approval") return this.notPending(id);
        const moved = await p.orders.transition(id, ["pending_approval"], "rejected", `rejected by ${msg.by}${note}`, { by: msg.by });
        if (!moved) return this.notPending(id);
        this.apply(id, { status: "rejected" });
        return { kind: "ok", order: moved };
      }),
    );
  }

  /** The refusal for an order that is not (or no longer) pending approval; the actor takes the stored status. */
  private async notPending(id: string): Promise<Refusal> {
    const stored = await this.requirePorts().orders.get(id);
    if (stored) this.apply(id, { status: stored.status });
    if (stored?.status === "expired") return { kind: "expired", orderId: id, detail: `order ${id} is expired: it was not approved in time` };
    return { kind: "invalid_state", detail: `the order is ${stored?.status ?? "unknown"}, not pending approval`, status: stored?.status, orderId: id };
  }

  // ---------------------------------------------------------------- heartbeat (dead-man switch)

  /** Turns the dead-man switch on (or changes its interval): the deadline is now + interval. */
  setHeartbeat(intervalS: number): Promise<AgentView<L>> {
    return this.mailbox.send(async () => {
      const now = this.clock.now();
      const next: HeartbeatState = { intervalS, lastAt: new Date(now), deadlineAt: new Date(now + intervalS * 1000) };
      await this.store.saveHeartbeat?.(this.profile.id, next);
      this.heartbeat = next;
      return this.view();
    });
  }

  /** Turns the dead-man switch off. */
  clearHeartbeat(): Promise<AgentView<L>> {
    return this.mailbox.send(async () => {
      await this.store.saveHeartbeat?.(this.profile.id, null);
      this.heartbeat = null;
      return this.view();
    });
  }

  /**
   * A beat: on time (now ≤ deadline) it moves the deadline to now + interval. Late (now > deadline,
   * by even a millisecond) it moves nothing: the agent is due to be killed, and the beat claims that
   * kill unless the sweep already did (`claimed`).
   */
  beat(): Promise<BeatResult<L>> {
    return this.mailbox.send(async (): Promise<BeatResult<L>> => {
      const hb = this.heartbeat;
      if (!hb) return { kind: "off" };
      const now = this.clock.now();
      if (this.heartbeatKill) return { kind: "missed", deadlineAt: hb.deadlineAt, claimed: false };
      if (now > hb.deadlineAt.getTime()) {
        this.heartbeatKill = true;
        return { kind: "missed", deadlineAt: hb.deadlineAt, claimed: true };
      }
      const next: HeartbeatState = { intervalS: hb.intervalS, lastAt: new Date(now), deadlineAt: new Date(now + hb.intervalS * 1000) };
      await this.store.saveHeartbeat?.(this.profile.id, next);
      this.heartbeat = next;
      return { kind: "ok", view: this.view() };
    });
  }

  /** Claims the kill of an agent whose heartbeat deadline has passed; false when not due or already claimed. */
  claimHeartbeatKill(): Promise<boolean> {
    return this.mailbox.send(() => {
      const hb = this.heartbeat;
      if (!hb || this.heartbeatKill || this.clock.now() <= hb.deadlineAt.getTime()) return false;
      this.heartbeatKill = true;
      return true;
    });
  }

  /**
   * After the heartbeat kill: the switch is off (a halted agent has nothing to beat for; turn it on
   * again after the resume). Until then the stored deadline stays, so a crash mid-kill kills again
   * at start-up. `done: false` (the kill failed) leaves it on, to be tried again.
   */
  heartbeatKillEnded(done: boolean): Promise<void> {
    return this.mailbox.send(async () => {
      this.heartbeatKill = false;
      if (!done) return;
      await this.store.saveHeartbeat?.(this.profile.id, null);
      this.heartbeat = null;
    });
  }

  /**
   * Settles a `submitting` or `unknown` order against the venue: an order the venue knows takes the
   * venue's status; one it does not know never reached it and is rejected (its reservation released).
   * Nothing is ever re-posted; an order whose venue call is in flight here is left alone.
   */
  async reconcile(row: R): Promise<ReconcileResult> {
    const p = this.requirePorts();
    if (row.status === "submitting" && this.isInflight(row.id)) return "pending";
    const venueOrderId = row.venueOrderId ?? row.orderHash;
    if (!venueOrderId) return "skipped";
    let state: VenueOrderView | null;
    try {
      state = await p.credentials.withAgentCredentialsOrNone(row.agentId, (credentials) =>
        p.venue.getOrder({ venue_order_id: venueOrderId, credentials }, { signal: AbortSignal.timeout(p.config.venueTimeoutMs) }),
      );
    } catch (error) {
      // The venue answered, but refused this read (a 4xx): this order waits for the next pass; the
      // others are still worth reading. Anything else means the venue is not answering.
      if (error instanceof Error && error.name === "VenueRequestError") {
        p.observer.warn("reconciliation: the venue refused to read the order", { order_id: row.id, error: error.message.slice(0, 200) });
        return "skipped";
      }
      return "venue_down";
    }
    const to: OrderStatus = state ? orderStatusFor(state.status) : "rejected";
    const reason = state ? `reconciled with the venue (${state.status})` : "reconciled: the venue has no such order";
    const { moved } = await this.settle(row.id, ["submitting", "unknown"], to, reason, state ? { venueOrderId: state.venue_order_id, filledUnits: filledUnitsOf(state.filled_usdc) } : {});
    return moved ? "settled" : "skipped";
  }

  /**
   * The kill switch's ports over this actor's own: cancellations at the venue (with the credentials
   * the caller opened once for the whole fan-out) and the final statuses in the store.
   */
  killPorts(
    credentials: Promise<VenueCredentials | undefined>,
    onRefused: (orderId: string, refusal: Extract<VenueCancelResult, { ok: false }>) => void,
    retry?: CancelRetry,
  ): KillPorts {
    const p = this.requirePorts();
    return {
      cancelAtVenue: async (order: TrackedOrder, signal: AbortSignal): Promise<CancelOutcome> => {
        try {
          const c = await credentials;
          // Unknown after a timeout, or submitting from an earlier process: the venue id is the order hash.
          const venueOrderId = order.venueOrderId ?? (await p.orders.get(order.id))?.orderHash ?? null;
          if (!venueOrderId) return { status: "failed" };
          const once = (id: string, s: AbortSignal) => p.venue.cancelOrder({ venue_order_id: id, credentials: c }, { signal: s });
          const r = retry ? await retry(venueOrderId, once, signal) : await once(venueOrderId, signal);
          if (!r.ok) {
            onRefused(order.id, r);
            return { status: "failed" };
          }
          if (!r.already) return { status: "cancelled" };
          // Nothing left to cancel: it was cancelled or it matched before the kill reached it.
          const state = await p.venue.getOrder({ venue_order_id: venueOrderId, credentials: c }, { signal }).catch(() => null);
          if (!state) return { status: "cancelled" };
          const filledUnits = filledUnitsOf(state.filled_usdc);
          return state.status === "matched" ? { status: "filled", filledUnits: filledUnits || order.notionalUnits } : { status: "cancelled", filledUnits };
        } catch {
          return { status: "failed" };
        }
      },
      saveOutcomes: async (outcomes) => {
        const plain = (status: KillOutcome["status"]) => outcomes.filter((o) => o.status === status && o.filledUnits === undefined).map((o) => o.orderId);
        await Promise.all([
          p.orders.transitionMany(plain("cancelled"), [...ACTIVE_STATUS_LIST], "cancelled", "kill switch"),
          p.orders.transitionMany(plain("failed"), [...ACTIVE_STATUS_LIST], "failed", "kill switch: cancellation not confirmed before the deadline", { flaggedForReview: true }),
          ...outcomes
            .filter((o) => o.filledUnits !== undefined)
            .map((o) => p.orders.transition(o.orderId, [...ACTIVE_STATUS_LIST], o.status, o.reason, { filledUnits: o.filledUnits })),
        ]);
      },
    };
  }

  /**
   * After a kill's answer: reads each cancelled order at the venue and records what had filled
   * before the cancellation, so that part keeps counting against the agent's limits.
   */
  async settleLateFills(orderIds: string[], credentials: VenueCredentials | undefined): Promise<void> {
    const p = this.requirePorts();
    if (!orderIds.length) return;
    const limit = pLimit(8);
    await Promise.all(
      orderIds.map((id) =>
        limit(async () => {
          const row = await p.orders.get(id);
          const venueOrderId = row?.venueOrderId ?? row?.orderHash;
          if (!row || !venueOrderId || row.status !== "cancelled") return;
          const state = await p.venue
            .getOrder({ venue_order_id: venueOrderId, credentials }, { signal: AbortSignal.timeout(p.config.venueTimeoutMs) })
            .catch(() => null);
          const filled = state ? filledUnitsOf(state.filled_usdc) : 0n;
          if (filled <= row.filledUnits) return;
          if (await p.orders.setFilled(row.id, "cancelled", filled)) {
            await this.addLateFill({ tradingDay: row.tradingDay, conditionId: row.conditionId, side: row.side }, filled - row.filledUnits);
          }
        }),
      ),
    );
  }

  // ---------------------------------------------------------------- registry

  canEvict(now: number, idleMs: number): boolean {
    return this.mailbox.idleFor(now) >= idleMs && this.mailbox.inProgress === 0 && this.writes.size === 0 && this.inflight.size === 0 && this.killsRunning === 0;
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
          const patch = outcomePatch(outcome);
          if (patch) this.apply(orderId, patch);
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

  private apply(orderId: string, patch: OrderPatch): void {
    const o = this.active.get(orderId);
    if (!o) return;
    this.addCounts(o, -1n);
    Object.assign(o, patch);
    this.addCounts(o, 1n);
    if (!ACTIVE_STATUSES.has(o.status)) this.active.delete(orderId);
  }

  private addCounts(o: TrackedOrder, sign: bigint): void {
    addCounts(this.counts, o, sign);
  }
}
