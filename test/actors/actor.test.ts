/** agent-actor.ts with in-memory fakes. */
import { expect, test } from "bun:test";
import { AgentActor } from "../../actors/agent-actor.ts";
import type { ActorLimits, AgentSnapshot, AgentStore } from "../../actors/ports.ts";

const T0 = Date.parse("2026-05-10T12:00:00.000Z");
const store: AgentStore<ActorLimits> = {
  saveLimits: async () => {},
  saveBreaker: async () => {},
  saveCredentials: async () => {},
  deleteCredentials: async () => false,
};
const snapshot: AgentSnapshot<ActorLimits> = {
  profile: { id: "agt_1", orgId: "org_1", name: null, mode: "delegated", walletAddress: "0x1", signerAddress: "0x1", signatureType: 0, createdAt: new Date(T0) },
  limits: { daily_volume_usdc: 1000, max_venue_errors: 5, breaker_cooldown_s: 60 },
  breaker: { state: "closed", reason: null, since: null },
  venueErrorStreak: 0,
  credentials: { scopes: ["order:place"], keyHint: "abcd", createdAt: new Date(T0) },
  activeOrders: [],
  dailyUsedUnits: {},
  exposureUnits: {},
  lastOrderTimestampMs: 0,
};

test("a delegated reservation whose write fails leaves no venue call 'in flight' behind (actor stays evictable)", async () => {
  const actor = new AgentActor(structuredClone(snapshot), store, { now: () => T0 });
  const r = await actor.reserve({
    order: { id: "ord_1", mode: "delegated", marketId: "1", conditionId: "0xc", side: "buy", notionalUnits: 5_000_000n, status: "submitting", venueOrderId: null, signatureDeadline: null },
    evaluate: () => ({ approved: true }),
    persist: async () => {
      throw new Error("database down");
    },
  });
  expect(r.approved).toBe(true);
  await (r as { written: Promise<void> }).written.catch(() => undefined);
  await new Promise((res) => setTimeout(res, 10));
  expect(actor.view().openOrders).toBe(0); // the reservation was given back
  expect(actor.isInflight("ord_1")).toBe(false); // but the in-flight placement opened by reserve() is never closed
  expect(actor.canEvict(T0 + 3600_000 + Date.now(), 1)).toBe(true);
});
