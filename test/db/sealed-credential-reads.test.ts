/**
 * The sealed credential reads of delegated placements, gathered into one statement per batch
 * (src/db/sealed-credential-reads.ts): each read answers its own agent's bytes (null for none), reads
 * asked for in one turn share a statement, a read asked for while a statement runs is answered by the
 * next one (what is stored after the earlier statement started is seen), and a failed statement fails
 * the reads it carried, not later ones.
 */
import { beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Database, QueryStatement } from "../../src/db/database.ts";
import { SealedCredentialReads } from "../../src/db/sealed-credential-reads.ts";
import { describeEachDatabase } from "../support/databases.ts";

describeEachDatabase("sealed credential reads", (kind, open) => {
  let database: Database;
  const tag = `${kind}${process.pid}x${Date.now().toString(36)}`;
  const org = `org_scr${tag}`;
  const agent = (i: number) => `agt_scr${tag}n${i}`;
  const bytes = (i: number) => new Uint8Array(Array.from({ length: 48 + i }, (_, k) => (k * 7 + i) % 256));
  /** The statements the reader sent, with their parameters. */
  const sent: (string | null)[][] = [];
  let query: QueryStatement;

  beforeAll(async () => {
    database = await open();
    query = (text, params, opts) => {
      sent.push(params);
      return database.query(text, params, opts);
    };
    await database.db.execute(sql`insert into orgs (id, name) values (${org}, 'sealed reads')`);
    for (let i = 0; i < 5; i++) {
      await database.db.execute(sql`insert into agents (id, org_id, mode, wallet_address, signer_address, limits) values (${agent(i)}, ${org}, 'delegated', '0xw', '0xs', '{}'::jsonb)`);
      // Agent 4 has none.
      if (i < 4) await database.db.execute(sql`insert into credentials (agent_id, ciphertext, scopes, key_hint) values (${agent(i)}, ${bytes(i)}, '["order:place"]'::jsonb, 'hint')`);
    }
  });

  test("reads asked for in one turn: one statement, each its own agent's bytes, null for an agent without any", async () => {
    const reader = new SealedCredentialReads(query);
    const before = sent.length;
    const got = await Promise.all([0, 1, 2, 1, 4, 3].map((i) => reader.read(agent(i))));
    expect(sent.length - before).toBe(1);
    expect(got).toEqual([bytes(0), bytes(1), bytes(2), bytes(1), null, bytes(3)]);
    // Two reads of one agent: two copies (a caller wipes its own).
    expect(got[1]).not.toBe(got[3]);
  });

  test("a read asked for while a statement runs goes in the next one and sees what was stored meanwhile", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const slow: QueryStatement = async (text, params, opts) => {
      calls++;
      const rows = await query(text, params, opts);
      if (calls === 1) await gate;
      return rows;
    };
    const reader = new SealedCredentialReads(slow);
    const first = reader.read(agent(0));
    while (calls === 0) await new Promise((r) => setImmediate(r));
    await database.db.execute(sql`update credentials set ciphertext = ${bytes(9)} where agent_id = ${agent(0)}`);
    const second = reader.read(agent(0));
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(1);
    release();
    expect(await first).toEqual(bytes(0));
    expect(await second).toEqual(bytes(9));
    expect(calls).toBe(2);
    await database.db.execute(sql`update credentials set ciphertext = ${bytes(0)} where agent_id = ${agent(0)}`);
  });

  test("a failed statement fails the reads it carried; the next ones are read again", async () => {
    let fail = true;
    const flaky: QueryStatement = async (text, params, opts) => {
      if (fail) {
        fail = false;
        throw new Error("connection lost");
      }
      return query(text, params, opts);
    };
    const reader = new SealedCredentialReads(flaky);
    const failed = await Promise.allSettled([reader.read(agent(1)), reader.read(agent(2))]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(await reader.read(agent(2))).toEqual(bytes(2));
  });

  test("more agents than one statement carries: every read is answered", async () => {
    const reader = new SealedCredentialReads(query);
    const ids = Array.from({ length: 150 }, (_, i) => (i % 2 === 0 ? `agt_missing${i}` : agent(i % 4)));
    const got = await Promise.all(ids.map((id) => reader.read(id)));
    expect(got).toEqual(ids.map((id, i) => (id.startsWith("agt_missing") ? null : bytes(i % 4))));
  });
});
