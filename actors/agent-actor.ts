/**
 * One actor per agent. It owns the agent's mode, breaker, limits, credentials
 * handle, tracked orders, daily volume and market exposure. Every state change
 * runs through its mailbox, one message at a time, so the risk checks and the
 * reservations they make need no locks. Slow work (database batches, venue
 * calls) runs outside the mailbox; the actor only records its outcome.
 *
 * This file holds the state and the mailbox; the order path's message handlers live in their own
 * modules (run-intent.ts, run-submit-signed.ts, place-order.ts, run-cancel.ts, approval-decision.ts,
 * reconcile-order.ts, reconcile-cancel.ts, kill-ports.ts, cancel-for-kill.ts, settle-late-fills.ts), which reach the
 * state through ActorCore (actor-core.ts); the bookkeeping is pure functions (order-counts.ts,
 * runaway-guard.ts, venue-outcome.ts).
 */
import { fromStatuses, orderSharesUnits } from "../src/domain/order-lifecycle.ts";
import pLimit from "p-limit";
import { type Clock, systemClock } from "../src/domain/clock.ts";
import { ACTIVE_STATUSES, type BreakerReason, HALT_REASONS, type OrderStatus } from "../src/domain/order-status.ts";
import type { VenueCredentials } from "../src/domain/venue-credentials.ts";
import type { RiskState } from "../src/risk/types.ts";
import type { ActorCore } from "./actor-core.ts";
import { AgentRetiredError } from "./agent-retired-error.ts";
import { runApprove, runReject } from "./approval-decision.ts";
import { cancelForKill } from "./cancel-for-kill.ts";
import { buildKillPorts } from "./kill-ports.ts";
import { Mailbox } from "./mailbox.ts";
import type { DecisionMessage, IntentAnswer, IntentMessage, Placed, ReconcileResult, SubmitSignedMessage } from "./messages.ts";
import { addCounts, addLateFillCounts, type OrderCounts, utcDay } from "./order-counts.ts";
import type { OrderPatch } from "./order-patch.ts";
import type {
  ActorLimits,
  AgentProfile,
  AgentSnapshot,
  AgentStore,
  BreakerState,
  CancelRetry,
  CredentialsInfo,
  FillTotals,
  HeartbeatState,
  HeldPosition,
  KillOutcome,
  KillPorts,
  OrderPorts,
  RecentApproval,
  StoredOrder,
  TrackedOrder,
  VenueAuthPassThrough,
  VenueCancelResult,
} from "./ports.ts";
import { reconcileCancel } from "./reconcile-cancel.ts";
import { reconcileOrder } from "./reconcile-order.ts";
import type { Evictable } from "./registry.ts";
import type { ReserveRequest, ReserveResult } from "./reserve-request.ts";
import { runCancel } from "./run-cancel.ts";
import { runIntent } from "./run-intent.ts";
import { runSubmitSigned } from "./run-submit-signed.ts";
import { approvedLastMinute, countRunawayRefusal, isRunawayRefusal, staleApprovals } from "./runaway-guard.ts";
import { settleLateFills } from "./settle-late-fills.ts";
import { applyVenueReport, type ReportResult } from "./apply-venue-report.ts";
import type { VenueReport } from "../src/domain/venue-report.ts";
import { outcomePatch, type VenueOutcome } from "./venue-outcome.ts";

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


/** What a heartbeat beat found. */
export type BeatResult<L> = { kind: "ok"; view: AgentView<L> } | { kind: "off" } | { kind: "missed"; deadlineAt: Date; claimed: boolean };

