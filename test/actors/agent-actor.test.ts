/**
 * The agent actor against an in-memory AgentStore (a test double of the DB
 * port; the real store is exercised by the HTTP and restart suites).
 */
import { describe, expect, test } from "bun:test";
import { AgentActor } from "../../actors/agent-actor.ts";
import type { ActorLimits, AgentSnapshot, AgentStore, BreakerState, CredentialsInfo, TrackedOrder } from "../../actors/ports.ts";
import type { Clock } from "../../src/domain/clock.ts";
import type { RiskState } from "../../src/risk/types.ts";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const USDC = 1_000_000n;

interface TestLimits extends ActorLimits {
  max_order_usdc: number;
}

class FakeStore implements AgentStore<TestLimits> {
  savedLimits: TestLimits[] = [];
  savedBreakers: { breaker: BreakerState; streak: number }[] = [];
  failSaveLimits = false;
  async saveLimits(_agentId: string, limits: TestLimits): Promise<void> {
    await sleep(1);
    if (this.failSaveLimits) throw new Error("database down");
    this.savedLimits.push(structuredClone(limits));
  }
  async saveBreaker(_agentId: string, breaker: BreakerState, venueErrorStreak: number): Promise<void> {
    this.savedBreakers.push({ breaker: { ...breaker }, streak: venueErrorStreak });
  }
  async saveCredentials(_agentId: string, _sealed: Uint8Array, _info: CredentialsInfo): Promise<void> {}
  async deleteCredentials(_agentId: string): Promise<boolean> {
    return false;
  }
  get lastBreaker() {
    return this.savedBreakers[this.savedBreakers.length - 1];
  }
}

class FakeClock implements Clock {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
}

const T0 = Date.parse("2026-05-10T12:00:00.000Z");

function snapshot(overrides: Partial<AgentSnapshot<TestLimits>> = {}, limits: Partial<TestLimits> = {}): AgentSnapshot<TestLimits> {
  return {
    profile: {
      id: "agt_00000000000000000001",
      orgId: "org_00000000000000000001",
      name: "test",
      mode: "payload",
      walletAddress: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
      signerAddress: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
      signatureType: 0,
      createdAt: new Date(T0 - 86_400_000),
    },
    limits: { daily_volume_usdc: 1000, max_venue_errors: 3, breaker_cooldown_s: 60, max_order_usdc: 100, ...limits },
    breaker: { state: "closed", reason: null, since: null },
    venueErrorStreak: 0,
    credentials: null,
    activeOrders: [],
    dailyUsedUnits: {},
    exposureUnits: {},
    lastOrderTimestampMs: 0,
    ...overrides,
  };
}

function makeActor(opts: { snapshot?: AgentSnapshot<TestLimits>; clock?: FakeClock } = {}) {
  const store = new FakeStore();
  const clock = opts.clock ?? new FakeClock(T0);
  const actor = new AgentActor<TestLimits>(opts.snapshot ?? snapshot(), store, clock);
  return { actor, store, clock };
}

let seq = 0;
function order(notionalUnits: bigint, o: Partial<TrackedOrder> = {}): Omit<TrackedOrder, "tradingDay" | "filledUnits"> {
  seq++;
  return {
    id: `ord_${String(seq).padStart(20, "0")}`,
    mode: "payload",
    marketId: "123",
    conditionId: "0xcond",
    side: "buy",
    notionalUnits,
    status: "awaiting_signature",
    venueOrderId: null,
    signatureDeadline: new Date(T0 + 300_000),
    ...o,
  };
}

/** The risk closure the brief describes: daily used + size within the daily limit, and the breaker closed. */
function dailyCheck(limitUnits: bigint, size: bigint, seen?: RiskState[]) {
  return (state: RiskState) => {
    seen?.push(state);
    return { approved: !state.breaker.tripped && state.daily_used_usdc_units + size <= limitUnits, used: state.daily_used_usdc_units };
  };
}

/** The state the actor would hand to the risk engine right now, without reserving anything. */
async function probe(actor: AgentActor<TestLimits>, conditionId = "0xcond"): Promise<RiskState> {
  let seen!: RiskState;
  const r = await actor.reserve({
    order: order(1n, { conditionId }),
    evaluate: (state) => {
      seen = state;
      return { approved: false };
    },
    persist: async () => {
      throw new Error("never persisted");
    },
  });
  expect(r.approved).toBe(false);
  return seen;
}

