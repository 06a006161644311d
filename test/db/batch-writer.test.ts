/** the group-commit insert of approved orders (order-repository.ts insertApproved, batch-writer.ts). */
import { beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { getAgent, newTrader, postIntent } from "../support/payload.ts";

describe("group commit", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(await sharedPglite());
  });

  test("one organization's intent with a NUL in client_order_id does not fail another organization's intent in the same batch", async () => {
    const victim = await newTrader(t);
    const attacker = await newTrader(t);
    // Both arrive in the same event-loop turn, so they share one batch (one INSERT statement).
    const [good, bad] = await Promise.all([
      postIntent(t, victim, { price: 0.47, client_order_id: "victim-1" }),
      postIntent(t, attacker, { price: 0.47, client_order_id: "x\u0000y" }),
    ]);
    // What should happen: the innocent intent is approved; the odd one is a 400 (or stored), never a 500.
    expect({ victim: good.status, victim_code: good.body?.code }).toEqual({ victim: 201, victim_code: undefined });
    expect(bad.status).not.toBe(500);
    expect((await getAgent(t, victim)).open_orders).toBe(1);
  });

  test("a NUL in client_order_id alone is a 400, not a 500", async () => {
    const tr = await newTrader(t);
    const res = await postIntent(t, tr, { price: 0.47, client_order_id: "a\u0000" });
    expect(res.status).toBe(400);
  });
});

describe("kill reason", () => {
  test("a kill whose reason holds a NUL is refused with 400 before anything happens", async () => {
    const t = await createTestApp(await sharedPglite());
    const tr = await newTrader(t);
    const res = await t.call("POST", `/v1/agents/${tr.agent.id}/kill`, { key: tr.key, body: { reason: "oops\u0000" } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("invalid_request");
    const agent = await getAgent(t, tr);
    expect(agent.breaker.state).toBe("closed"); // nothing happened
  });
});