export class AgentActor<L extends ActorLimits, R extends StoredOrder = StoredOrder> implements Evictable, ActorCore<L, R> {
  /** @internal (ActorCore) */
  readonly mailbox: Mailbox;
  private _profile: AgentProfile;
  private _limits: L;
  private breaker: BreakerState;
  private venueErrorStreak: number;
  private _credentials: CredentialsInfo | null;
  /** @internal (ActorCore) */
  readonly active = new Map<string, TrackedOrder>();
  /**
   * Shares the agent's active sells still offer, per outcome token (positionOf): kept as orders enter,
   * change and leave `active`, so a sell's check does not walk every open order.
   */
  private readonly offered = new Map<string, bigint>();
  private readonly daily = new Map<string, bigint>();
  private readonly exposure = new Map<string, bigint>();
  /** Shares held per outcome token, from the fills reported (buys less sells). */
  private readonly held = new Map<string, bigint>();
  /** Positions per outcome token at average cost, from the fills reported, and their cost per condition (exposure). */
  private readonly positions = new Map<string, HeldPosition>();
  private readonly positionCost = new Map<string, bigint>();
  /** The daily volume and exposure tallies together, for the bookkeeping functions (order-counts.ts). */
  private readonly counts: OrderCounts = { daily: this.daily, exposure: this.exposure };
  private lastTimestampMs: number;
  /** @internal (ActorCore) Durable writes of reserved orders that have not finished yet. */
  readonly writes = new Map<string, Promise<void>>();
  /** @internal (ActorCore) Venue calls in flight, by order id; resolve when the outcome is recorded. */
  readonly inflight = new Map<string, Promise<void>>();
  /** Client cancels running, by order id (how many): reconciliation leaves their orders alone. */
  private readonly cancelling = new Map<string, number>();
  private killChain: Promise<unknown> = Promise.resolve();
  /** Kills running or queued: the actor is never evicted under one. */
  private killsRunning = 0;
  private heartbeat: HeartbeatState | null;
  /** A kill for a missed heartbeat has been claimed and not finished: no second one is started. */
  private heartbeatKill = false;
  /** Approved intents, oldest first, kept for the rate and duplicate guards; those before approvalsHead are forgotten. */
  private approvals: RecentApproval[];
  private approvalsHead = 0;
  /** The latest approval time of each remembered intent (market, side, size, price). */
  private readonly lastApproval = new Map<string, number>();
  /** Times of intents refused by a runaway guard in the last minute. */
  private runawayRefusals: number[] = [];
  /** Set once `retire` removed the agent: no order is written for it again. */
  private retired = false;

  constructor(
    snapshot: AgentSnapshot<L>,
    private readonly store: AgentStore<L>,
    /** @internal (ActorCore) */
    readonly clock: Clock = systemClock,
    /** The order path's ports (store, venue, credentials); tests of the state alone leave them out. */
    private readonly ports?: OrderPorts<R>,
    opts: { mailboxCapacity?: number } = {},
  ) {
    this.mailbox = new Mailbox(opts.mailboxCapacity, clock);
    this._profile = snapshot.profile;
    this._limits = snapshot.limits;
    this.breaker = snapshot.breaker;
    this.venueErrorStreak = snapshot.venueErrorStreak;
    this._credentials = snapshot.credentials;
    for (const o of snapshot.activeOrders) {
      const copy = { ...o };
      this.active.set(o.id, copy);
      this.offer(copy, 1n);
    }
    for (const [day, units] of Object.entries(snapshot.dailyUsedUnits)) this.daily.set(day, units);
    for (const [cond, units] of Object.entries(snapshot.exposureUnits)) this.exposure.set(cond, units);
    for (const [token, units] of Object.entries(snapshot.heldShares ?? {})) this.held.set(token, units);
    for (const [token, p] of Object.entries(snapshot.positions ?? {})) {
      this.positions.set(token, { ...p });
      this.positionCost.set(p.conditionId, (this.positionCost.get(p.conditionId) ?? 0n) + p.costUnits);
    }
    this.lastTimestampMs = snapshot.lastOrderTimestampMs;
    this.heartbeat = snapshot.heartbeat ?? null;
    this.approvals = [...(snapshot.recentApprovals ?? [])].sort((a, b) => a.at - b.at);
    for (const a of this.approvals) this.lastApproval.set(a.fingerprint, a.at);
  }

  /** @internal (ActorCore) The agent's profile; only this class changes it. */
  get profile(): AgentProfile {
    return this._profile;
  }

  /** @internal (ActorCore) The limits in force. */
  get limits(): L {
    return this._limits;
  }