describe("AgentActor reservations", () => {
  test("60 concurrent reserve() calls approve exactly as many as fit in the daily limit", async () => {
    const { actor } = makeActor();
    const limit = 1000n * USDC;
    const size = 45n * USDC; // 22 fit (990), the 23rd would make 1035
    const persisted: { order: TrackedOrder; ts: number }[] = [];
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        actor.reserve({
          order: order(size),
          evaluate: dailyCheck(limit, size),
          persist: async (o, ts) => {
            await sleep(i % 5); // durable writes finish out of order, outside the mailbox
            persisted.push({ order: o, ts });
          },
        }),
      ),
    );
    const approved = results.filter((r) => r.approved);
    expect(approved.length).toBe(22);
    expect(results.filter((r) => !r.approved).length).toBe(38);
    // Approvals are the first 22 in arrival order: the mailbox serialized the checks.
    expect(results.slice(0, 22).every((r) => r.approved)).toBe(true);
    expect(results.slice(22).every((r) => !r.approved)).toBe(true);
    // Each evaluation saw the reservations made before it.
    expect(results.map((r) => (r.verdict as { used: bigint }).used).slice(0, 23)).toEqual(
      Array.from({ length: 23 }, (_, i) => BigInt(i) * size),
    );
    await Promise.all(approved.map((r) => (r.approved ? r.written : null)));
    expect(persisted.length).toBe(22);
    const v = actor.view();
    expect(v.dailyUsedUnits).toBe(22n * size);
    expect(v.dailyUsedUnits <= limit).toBe(true);
    expect(v.openOrders).toBe(22);
    expect(v.day).toBe("2026-05-10");
    // The approved order carries the UTC trading day and no fills.
    const first = approved[0] as Extract<(typeof approved)[number], { approved: true }>;
    expect(first.order.tradingDay).toBe("2026-05-10");
    expect(first.order.filledUnits).toBe(0n);
    expect(actor.tracked(first.order.id)?.status).toBe("awaiting_signature");
    // EIP-712 timestamps are strictly increasing even with a clock that stands still.
    const stamps = approved.map((r) => (r.approved ? r.timestampMs : 0));
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThan(stamps[i - 1]);
    expect(stamps[0]).toBeGreaterThanOrEqual(T0);
    // The exposure of the market counts the approved buys too.
    const state = await probe(actor);
    expect(state.daily_used_usdc_units).toBe(22n * size);
    expect(state.market_exposure_usdc_units).toBe(22n * size);
    expect((await probe(actor, "0xother")).market_exposure_usdc_units).toBe(0n);
  });

  test("the snapshot's daily volume, exposure and last timestamp carry over", async () => {
    const s = snapshot({
      dailyUsedUnits: { "2026-05-10": 900n * USDC, "2026-05-09": 5000n * USDC },
      exposureUnits: { "0xcond": 70n * USDC },
      lastOrderTimestampMs: T0 + 10_000,
    });
    const { actor } = makeActor({ snapshot: s });
    expect(actor.view().dailyUsedUnits).toBe(900n * USDC);
    const state = await probe(actor);
    expect(state.daily_used_usdc_units).toBe(900n * USDC);
    expect(state.market_exposure_usdc_units).toBe(70n * USDC);
    const size = 60n * USDC;
    const r1 = await actor.reserve({ order: order(size), evaluate: dailyCheck(1000n * USDC, size), persist: async () => {} });
    const r2 = await actor.reserve({ order: order(size), evaluate: dailyCheck(1000n * USDC, size), persist: async () => {} });
    expect(r1.approved).toBe(true);
    expect(r2.approved).toBe(false);
    if (r1.approved) expect(r1.timestampMs).toBe(T0 + 10_001);
  });

  test("a failed persist gives the reservation back", async () => {
    const { actor } = makeActor();
    const size = 600n * USDC;
    const limit = 1000n * USDC;
    const failed = await actor.reserve({
      order: order(size),
      evaluate: dailyCheck(limit, size),
      persist: async () => {
        await sleep(2);
        throw new Error("insert failed");
      },
    });
    expect(failed.approved).toBe(true);
    if (!failed.approved) return;
    expect(actor.view().dailyUsedUnits).toBe(size);
    expect(actor.view().openOrders).toBe(1);
    // While the write is pending, a second order of the same size does not fit.
    const blocked = await actor.reserve({ order: order(size), evaluate: dailyCheck(limit, size), persist: async () => {} });
    expect(blocked.approved).toBe(false);
    await expect(failed.written).rejects.toThrow("insert failed");
    // The release goes through the mailbox; a later message runs after it.
    const state = await probe(actor);
    expect(state.daily_used_usdc_units).toBe(0n);
    expect(state.market_exposure_usdc_units).toBe(0n);
    expect(actor.view().openOrders).toBe(0);
    expect(actor.tracked(failed.order.id)).toBeUndefined();
    const fits = await actor.reserve({ order: order(size), evaluate: dailyCheck(limit, size), persist: async () => {} });
    expect(fits.approved).toBe(true);
    expect(actor.view().dailyUsedUnits).toBe(size);
  });

  test("cancelled and expired orders release their reservation; a filled order keeps it", async () => {
    const { actor } = makeActor();
    const size = 100n * USDC;
    const reserveOne = async () => {
      const r = await actor.reserve({ order: order(size), evaluate: dailyCheck(1000n * USDC, size), persist: async () => {} });
      if (!r.approved) throw new Error("expected approval");
      await r.written;
      return r.order.id;
    };
    const a = await reserveOne();
    const b = await reserveOne();
    const c = await reserveOne();
    expect(actor.view().dailyUsedUnits).toBe(300n * USDC);
    expect(actor.view().openOrders).toBe(3);

    await actor.transition(a, { status: "cancelled" });
    expect(actor.view().dailyUsedUnits).toBe(200n * USDC);
    expect(actor.tracked(a)).toBeUndefined();

    await actor.transition(b, { status: "expired" });
    expect(actor.view().dailyUsedUnits).toBe(100n * USDC);
    expect(actor.tracked(b)).toBeUndefined();
    expect((await probe(actor)).market_exposure_usdc_units).toBe(100n * USDC);

    await actor.transition(c, { status: "open", venueOrderId: "0xvenue" });
    expect(actor.tracked(c)?.status).toBe("open");
    expect(actor.tracked(c)?.venueOrderId).toBe("0xvenue");
    expect(actor.view().dailyUsedUnits).toBe(100n * USDC);

    await actor.transition(c, { status: "filled", filledUnits: size });
    expect(actor.tracked(c)).toBeUndefined();
    expect(actor.view().openOrders).toBe(0);
    expect(actor.view().dailyUsedUnits).toBe(100n * USDC);
    const state = await probe(actor);
    expect(state.daily_used_usdc_units).toBe(100n * USDC);
    expect(state.market_exposure_usdc_units).toBe(100n * USDC);

    // A transition of an unknown or finished order changes nothing.
    await actor.transition(a, { status: "filled", filledUnits: size });
    expect(actor.view().dailyUsedUnits).toBe(100n * USDC);
  });

  test("a partly filled order that is cancelled keeps only what filled", async () => {
    const { actor } = makeActor();
    const size = 100n * USDC;
    const r = await actor.reserve({ order: order(size), evaluate: dailyCheck(1000n * USDC, size), persist: async () => {} });
    if (!r.approved) throw new Error("expected approval");
    await actor.transition(r.order.id, { status: "open", venueOrderId: "v1", filledUnits: 30n * USDC });
    expect(actor.view().dailyUsedUnits).toBe(size);
    await actor.transition(r.order.id, { status: "cancelled" });
    expect(actor.view().dailyUsedUnits).toBe(30n * USDC);
    expect((await probe(actor)).market_exposure_usdc_units).toBe(30n * USDC);
  });
});

