/** The expiry sweep and reconciliation racing an actor activation: the actor must end up agreeing with the database. */
import { beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { orders } from "../../src/db/schema.ts";
import { VenueUnavailableError } from "../../src/venues/venue.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { approved, getAgent, newTrader, sign, submitSigned } from "../support/payload.ts";
import { hookedVenue } from "../support/hooked-venue.ts";

describe("sweeps vs actor activation", () => {
  let t: TestApp;
  let h: ReturnType<typeof hookedVenue>;
  beforeAll(async () => {
    h = hookedVenue();
    t = await createTestApp(await sharedPglite(), { venue: h.venue });
  });

  /** Evicts every idle actor, then makes the next load of `agentId` pause after reading its snapshot until released. */
  function pausedActivation(agentId: string) {
    const { agents } = t.app.services;
    agents.registry.sweep(Date.now() + 24 * 3600_000);
    expect(agents.registry.peek(agentId)).toBeUndefined();
    const load = agents.store.load.bind(agents.store);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let loaded!: () => void;
    const snapshotRead = new Promise<void>((r) => (loaded = r));
    (agents.store as any).load = async (id: string, now?: number) => {
      const snap = await load(id, now);
      if (id === agentId) {
        loaded();
        await gate;
      }
      return snap;
    };
    const restore = () => delete (agents.store as any).load;
    return { snapshotRead, release, restore };
  }

  test("the expiry sweep racing an activation: the actor releases the reservation the database released", async () => {
    const tr = await newTrader(t);
    const order = await approved(t, tr, { price: 0.47 });
    const p = pausedActivation(tr.agent.id);
    try {
      const activation = t.app.services.agents.registry.get(tr.agent.id);
      await p.snapshotRead; // the snapshot holds the order awaiting its signature
      const expiring = t.app.services.orders.expireDue(new Date(Date.now() + 3600_000));
      p.release();
      await activation;
      expect(await expiring).toBeGreaterThanOrEqual(1);
    } finally {
      p.restore();
    }
    const [row] = await (await sharedPglite()).db.select().from(orders).where(eq(orders.id, order.order_id));
    expect(row.status).toBe("expired");
    const agent = await getAgent(t, tr);
    // What should happen: the reservation is released in the actor too.
    expect(agent.open_orders).toBe(0);
    expect(agent.daily_volume.used_usdc).toBe(0);
  });

  test("reconciliation racing an activation: the actor drops the order the database settled", async () => {
    const tr = await newTrader(t);
    const order = await approved(t, tr, { price: 0.47 });
    // The venue never receives it and the service times out: `unknown`.
    h.overrides.postSignedOrder = async () => {
      throw new VenueUnavailableError("no answer");
    };
    try {
      const sub = await submitSigned(t, tr.key, order.order_id, await sign(tr.account, order.unsigned_order));
      expect(sub.status).toBe(504);
    } finally {
      delete h.overrides.postSignedOrder;
    }
    const p = pausedActivation(tr.agent.id);
    try {
      const activation = t.app.services.agents.registry.get(tr.agent.id);
      await p.snapshotRead;
      // Reconciliation runs while the activation is still loading; it goes through the same actor.
      const reconciling = t.app.services.orders.reconcile(); // the venue has no such order: rejected, reservation released
      p.release();
      await reconciling;
      await activation;
    } finally {
      p.release();
      p.restore();
    }
    const [row] = await (await sharedPglite()).db.select().from(orders).where(eq(orders.id, order.order_id));
    expect(row.status).toBe("rejected");
    const agent = await getAgent(t, tr);
    expect(agent.open_orders).toBe(0);
    expect(agent.daily_volume.used_usdc).toBe(0);
  });
});