  /** @internal (ActorCore) The delegated credentials' description, if any. */
  get credentials(): CredentialsInfo | null {
    return this._credentials;
  }

    get id(): string {
    return this._profile.id;
  }

  /** The agent's organization (fixed for its life): read on every request, without building a view. */
  get orgId(): string {
    return this._profile.orgId;
  }

  // ---------------------------------------------------------------- reads

  view(): AgentView<L> {
    const now = this.clock.now();
    const day = utcDay(now);
    return {
      profile: { ...this._profile },
      limits: this._limits,
      breaker: { ...this.currentBreaker(now) },
      dailyUsedUnits: this.daily.get(day) ?? 0n,
      day,
      openOrders: this.active.size,
      credentials: this._credentials,
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
      const next = change(this._limits);
      await this.store.saveLimits(this._profile.id, next);
      this._limits = next;
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
      await this.store.saveBreaker(this._profile.id, this.breaker, this.venueErrorStreak);
      return this.view();
    });
  }

  /** Closes the breaker (after a kill or a manual trip, or early after venue errors). */
  resume(): Promise<AgentView<L>> {
    return this.mailbox.send(async () => {
      this.breaker = { state: "closed", reason: null, since: new Date(this.clock.now()) };
      this.venueErrorStreak = 0;
      this.runawayRefusals = [];
      await this.store.saveBreaker(this._profile.id, this.breaker, 0);
      return this.view();
    });
  }

  /** Stores sealed credentials and moves to delegated mode; refused while halted by a kill. */
  setCredentials(sealed: Uint8Array, info: CredentialsInfo): Promise<{ ok: true; view: AgentView<L> } | { ok: false }> {
    return this.mailbox.send(async () => {
      if (this.breaker.state === "tripped" && this.breaker.reason && HALT_REASONS.has(this.breaker.reason)) return { ok: false as const };
      await this.store.saveCredentials(this._profile.id, sealed, info);
      this._credentials = info;
      this._profile = { ...this._profile, mode: "delegated" };
      return { ok: true as const, view: this.view() };
    });
  }

  clearCredentials(): Promise<AgentView<L>> {
    return this.mailbox.send(async () => {
      await this.store.deleteCredentials(this._profile.id);
      this._credentials = null;
      this._profile = { ...this._profile, mode: "payload" };
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
      if (this.retired) throw new AgentRetiredError(this._profile.id);
      const now = this.clock.now();
      const day = utcDay(now);
      // The position (held shares, and those offered in open sells: a pass over the active orders) only
      // for a sell, the one side its check reads.
      const verdict = req.evaluate(this.riskState(now, req.order.conditionId, req.fingerprint, req.order.side === "sell" ? req.order.tokenId : undefined));
      if (!verdict.approved) {
        if (req.fingerprint !== undefined) await this.countRunawayRefusal(now, verdict);
        return { verdict, approved: false as const };
      }
      const order: TrackedOrder = { ...req.order, tradingDay: day, filledUnits: 0n };
      if (req.hold?.(this._limits)) {
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

  /** Whether a client's cancel of this order is running in this process. */
  isCancelling(orderId: string): boolean {
    return this.cancelling.has(orderId);
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

  /** Runs the risk evaluation against the current state without reserving anything (dry run); `tokenId`: a sell's. */
  evaluateOnly<V>(conditionId: string, evaluate: (state: RiskState) => V, fingerprint?: string, tokenId?: string): Promise<V> {
    return this.mailbox.send(() => evaluate(this.riskState(this.clock.now(), conditionId, fingerprint, tokenId)));
  }

  private riskState(now: number, conditionId: string, fingerprint?: string, tokenId?: string): RiskState {
    const breaker = this.currentBreaker(now);
    const state: RiskState = {
      breaker: { tripped: breaker.state === "tripped", reason: breaker.reason },
      daily_used_usdc_units: this.daily.get(utcDay(now)) ?? 0n,
      // Positions at cost plus the orders' part beside them (order-counts.ts exposureOf).
      market_exposure_usdc_units: (this.exposure.get(conditionId) ?? 0n) + (this.positionCost.get(conditionId) ?? 0n),
    };
    // The shares a sell may hand over: only where fills are followed (the service's order path).
    if (tokenId !== undefined && this.ports?.fills && this.ports.config.checkPositions) {
      const pos = this.positionOf(tokenId);
      state.position = { held_shares_units: pos.heldUnits, offered_shares_units: pos.offeredUnits };
    }
    if (fingerprint === undefined) return state;
    this.pruneApprovals(now);
    const last = this.lastApproval.get(fingerprint);
    state.runaway = {
      approved_last_minute: approvedLastMinute(this.approvals, now, this.approvalsHead),
      open_orders: this.active.size,
      duplicate_age_ms: last === undefined ? null : Math.max(0, now - last),
    };
    return state;
  }

  /** Forgets approvals older than both the last minute and the duplicate window. */
  private pruneApprovals(now: number): void {
    const head = this.approvalsHead;
    const drop = staleApprovals(this.approvals, now, this._limits.duplicate_window_s, head);
    if (!drop) return;
    const end = head + drop;
    for (let i = head; i < end; i++) {
      const a = this.approvals[i];
      if (this.lastApproval.get(a.fingerprint) === a.at) this.lastApproval.delete(a.fingerprint);
    }
    // Forgotten entries are skipped by the head index, and cut off once they are half the array
    // (so each approval is copied at most once on average, instead of shifting the array per intent).
    if (end * 2 >= this.approvals.length) {
      this.approvals = this.approvals.slice(end);
      this.approvalsHead = 0;
    } else {
      this.approvalsHead = end;
    }
  }

  /**
   * Counts an intent refused by a runaway guard; `runaway_trip_count` of them within a minute trip
   * the breaker (reason runaway), which a halt by the kill switch or a heartbeat outranks.
   */
  private async countRunawayRefusal(now: number, verdict: unknown): Promise<void> {
    if (!isRunawayRefusal(verdict)) return;
    const tripAt = this._limits.runaway_trip_count;
    const counted = countRunawayRefusal(this.runawayRefusals, now, tripAt);
    this.runawayRefusals = counted.refusals;
    if (!counted.trip) return;
    if (this.currentBreaker(now).state === "tripped") return;
    this.breaker = { state: "tripped", reason: "runaway", since: new Date(now) };
    this.runawayRefusals = [];
    await this.store.saveBreaker(this._profile.id, this.breaker, this.venueErrorStreak);
    this.ports?.observer.warn("runaway guard tripped the breaker", { agent_id: this._profile.id, refusals_in_a_minute: tripAt });
  }

  /** The limits in force; read inside a mailbox message for a consistent view. */
  currentLimits(): L {
    return this._limits;
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
        await this.store.saveBreaker(this._profile.id, this.breaker, 0);
        return;
      }
      this.venueErrorStreak++;
      if (this.venueErrorStreak >= this._limits.max_venue_errors && this.breaker.state === "closed") {
        this.breaker = { state: "tripped", reason: "venue_errors", since: new Date(this.clock.now()) };
      }
      await this.store.saveBreaker(this._profile.id, this.breaker, this.venueErrorStreak);
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
      await this.store.saveBreaker(this._profile.id, this.breaker, this.venueErrorStreak);
      return [...this.active.values()].map((o) => o.id);
    });
    const done = await this.cancelTargets(targets, ports, opts);
    const result: KillResult = { cancelled: [], filled: [], failed: [], credentialsDeleted: false };
    await this.mailbox.send(async () => {
      for (const o of done) {
        this.apply(o.orderId, o.filledUnits !== undefined ? { status: o.status, filledUnits: o.filledUnits } : { status: o.status });
        result[o.status].push(o.orderId);
      }
      if (this._profile.mode === "delegated" || this._credentials) {
        result.credentialsDeleted = await this.store.deleteCredentials(this._profile.id);
        this._credentials = null;
        this._profile = { ...this._profile, mode: "payload" };
      }
    });
    return result;
  }

  /**
   * Cancel-all (docs/api.md#post-v1agentsidcancel-all): the kill's fan-out over the agent's active
   * orders (of one outcome token when `marketId` is given), under the same deadline and rules, but the
   * breaker stays as it is and the credentials stay in place: the agent keeps trading. Not chained
   * behind kills (a kill must not wait for it); a cancel both of them send is idempotent at the venue.
   */
  async cancelAll(ports: KillPorts, opts: { deadlineAt: number; concurrency: number; stallMs?: number; marketId?: string }): Promise<Omit<KillResult, "credentialsDeleted">> {
    this.killsRunning++;
    try {
      const targets = await this.mailbox.send(async () =>
        [...this.active.values()].filter((o) => opts.marketId === undefined || o.marketId === opts.marketId).map((o) => o.id),
      );
      const done = await this.cancelTargets(targets, ports, opts);
      const result: Omit<KillResult, "credentialsDeleted"> = { cancelled: [], filled: [], failed: [] };
      await this.mailbox.send(async () => {
        for (const o of done) {
          this.apply(o.orderId, o.filledUnits !== undefined ? { status: o.status, filledUnits: o.filledUnits } : { status: o.status });
          result[o.status].push(o.orderId);
        }
      });
      return result;
    } finally {
      this.killsRunning--;
    }
  }

  /** The kill's fan-out: every target cancelled concurrently under one deadline, the outcomes stored. */
  private async cancelTargets(targets: string[], ports: KillPorts, opts: { deadlineAt: number; concurrency: number; stallMs?: number }): Promise<KillOutcome[]> {
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
        const outcome = await cancelForKill(this, id, ports, { signal, deadline, limit, stallMs });
        return outcome ? { orderId: id, ...outcome } : null;
      }),
    );
    const done = outcomes.filter((o): o is NonNullable<typeof o> => o !== null);
    if (done.length) await ports.saveOutcomes(done);
    return done;
  }



  // ---------------------------------------------------------------- the order path (messages from the features)

  /** @internal (ActorCore) */
  requirePorts(): OrderPorts<R> {
    if (!this.ports) throw new Error("this actor was built without its order ports");
    return this.ports;
  }

  /**
   * An intent: the eight checks on this actor's state, the reservation, the order (amounts and typed
   * data), its durable write through the order store, and in delegated mode the placement at the venue.
   */
  intent(msg: IntentMessage): Promise<IntentAnswer<R>> {
    return this.mailbox.admit(() => runIntent(this, msg));
  }

  /** Submit-signed (payload mode): checks the signature over the stored order and forwards it to the venue. */
  submitSigned(msg: SubmitSignedMessage<R>): Promise<Placed<R>> {
    return this.mailbox.admit(() => runSubmitSigned(this, msg));
  }

  /**
   * Cancels one order: locally while it awaits a signature, at the venue once it is open. `venueAuth`:
   * the owner's L2 headers over this order's DELETE /order, sent as they are instead of any stored
   * credentials (payload mode at a venue that needs the owner's keys to cancel).
   */
  cancel(row: R, venueAuth?: VenueAuthPassThrough): Promise<Placed<R>> {
    return this.mailbox.admit(async () => {
      this.cancelling.set(row.id, (this.cancelling.get(row.id) ?? 0) + 1);
      try {
        return await runCancel(this, row, venueAuth);
      } finally {
        const n = (this.cancelling.get(row.id) ?? 1) - 1;
        if (n > 0) this.cancelling.set(row.id, n);
        else this.cancelling.delete(row.id);
      }
    });
  }

  /**
   * Expires one unsigned order past its deadline (the sweep and a late submit-signed), releasing its
   * reservation. A submission in progress wins: the order is then no longer awaiting a signature.
   */
  async expire(orderId: string, phase: "awaiting_signature" | "pending_approval" = "awaiting_signature"): Promise<boolean> {
    return (await this.expireMany([orderId], phase)) === 1;
  }

  /**
   * Expires orders of this agent whose `phase` deadline has come (the sweep), in one turn of the
   * mailbox and one statement; answers how many moved. Those that left that phase meanwhile (signed,
   * approved, cancelled) are left as they are.
   */
  expireMany(orderIds: readonly string[], phase: "awaiting_signature" | "pending_approval" = "awaiting_signature"): Promise<number> {
    const p = this.requirePorts();
    return this.mailbox.send(async () => {
      const now = this.clock.now();
      const due = orderIds.filter((id) => {
        const o = this.active.get(id);
        // Only the phase whose deadline came: an order approved meanwhile now awaits its signature,
        // under a new deadline, and is not expired for the approval deadline it met.
        if (o && o.status !== phase) return false;
        return !(phase === "pending_approval" && o?.approvalDeadline && now < o.approvalDeadline.getTime());
      });
      if (due.length === 0) return 0;
      const reason = phase === "pending_approval" ? "approval deadline passed: nobody approved it in time" : "signature deadline passed";
      const moved = await p.orders.transitionMany(due, fromStatuses(phase === "pending_approval" ? "approval_expired" : "signature_expired"), "expired", reason);
      for (const id of moved) this.apply(id, { status: "expired" });
      return moved.length;
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
    return this.mailbox.admit(() => runApprove(this, msg));
  }

  /** Rejects an order pending approval: `rejected`, its reservation released, the decision in its history. */
  reject(msg: DecisionMessage<R>): Promise<Placed<R>> {
    return runReject(this, msg);
  }


  // ---------------------------------------------------------------- heartbeat (dead-man switch)

  /** Turns the dead-man switch on (or changes its interval): the deadline is now + interval. */
  setHeartbeat(intervalS: number): Promise<AgentView<L>> {
    return this.mailbox.send(async () => {
      const now = this.clock.now();
      const next: HeartbeatState = { intervalS, lastAt: new Date(now), deadlineAt: new Date(now + intervalS * 1000) };
      await this.store.saveHeartbeat?.(this._profile.id, next);
      this.heartbeat = next;
      return this.view();
    });
  }

  /** Turns the dead-man switch off. */
  clearHeartbeat(): Promise<AgentView<L>> {
    return this.mailbox.send(async () => {
      await this.store.saveHeartbeat?.(this._profile.id, null);
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
      await this.store.saveHeartbeat?.(this._profile.id, next);
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
      await this.store.saveHeartbeat?.(this._profile.id, null);
      this.heartbeat = null;
    });
  }

  /**
   * Settles a `submitting` or `unknown` order against the venue: an order the venue knows takes the
   * venue's status; one it does not know never reached it and is rejected (its reservation released).
   * Nothing is ever re-posted; an order whose venue call is in flight here is left alone. An `open`
   * order whose client cancel was sent and not settled takes the venue's state (reconcile-cancel.ts).
   */
  reconcile(row: R): Promise<ReconcileResult> {
    return row.status === "open" && row.cancelRequestedAt ? reconcileCancel(this, row) : reconcileOrder(this, row);
  }


  /**
   * The kill switch's ports over this actor's own: cancellations at the venue (with the credentials
   * the caller opened once for the whole fan-out) and the final statuses in the store.
   */
  killPorts(
    credentials: Promise<VenueCredentials | undefined>,
    onRefused: (orderId: string, refusal: Extract<VenueCancelResult, { ok: false }>) => void,
    retry?: CancelRetry,
    label?: string,
  ): KillPorts {
    return buildKillPorts(this, credentials, onRefused, retry, label);
  }


  /**
   * After a kill's answer: reads each cancelled order at the venue and records what had filled
   * before the cancellation, so that part keeps counting against the agent's limits.
   */
  settleLateFills(orderIds: string[], credentials: VenueCredentials | undefined): Promise<void> {
    return settleLateFills(this, orderIds, credentials);
  }


  // ---------------------------------------------------------------- the venue's truth

  /**
   * A report of a source of the venue's truth about one of this agent's orders (delivered by the venue
   * report sink): applied through the order lifecycle table, or logged and ignored (apply-venue-report.ts).
   */
  venueReport(orderId: string, report: VenueReport): Promise<ReportResult> {
    return applyVenueReport(this, orderId, report);
  }

  /**
   * @internal (ActorCore) Follows a stored fill (or one taken back): the order's counts, the shares
   * held and the position (`before`/`totals`: the order's counted fills before and after).
   */
  recordFill(before: R, after: R, beforeTotals: FillTotals, totals: FillTotals): void {
    const deltaShares = totals.sharesUnits - beforeTotals.sharesUnits;
    const deltaUsdc = totals.usdcUnits - beforeTotals.usdcUnits;
    const tracked = this.active.get(after.id);
    if (tracked) {
      this.apply(after.id, { status: after.status, venueOrderId: after.venueOrderId, filledUnits: after.filledUnits, fillsUsdcUnits: totals.usdcUnits });
      const still = this.active.get(after.id);
      if (still) {
        this.offer(still, -1n);
        still.filledSharesUnits = totals.sharesUnits;
        this.offer(still, 1n);
      }
    } else {
      this.addCounts({ ...trackedOf(before), fillsUsdcUnits: beforeTotals.usdcUnits }, -1n);
      const next = { ...trackedOf(after), filledSharesUnits: totals.sharesUnits, fillsUsdcUnits: totals.usdcUnits };
      if (ACTIVE_STATUSES.has(after.status)) this.track(next);
      else this.addCounts(next, 1n);
    }
    const token = after.typedData?.message.tokenId;
    if (!token) return;
    if (deltaShares !== 0n) this.held.set(token, (this.held.get(token) ?? 0n) + (after.side === "buy" ? deltaShares : -deltaShares));
    this.movePosition(token, after.conditionId, after.side, deltaShares, deltaUsdc);
  }

  /** A position after a change of one order's fills (average cost, as src/domain/positions.ts folds them). */
  private movePosition(token: string, conditionId: string, side: "buy" | "sell", dShares: bigint, dUsdc: bigint): void {
    if (dShares === 0n && dUsdc === 0n) return;
    const p = this.positions.get(token) ?? { conditionId, sharesUnits: 0n, costUnits: 0n };
    const costBefore = p.costUnits;
    if (side === "buy") {
      p.sharesUnits += dShares;
      p.costUnits += dUsdc;
    } else if (dShares > 0n) {
      if (p.sharesUnits > 0n) {
        const sold = dShares < p.sharesUnits ? dShares : p.sharesUnits;
        p.costUnits -= (p.costUnits * sold) / p.sharesUnits;
        p.sharesUnits -= sold;
      }
    } else if (dShares < 0n) {
      // A sell taken back: its shares return at the average cost (at what it received when none are held).
      const back = -dShares;
      p.costUnits += p.sharesUnits > 0n ? (p.costUnits * back) / p.sharesUnits : -dUsdc;
      p.sharesUnits += back;
    }
    if (p.sharesUnits <= 0n || p.costUnits < 0n) {
      // Fills taken back out of order: never a negative position or cost (the store reloads it exactly at activation).
      if (p.sharesUnits <= 0n) p.sharesUnits = 0n;
      if (p.sharesUnits === 0n || p.costUnits < 0n) p.costUnits = 0n;
    }
    this.positions.set(token, p);
    this.positionCost.set(p.conditionId, (this.positionCost.get(p.conditionId) ?? 0n) + p.costUnits - costBefore);
  }

  /** Shares of `tokenId` held (from fills) and those already offered in open sells. */
  positionOf(tokenId: string): { heldUnits: bigint; offeredUnits: bigint } {
    return { heldUnits: this.held.get(tokenId) ?? 0n, offeredUnits: this.offered.get(tokenId) ?? 0n };
  }

  /** Adds (sign 1) or removes (sign -1) what an active sell still offers (its shares less those filled) to `offered`. */
  private offer(o: TrackedOrder, sign: bigint): void {
    if (o.side !== "sell" || o.tokenId === undefined || o.sharesUnits === undefined) return;
    const left = o.sharesUnits - (o.filledSharesUnits ?? 0n);
    if (left <= 0n) return;
    const next = (this.offered.get(o.tokenId) ?? 0n) + sign * left;
    if (next === 0n) this.offered.delete(o.tokenId);
    else this.offered.set(o.tokenId, next);
  }

  // ---------------------------------------------------------------- registry

  /**
   * Removes the agent's rows (`remove`, which answers whether it did) once every order write this actor
   * started has settled, and refuses every later intent (AgentRetiredError): so no order row can be
   * written for an agent after its removal (the orders table has no foreign key to agents: its row
   * lock on the agent cost PostgreSQL about 15 % of an intent's CPU; docs/decisions.md).
   */
  retire(remove: () => Promise<boolean>): Promise<boolean> {
    return this.mailbox.send(async () => {
      await Promise.allSettled([...this.writes.values()]);
      const removed = await remove();
      if (removed) this.retired = true;
      return removed;
    });
  }

  canEvict(now: number, idleMs: number): boolean {
    return this.mailbox.idleFor(now) >= idleMs && this.mailbox.inProgress === 0 && this.writes.size === 0 && this.inflight.size === 0 && this.killsRunning === 0;
  }

  /** A kill or cancel-all is running (a hand-over of the agent waits for it: registry.ts). */
  killing(): boolean {
    return this.killsRunning > 0;
  }

  /** A venue placement is under way (an urgent hand-over still waits for it: registry.ts). */
  placing(): boolean {
    return this.inflight.size > 0;
  }

  // ---------------------------------------------------------------- internals

  private readonly finishers = new Map<string, (outcome: VenueOutcome) => Promise<void>>();

  /** Opens an in-flight venue call; its finisher records the outcome through the mailbox. */
  /** @internal (ActorCore) */
  openInflight(orderId: string): (outcome: VenueOutcome) => Promise<void> {
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

  /** @internal (ActorCore) */
  currentBreaker(now: number): BreakerState {
    const b = this.breaker;
    if (
      b.state === "tripped" &&
      b.reason === "venue_errors" &&
      b.since &&
      now - b.since.getTime() >= this._limits.breaker_cooldown_s * 1000
    ) {
      this.breaker = { state: "closed", reason: null, since: new Date(now) };
      this.venueErrorStreak = 0;
      void this.store.saveBreaker(this._profile.id, this.breaker, 0).catch(() => undefined);
    }
    return this.breaker;
  }

  private track(order: TrackedOrder): void {
    const was = this.active.get(order.id);
    if (was) this.offer(was, -1n);
    this.active.set(order.id, order);
    this.offer(order, 1n);
    this.addCounts(order, 1n);
  }

  /** Drops an order that never came to exist (its write failed), returning its reservation. */
  private forget(orderId: string): void {
    const o = this.active.get(orderId);
    if (!o) return;
    this.addCounts(o, -1n);
    this.offer(o, -1n);
    this.active.delete(orderId);
  }

  /** @internal (ActorCore) */
  apply(orderId: string, patch: OrderPatch): void {
    const o = this.active.get(orderId);
    if (!o) return;
    this.addCounts(o, -1n);
    this.offer(o, -1n);
    Object.assign(o, patch);
    this.addCounts(o, 1n);
    if (!ACTIVE_STATUSES.has(o.status)) this.active.delete(orderId);
    else this.offer(o, 1n);
  }

  private addCounts(o: TrackedOrder, sign: bigint): void {
    addCounts(this.counts, o, sign);
  }
}

/** The actor's tracking of a stored order. */
function trackedOf(r: StoredOrder & { marketId?: string }): TrackedOrder {
  return {
    id: r.id,
    mode: r.mode,
    marketId: r.marketId ?? r.typedData?.message.tokenId ?? "",
    conditionId: r.conditionId,
    side: r.side,
    notionalUnits: r.notionalUnits,
    status: r.status,
    tradingDay: r.tradingDay,
    venueOrderId: r.venueOrderId,
    signatureDeadline: r.signatureDeadline,
    filledUnits: r.filledUnits,
    tokenId: r.typedData?.message.tokenId,
    sharesUnits: r.typedData ? orderSharesUnits(r.typedData.message) : undefined,
  };
}