describe("AgentActor breaker", () => {
  test("a manual trip rejects new reservations until resume", async () => {
    const { actor, store, clock } = makeActor();
    const tripped = await actor.tripBreaker("manual");
    expect(tripped.breaker.state).toBe("tripped");
    expect(tripped.breaker.reason).toBe("manual");
    expect(tripped.breaker.since?.getTime()).toBe(T0);
    expect(store.lastBreaker.breaker.state).toBe("tripped");
    expect(store.lastBreaker.breaker.reason).toBe("manual");

    const seen: RiskState[] = [];
    const r = await actor.reserve({ order: order(USDC), evaluate: dailyCheck(1000n * USDC, USDC, seen), persist: async () => {} });
    expect(r.approved).toBe(false);
    expect(seen[0].breaker).toEqual({ tripped: true, reason: "manual" });

    // A manual trip does not close by itself after the venue-errors cooldown.
    clock.t += 3600_000;
    expect(actor.view().breaker.state).toBe("tripped");

    const resumed = await actor.resume();
    expect(resumed.breaker.state).toBe("closed");
    expect(resumed.breaker.reason).toBeNull();
    expect(store.lastBreaker).toEqual({ breaker: { state: "closed", reason: null, since: new Date(clock.t) }, streak: 0 });
    const ok = await actor.reserve({ order: order(USDC), evaluate: dailyCheck(1000n * USDC, USDC, seen), persist: async () => {} });
    expect(ok.approved).toBe(true);
    expect(seen[1].breaker).toEqual({ tripped: false, reason: null });
  });

  test("max_venue_errors consecutive venue errors trip it; it closes after breaker_cooldown_s", async () => {
    const { actor, store, clock } = makeActor(); // max_venue_errors 3, breaker_cooldown_s 60
    await actor.recordVenueResult(false);
    await actor.recordVenueResult(false);
    expect(actor.view().breaker.state).toBe("closed");
    expect(store.lastBreaker.streak).toBe(2);
    // A success resets the streak: errors must be consecutive.
    await actor.recordVenueResult(true);
    expect(store.lastBreaker.streak).toBe(0);
    await actor.recordVenueResult(false);
    await actor.recordVenueResult(false);
    expect(actor.view().breaker.state).toBe("closed");
    clock.t += 1000;
    await actor.recordVenueResult(false);
    const tripped = actor.view().breaker;
    expect(tripped.state).toBe("tripped");
    expect(tripped.reason).toBe("venue_errors");
    expect(tripped.since?.getTime()).toBe(T0 + 1000);
    expect(store.lastBreaker.breaker.reason).toBe("venue_errors");
    expect(store.lastBreaker.streak).toBe(3);
    expect((await probe(actor)).breaker).toEqual({ tripped: true, reason: "venue_errors" });

    // More errors while tripped keep it tripped and do not move `since`.
    await actor.recordVenueResult(false);
    expect(actor.view().breaker.since?.getTime()).toBe(T0 + 1000);

    clock.t = T0 + 1000 + 59_999;
    expect(actor.view().breaker.state).toBe("tripped");
    expect((await probe(actor)).breaker.tripped).toBe(true);

    clock.t = T0 + 1000 + 60_000;
    const closed = actor.view().breaker;
    expect(closed.state).toBe("closed");
    expect(closed.reason).toBeNull();
    expect((await probe(actor)).breaker).toEqual({ tripped: false, reason: null });
    expect(store.lastBreaker.breaker.state).toBe("closed");
    expect(store.lastBreaker.streak).toBe(0);

    // The streak starts again from zero: one error does not trip it again.
    await actor.recordVenueResult(false);
    expect(actor.view().breaker.state).toBe("closed");
  });

  test("venue errors do not override a manual trip", async () => {
    const { actor, clock } = makeActor();
    await actor.tripBreaker("manual");
    for (let i = 0; i < 5; i++) await actor.recordVenueResult(false);
    expect(actor.view().breaker.reason).toBe("manual");
    clock.t += 120_000;
    expect(actor.view().breaker).toMatchObject({ state: "tripped", reason: "manual" });
  });
});

