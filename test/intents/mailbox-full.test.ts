/** issue 10: an agent's mailbox is bounded; a full one answers 503 with Retry-After, and nothing is created. */
import { expect, test } from "bun:test";
import { createTestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { hookedVenue } from "../support/hooked-venue.ts";
import { expectProblem, intentBody, newTrader, postIntent } from "../support/payload.ts";

describeEachDatabase("bounded agent mailbox", (_kind, database) => {
  test("with ACTOR_MAILBOX_MAX requests in progress, the next intent gets 503 agent_busy with Retry-After", async () => {
    const h = hookedVenue();
    const t = await createTestApp(await database(), { venue: h.venue, env: { ACTOR_MAILBOX_MAX: "2" } });
    try {
      const tr = await newTrader(t);
      // The venue holds the book of the first two intents until released.
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let held = 0;
      h.overrides.getBook = async (tokenId: string, opts: unknown) => {
        held++;
        await gate;
        return h.paper.getBook(tokenId, opts as never);
      };
      const first = postIntent(t, tr, { size_usdc: 5 });
      const second = postIntent(t, tr, { size_usdc: 6 });
      while (held < 2) await new Promise((r) => setTimeout(r, 5));
      const refused = await postIntent(t, tr, { size_usdc: 7 });
      const p = expectProblem(refused, 503, "agent_busy");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(p.detail).toContain("retry");
      // Another agent is not affected by this one's full mailbox.
      const other = await newTrader(t);
      const otherAnswer = t.call("POST", "/v1/orders/intent", { key: other.key, body: intentBody(other, { size_usdc: 5 }) });
      release();
      expect((await otherAnswer).status).toBe(201);
      expect((await first).status).toBe(201);
      expect((await second).status).toBe(201);
      // The refused intent left nothing behind, and the mailbox takes requests again.
      const list = await t.call("GET", `/v1/orders?agent_id=${tr.agent.id}`, { key: tr.key });
      expect(list.body.data.map((o: any) => o.size_usdc).sort()).toEqual([5, 6]);
      expect((await postIntent(t, tr, { size_usdc: 8 })).status).toBe(201);
    } finally {
      delete h.overrides.getBook;
      await t.app.stop();
    }
  });
});
