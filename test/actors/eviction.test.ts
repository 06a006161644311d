/** an actor evicted while work outside its mailbox (a kill's cancellations) still holds it. */
import { beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { approved, getAgent, newTrader, sign, sleep, submitSigned } from "../support/payload.ts";
import { hookedVenue } from "../support/hooked-venue.ts";

describe("eviction during a kill", () => {
  let t: TestApp;
  let h: ReturnType<typeof hookedVenue>;
  beforeAll(async () => {
    h = hookedVenue();
    // ACTOR_IDLE_MS may be as low as 1000 (config.ts); the kill deadline is the default 5 s.
    t = await createTestApp(await sharedPglite(), { venue: h.venue, config: { actorIdleMs: 1000 } });
  });

  test("the agent read after a kill shows what the kill did, even if its actor was evicted while the cancels ran", async () => {
    const tr = await newTrader(t);
    const order = await approved(t, tr, { price: 0.47 });
    const sub = await submitSigned(t, tr.key, order.order_id, await sign(tr.account, order.unsigned_order));
    expect(sub.status).toBe(200);
    // A venue that takes 3 s to confirm the cancel (within the 5 s deadline).
    h.overrides.cancelOrder = async (req: any, opts: any) => {
      await sleep(3000);
      return h.paper.cancelOrder(req, opts);
    };
    try {
      const kill = t.call("POST", `/v1/agents/${tr.agent.id}/kill`, { key: tr.key });
      await sleep(2500);
      const during = await getAgent(t, tr); // a dashboard poll while the kill runs
      expect(during.breaker.state).toBe("tripped");
      const k = await kill;
      expect(k.status).toBe(200);
      expect(k.body.cancelled).toEqual([order.order_id]);
    } finally {
      delete h.overrides.cancelOrder;
    }
    const after = await getAgent(t, tr);
    expect(after.open_orders).toBe(0);
    expect(after.daily_volume.used_usdc).toBe(0);
  }, 15_000);
});
