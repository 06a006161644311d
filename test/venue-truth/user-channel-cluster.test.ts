/**
 * Two real service processes on one PostgreSQL database (VENUE=clob at the venue simulator): one holds
 * the singleton lease `job:user_channel` and follows every delegated agent's user channel; the agent's
 * actor lives in the other (its agent lease). A counterparty's fill (official client), reported on the
 * follower's user channel, is forwarded over NOTIFY to the owner's actor: the order becomes `filled`
 * within 2 s of the trade, and one fill row exists however many statuses (MATCHED, MINED, CONFIRMED)
 * the trade goes through. The same for a cancel at the venue. PostgreSQL only (TEST_DATABASE_URL).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generatePrivateKey } from "viem/accounts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { ownPostgresDatabase } from "../support/own-postgres-database.ts";
import type { ServiceProcess } from "../support/service-process.ts";
import { call, delegatedAgent, newOrg, SEAL, sells, simStats, startClobService, TOKEN, type Trader, traderOf, until, untilFollowed } from "./e2e-support.ts";
import { copyOfTemplate } from "../support/databases.ts";
import { rmSync } from "node:fs";

const run = process.env.TEST_DATABASE_URL ? describe : describe.skip;

run("venue reports across two instances on one PostgreSQL", () => {
  let sim: VenueSim;
  let url: string;
  let db: import("postgres").Sql;
  const procs: ServiceProcess[] = [];
  const ids = ["ua", "ub"];
  const dirs: string[] = [];
  let key: string;

  const start = async (id: string) => {
    const dir = await copyOfTemplate();
    dirs.push(dir);
    return startClobService(sim, { env: { DATA_DIR: dir, SEAL_SECRET_KEY: SEAL, DATABASE_URL: url }, cleanup: () => {} }, { INSTANCE_ID: id, LEASE_TTL_MS: "1500", LEASE_RENEW_MS: "300" });
  };
  /** [the instance following the user channel, the other one]. */
  const roles = async (): Promise<[ServiceProcess, ServiceProcess]> => {
    const rows = await db`select owner from agent_leases where agent_id = 'job:user_channel' and expires_at > now()`;
    const owner = rows[0]?.owner as string | undefined;
    expect(ids).toContain(owner!);
    const f = ids.indexOf(owner!);
    return [procs[f], procs[1 - f]];
  };

  beforeAll(async () => {
    url = (await ownPostgresDatabase("ws_cluster"))!;
    const { default: postgres } = await import("postgres");
    db = postgres(url, { max: 1, onnotice: () => {} });
    sim = startVenueSim({ port: 0, hostname: "127.0.0.1" });
    procs.push(await start(ids[0]));
    procs.push(await start(ids[1]));
    key = await newOrg(procs[0].url, "cluster");
    await until("the user channel's singleton lease taken", async () => (await db`select 1 from agent_leases where agent_id = 'job:user_channel' and owner is not null and expires_at > now()`).length === 1, 10_000);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop().catch(() => 0)));
    await sim?.stop();
    await db?.end();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("a fill reported by the follower's user channel reaches the owner's actor: filled, one fill row; a venue cancel too", async () => {
    const [follower, owner] = await roles();
    const alice: Trader = await traderOf(sim, generatePrivateKey());
    const bob: Trader = await traderOf(sim, generatePrivateKey());
    const before = await simStats(sim);
    const agent = await delegatedAgent(owner.url, key, alice);
    await untilFollowed(sim, before);

    const place = async (price: number, usdc: number) => {
      const r = await call(owner.url, key, "POST", "/v1/orders/intent", { agent_id: agent, market_id: TOKEN, side: "buy", size_usdc: usdc, price });
      expect({ status: r.status, body: r.status === 201 ? null : r.body }).toMatchObject({ status: 201 });
      expect(r.body.status).toBe("open");
      return r.body as { order_id: string; venue_order_id: string };
    };
    const placed = await place(0.49, 4.9);
    // The agent's actor is the owner's; the user channel is the follower's.
    const lease = await db`select owner from agent_leases where agent_id = ${agent} and expires_at > now()`;
    expect(lease[0]?.owner).toBe(ids[procs.indexOf(owner)]);
    expect(follower).not.toBe(owner);

    const tradedAt = await sells(bob, 0.49, 10);
    await until("filled (read through either instance)", async () => {
      const r = await call(follower.url, key, "GET", `/v1/orders/${placed.order_id}`);
      return r.body?.status === "filled";
    }, 2000, 10);
    expect(Date.now() - tradedAt).toBeLessThan(2000);
    // MINED and CONFIRMED follow; the fill stays one row.
    await until("confirmed", async () => (await call(owner.url, key, "GET", `/v1/orders/${placed.order_id}`)).body.fills?.[0]?.status === "confirmed");
    const o = (await call(owner.url, key, "GET", `/v1/orders/${placed.order_id}`)).body;
    expect(o).toMatchObject({ status: "filled", filled_usdc: 4.9, filled_shares: 10 });
    expect(o.fills).toHaveLength(1);
    expect(o.fills[0]).toMatchObject({ source: "user_channel" });
    const rows = await db`select fill_key, status from fills where order_id = ${placed.order_id}`;
    expect(rows).toHaveLength(1);
    // The owner still holds the agent: nothing was taken over for the report.
    expect((await db`select owner from agent_leases where agent_id = ${agent}`)[0]?.owner).toBe(ids[procs.indexOf(owner)]);
    const positions = await call(follower.url, key, "GET", `/v1/agents/${agent}/positions`);
    expect(positions.body.positions[0]).toMatchObject({ shares: "10", cost_usdc: "4.9" });

    // A cancel done at the venue by the owner of the keys.
    const resting = await place(0.45, 4.5);
    await alice.client.cancelOrder({ orderID: resting.venue_order_id });
    await until("cancelled", async () => (await call(owner.url, key, "GET", `/v1/orders/${resting.order_id}`)).body.status === "cancelled", 2000, 10);
  }, 60_000);

  test("the owner dies (SIGKILL) just before a fill: the follower's report still reaches an actor and the order is filled", async () => {
    const [follower, owner] = await roles();
    const alice: Trader = await traderOf(sim, generatePrivateKey());
    const bob: Trader = await traderOf(sim, generatePrivateKey());
    const before = await simStats(sim);
    const agent = await delegatedAgent(owner.url, key, alice);
    await untilFollowed(sim, before);
    const r = await call(owner.url, key, "POST", "/v1/orders/intent", { agent_id: agent, market_id: TOKEN, side: "buy", size_usdc: 4.9, price: 0.49 });
    expect(r.status).toBe(201);
    expect((await db`select owner from agent_leases where agent_id = ${agent} and expires_at > now()`)[0]?.owner).toBe(ids[procs.indexOf(owner)]);
    owner.signal("SIGKILL");
    await owner.exited;
    // Within the dead owner's lease: the report is published to an instance that no longer listens.
    const tradedAt = await sells(bob, 0.49, 10);
    await until("filled through the surviving instance", async () => (await call(follower.url, key, "GET", `/v1/orders/${r.body.order_id}`)).body?.status === "filled", 10_000, 50);
    const tookMs = Date.now() - tradedAt;
    const o = (await call(follower.url, key, "GET", `/v1/orders/${r.body.order_id}`)).body;
    expect(o).toMatchObject({ filled_shares: 10, filled_usdc: 4.9 });
    expect(o.fills).toHaveLength(1);
    expect((await db`select count(*)::int as n from fills where order_id = ${r.body.order_id}`)[0].n).toBe(1);
    // Within the lease's time to live (1.5 s) plus a renewal and a delivery.
    expect(tookMs).toBeLessThan(5000);
    // The dead instance is replaced for the next test.
    procs[procs.indexOf(owner)] = await start(ids[procs.indexOf(owner)]);
  }, 60_000);

  test("the user channel's follower dies (SIGKILL): the other instance takes job:user_channel and its catch-up finds the fill made meanwhile", async () => {
    const [follower, owner] = await roles();
    const alice: Trader = await traderOf(sim, generatePrivateKey());
    const bob: Trader = await traderOf(sim, generatePrivateKey());
    const before = await simStats(sim);
    const agent = await delegatedAgent(owner.url, key, alice);
    await untilFollowed(sim, before);
    const r = await call(owner.url, key, "POST", "/v1/orders/intent", { agent_id: agent, market_id: TOKEN, side: "buy", size_usdc: 4.9, price: 0.49 });
    expect(r.status).toBe(201);
    follower.signal("SIGKILL");
    await follower.exited;
    await sells(bob, 0.49, 10);
    await until("filled through the remaining instance's user channel", async () => (await call(owner.url, key, "GET", `/v1/orders/${r.body.order_id}`)).body?.status === "filled", 15_000, 100);
    const rows = await db`select owner from agent_leases where agent_id = 'job:user_channel' and expires_at > now()`;
    expect(rows[0]?.owner).toBe(ids[procs.indexOf(owner)]);
    const o = (await call(owner.url, key, "GET", `/v1/orders/${r.body.order_id}`)).body;
    expect(o).toMatchObject({ filled_shares: 10, filled_usdc: 4.9 });
    expect(o.fills).toHaveLength(1);
    expect((await db`select count(*)::int as n from fills where order_id = ${r.body.order_id}`)[0].n).toBe(1);
    procs[procs.indexOf(follower)] = await start(ids[procs.indexOf(follower)]);
  }, 60_000);
});