describe("AgentActor kill halt", () => {
  const ports = {
    cancelAtVenue: async () => ({ status: "cancelled" as const }),
    saveOutcomes: async () => {},
  };

  test("a kill trips the breaker at once; credentials are refused until resume", async () => {
    const { actor, store, clock } = makeActor();
    const killing = actor.kill(ports, { deadlineAt: clock.t + 5000, concurrency: 4 });
    // Tripped synchronously, before the kill's first message ran.
    expect(actor.view().breaker).toMatchObject({ state: "tripped", reason: "kill" });
    const result = await killing;
    expect(result).toEqual({ cancelled: [], filled: [], failed: [], credentialsDeleted: false });
    expect(store.lastBreaker.breaker).toMatchObject({ state: "tripped", reason: "kill" });
    const info = { scopes: ["order:place"], keyHint: "abcd", createdAt: new Date(T0) };
    expect(await actor.setCredentials(new Uint8Array([1, 2, 3]), info)).toEqual({ ok: false });
    expect(actor.view().profile.mode).toBe("payload");
    await actor.resume();
    const ok = await actor.setCredentials(new Uint8Array([1, 2, 3]), info);
    expect(ok.ok).toBe(true);
    expect(actor.view().profile.mode).toBe("delegated");
  });

  test("a manual trip does not weaken a kill halt", async () => {
    const { actor, store, clock } = makeActor();
    await actor.kill(ports, { deadlineAt: clock.t + 5000, concurrency: 4 });
    const saves = store.savedBreakers.length;
    clock.t += 1000;
    const v = await actor.tripBreaker("manual");
    expect(v.breaker.reason).toBe("kill");
    expect(v.breaker.since?.getTime()).toBe(T0);
    expect(store.savedBreakers.length).toBe(saves);
    expect(store.lastBreaker.breaker.reason).toBe("kill");
    const info = { scopes: ["order:place"], keyHint: "abcd", createdAt: new Date(T0) };
    expect(await actor.setCredentials(new Uint8Array([1]), info)).toEqual({ ok: false });
    // A manual trip does replace a venue-errors trip (which would close by itself).
    const other = makeActor();
    for (let i = 0; i < 3; i++) await other.actor.recordVenueResult(false);
    expect(other.actor.view().breaker.reason).toBe("venue_errors");
    expect((await other.actor.tripBreaker("manual")).breaker.reason).toBe("manual");
    other.clock.t += 3600_000;
    expect(other.actor.view().breaker).toMatchObject({ state: "tripped", reason: "manual" });
  });
});

