/**
 * The sealed credential reads of delegated placements (OrderRepository.readSealed), carried by the
 * statements that write new orders and placements at the same moment: each read answers its own
 * agent's bytes (null for none), a read asked for with writes shares their statement, a read asked for
 * while a statement runs is answered by the next one (what is stored after the earlier statement
 * started is seen), and a statement that fails is made again one write or read at a time: the reads
 * it carried are answered.
 */
import { beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Database, QueryStatement } from "../../src/db/database.ts";
import { type NewOrderRow, OrderRepository } from "../../src/db/order-repository.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { orderRow } from "../support/order-row.ts";

describeEachDatabase("sealed credential reads", (kind, open) => {
  let database: Database;
  const tag = `${kind}${process.pid}x${Date.now().toString(36)}`;
  const org = `org_scr${tag}`;
  const agent = (i: number) => `agt_scr${tag}n${i}`;
  const bytes = (i: number) => new Uint8Array(Array.from({ length: 48 + i }, (_, k) => (k * 7 + i) % 256));
  /** The statements sent through `query`, with their texts. */
  const sent: string[] = [];
  let query: QueryStatement;
  let n = 0;

  beforeAll(async () => {
    database = await open();
    query = (text, params, opts) => {
      sent.push(text);
      return database.query(text, params, opts);
    };
    await database.db.execute(sql`insert into orgs (id, name) values (${org}, 'sealed reads')`);
    for (let i = 0; i < 5; i++) {
      await database.db.execute(sql`insert into agents (id, org_id, mode, wallet_address, signer_address, limits) values (${agent(i)}, ${org}, 'delegated', '0xw', '0xs', '{}'::jsonb)`);
      // Agent 4 has none.
      if (i < 4) await database.db.execute(sql`insert into credentials (agent_id, ciphertext, scopes, key_hint) values (${agent(i)}, ${bytes(i)}, '["order:place"]'::jsonb, 'hint')`);
    }
  });

  const repoWith = (q: QueryStatement) => new OrderRepository(database.db, { maxInFlight: 1, run: database.run, query: q });
  const submitting = (agentId: string, id = `ord_scr${tag}n${++n}`): NewOrderRow =>
    orderRow(
      { id, orgId: org, agentId, mode: "delegated", marketId: "123", conditionId: "0xc", sizeUnits: 1_000_000n, notionalUnits: 500_000n, status: "submitting", orderHash: `0x${n.toString(16).padStart(64, "0")}` },
      "approved",
    );
  const insert = (repo: OrderRepository, o: NewOrderRow) =>
    repo.insert(o, { id: `dec_${o.id}`, orgId: org, agentId: o.agentId, approved: true, intent: {}, failures: [], checks: [], orderId: o.id, createdAt: o.createdAt! });

  test("reads asked for beside new orders: one statement writes the orders and answers each read its own agent's bytes, null for none", async () => {
    const repo = repoWith(query);
    const before = sent.length;
    const orders = [0, 1, 4].map((i) => submitting(agent(i)));
    const [got] = await Promise.all([Promise.all([0, 1, 2, 1, 4, 3].map((i) => repo.readSealed(agent(i)))), ...orders.map((o) => insert(repo, o))]);
    expect(sent.length - before).toBe(1);
    expect(sent[sent.length - 1]).toContain("insert into orders");
    expect(got).toEqual([bytes(0), bytes(1), bytes(2), bytes(1), null, bytes(3)]);
    // Two reads of one agent: two copies (a caller wipes its own).
    expect(got[1]).not.toBe(got[3]);
    for (const o of orders) expect((await repo.get(o.id))?.status).toBe("submitting");
  });

  test("reads alone, and beside placements: the same bytes", async () => {
    const repo = repoWith(query);
    expect(await Promise.all([repo.readSealed(agent(2)), repo.readSealed(agent(4))])).toEqual([bytes(2), null]);
    const o = submitting(agent(3));
    await insert(repo, o);
    const [row, sealed] = await Promise.all([repo.transitionPlaced(o.id, "open", "resting", { venueOrderId: "0xv", filledUnits: 0n }), repo.readSealed(agent(3))]);
    expect(row).toMatchObject({ id: o.id, status: "open" });
    expect(sealed).toEqual(bytes(3));
  });

  test("a read asked for while a statement runs goes in the next one and sees what was stored meanwhile", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    let firstRead!: () => void;
    const firstHasRead = new Promise<void>((r) => (firstRead = r));
    const slow: QueryStatement = async (text, params, opts) => {
      const n = ++calls;
      const rows = await query(text, params, opts);
      if (n === 1) {
        firstRead();
        await gate;
      }
      return rows;
    };
    const repo = repoWith(slow);
    const first = repo.readSealed(agent(0));
    // The first statement has read (not only been sent) before the credentials change.
    await firstHasRead;
    await database.db.execute(sql`update credentials set ciphertext = ${bytes(9)} where agent_id = ${agent(0)}`);
    const second = repo.readSealed(agent(0));
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(1);
    release();
    expect(await first).toEqual(bytes(0));
    expect(await second).toEqual(bytes(9));
    expect(calls).toBe(2);
    await database.db.execute(sql`update credentials set ciphertext = ${bytes(0)} where agent_id = ${agent(0)}`);
  });

  test("a statement that fails is made again one item at a time: a bad order fails alone, the reads beside it are answered", async () => {
    const repo = repoWith(query);
    const good = submitting(agent(1));
    // Its id taken by an order already stored: its insert fails.
    const taken = submitting(agent(1));
    await insert(repo, taken);
    const dup = { ...submitting(agent(2)), id: taken.id };
    const outcomes = await Promise.allSettled([insert(repo, good), insert(repo, dup), repo.readSealed(agent(1)), repo.readSealed(agent(4))]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
    expect((outcomes[2] as PromiseFulfilledResult<Uint8Array | null>).value).toEqual(bytes(1));
    expect((outcomes[3] as PromiseFulfilledResult<Uint8Array | null>).value).toBeNull();
    expect((await repo.get(good.id))?.status).toBe("submitting");
  });

  test("more reads than one statement carries: every read is answered", async () => {
    const repo = repoWith(query);
    const ids = Array.from({ length: 150 }, (_, i) => (i % 2 === 0 ? `agt_missing${tag}${i}` : agent(i % 4)));
    const got = await Promise.all(ids.map((id) => repo.readSealed(id)));
    expect(got).toEqual(ids.map((id, i) => (id.startsWith("agt_missing") ? null : bytes(i % 4))));
  });
});