describe("AgentActor limits", () => {
  test("updateLimits stores and applies the change", async () => {
    const { actor, store } = makeActor();
    const v = await actor.updateLimits((cur) => ({ ...cur, daily_volume_usdc: 50 }));
    expect(v.limits.daily_volume_usdc).toBe(50);
    expect(actor.view().limits.daily_volume_usdc).toBe(50);
    expect(store.savedLimits).toHaveLength(1);
    expect(store.savedLimits[0].daily_volume_usdc).toBe(50);
  });

  test("a throwing change leaves the limits unchanged and stores nothing", async () => {
    const { actor, store } = makeActor();
    const before = structuredClone(actor.view().limits);
    await expect(
      actor.updateLimits(() => {
        throw new Error("min_order_usdc must not be greater than max_order_usdc");
      }),
    ).rejects.toThrow("min_order_usdc");
    expect(actor.view().limits).toEqual(before);
    expect(store.savedLimits).toHaveLength(0);
    // The actor still works afterwards.
    const v = await actor.updateLimits((cur) => ({ ...cur, max_order_usdc: 10 }));
    expect(v.limits.max_order_usdc).toBe(10);
  });

  test("a failed write leaves the limits unchanged", async () => {
    const { actor, store } = makeActor();
    store.failSaveLimits = true;
    await expect(actor.updateLimits((cur) => ({ ...cur, daily_volume_usdc: 1 }))).rejects.toThrow("database down");
    expect(actor.view().limits.daily_volume_usdc).toBe(1000);
  });

  test("the venue-errors threshold follows the updated limits", async () => {
    const { actor } = makeActor();
    await actor.updateLimits((cur) => ({ ...cur, max_venue_errors: 1 }));
    await actor.recordVenueResult(false);
    expect(actor.view().breaker).toMatchObject({ state: "tripped", reason: "venue_errors" });
  });
});

describe("AgentActor kill outcomes and late fills", () => {
  async function openOrder(actor: AgentActor<TestLimits>, notional: bigint, side: "buy" | "sell" = "buy") {
    const r = await actor.reserve({ order: order(notional, { side }), evaluate: () => ({ approved: true }), persist: async () => {} });
    if (!r.approved) throw new Error("not approved");
    await r.written;
    await actor.transition(r.order.id, { status: "open", venueOrderId: `0x${r.order.id}` });
    return r.order.id;
  }

  test("an order the venue had already matched is reported filled and keeps counting; a cancelled one counts what filled", async () => {
    const { actor, clock } = makeActor();
    const filled = await openOrder(actor, 5_000_000n);
    const partial = await openOrder(actor, 3_000_000n);
    const untouched = await openOrder(actor, 2_000_000n);
    expect((await probe(actor)).daily_used_usdc_units).toBe(10_000_000n);
    const saved: unknown[] = [];
    const result = await actor.kill(
      {
        cancelAtVenue: async (o) =>
          o.id === filled
            ? { status: "filled", filledUnits: 5_000_000n }
            : o.id === partial
              ? { status: "cancelled", filledUnits: 1_000_000n }
              : { status: "cancelled" },
        saveOutcomes: async (outcomes) => {
          saved.push(...outcomes);
        },
      },
      { deadlineAt: clock.t + 5000, concurrency: 4 },
    );
    expect(result.filled).toEqual([filled]);
    expect(result.cancelled.sort()).toEqual([partial, untouched].sort());
    expect(result.failed).toEqual([]);
    expect(saved).toContainEqual(expect.objectContaining({ orderId: partial, status: "cancelled", filledUnits: 1_000_000n }));
    // 5 (filled) + 1 (what filled of the cancelled one) + 0.
    expect((await probe(actor)).daily_used_usdc_units).toBe(6_000_000n);
    expect((await probe(actor)).market_exposure_usdc_units).toBe(6_000_000n);
    expect(actor.view().openOrders).toBe(0);
  });

  test("a fill learned after an order ended counts against the daily volume and the exposure", async () => {
    const { actor } = makeActor();
    const before = await probe(actor);
    await actor.addLateFill({ tradingDay: "2026-05-10", conditionId: "0xcond", side: "buy" }, 2_500_000n);
    const after = await probe(actor);
    expect(after.daily_used_usdc_units - before.daily_used_usdc_units).toBe(2_500_000n);
    expect(after.market_exposure_usdc_units - before.market_exposure_usdc_units).toBe(2_500_000n);
    // A sell's fill learned that way counts against the daily volume but never lowers the exposure: with
    // no fill row, nothing says which shares left the position (exposure is positions plus open orders).
    await actor.addLateFill({ tradingDay: "2026-05-10", conditionId: "0xcond", side: "sell" }, 1_000_000n);
    const sold = await probe(actor);
    expect(sold.market_exposure_usdc_units).toBe(after.market_exposure_usdc_units);
    expect(sold.daily_used_usdc_units - after.daily_used_usdc_units).toBe(1_000_000n);
  });
});

describe("shares offered by open sells (positionOf), kept as orders come, change and go", () => {
  const tracked = (o: Partial<TrackedOrder>): TrackedOrder => ({ ...order(0n, o), tradingDay: "2026-05-10", filledUnits: 0n }) as TrackedOrder;
  /** What the actor's bookkeeping must equal: its active sells' unfilled shares, summed per token. */
  const walked = (actor: AgentActor<TestLimits>, token: string) =>
    [...actor.active.values()]
      .filter((o) => o.side === "sell" && o.tokenId === token && o.sharesUnits !== undefined)
      .reduce((sum, o) => {
        const left = o.sharesUnits! - (o.filledSharesUnits ?? 0n);
        return left > 0n ? sum + left : sum;
      }, 0n);

  test("from the snapshot at start-up, then across fills, a cancel and an order filled in full", () => {
    const s1 = tracked({ side: "sell", status: "open", tokenId: "A", sharesUnits: 10n * USDC, filledSharesUnits: 4n * USDC });
    const s2 = tracked({ side: "sell", status: "open", tokenId: "A", sharesUnits: 5n * USDC });
    const s3 = tracked({ side: "sell", status: "open", tokenId: "B", sharesUnits: 7n * USDC });
    const buy = tracked({ side: "buy", status: "open", tokenId: "A", sharesUnits: 100n * USDC });
    const { actor } = makeActor({ snapshot: snapshot({ activeOrders: [s1, s2, s3, buy] }) });
    expect(actor.positionOf("A").offeredUnits).toBe(11n * USDC);
    expect(actor.positionOf("B").offeredUnits).toBe(7n * USDC);
    expect(actor.positionOf("C").offeredUnits).toBe(0n);

    // A partial fill of s2 (2 of 5 shares), then s1 cancelled, then s3 filled in full.
    actor.apply(s2.id, { filledSharesUnits: 2n * USDC } as never);
    expect(actor.positionOf("A").offeredUnits).toBe(9n * USDC);
    actor.apply(s1.id, { status: "cancelled" });
    expect(actor.positionOf("A").offeredUnits).toBe(3n * USDC);
    actor.apply(s3.id, { status: "filled", filledSharesUnits: 7n * USDC } as never);
    expect(actor.positionOf("B").offeredUnits).toBe(0n);
    for (const token of ["A", "B"]) expect(actor.positionOf(token).offeredUnits).toBe(walked(actor, token));
    // The buy's shares are never offered.
    actor.apply(buy.id, { status: "cancelled" });
    expect(actor.positionOf("A").offeredUnits).toBe(3n * USDC);
  });
});
