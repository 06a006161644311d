/** Delegated mode on the paper venue: placement, the order:place scope, and what idempotency keeps of a credentials body. */
import { beforeAll, expect, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import { eq } from "drizzle-orm";
import { idempotencyKeys } from "../../src/db/schema.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { DEM_YES, getAgent, newTrader } from "../support/payload.ts";

describeEachDatabase("delegated mode", (_kind, database) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(await database());
  });

  test("a delegated intent is placed at the venue and answers its venue_order_id", async () => {
    const tr = await newTrader(t);
    const creds = await t.call("POST", `/v1/agents/${tr.agent.id}/creds`, {
      key: tr.key,
      body: { api_key: "k-1", api_secret: "s-1", passphrase: "p-1", scopes: ["order:place", "order:cancel"] },
    });
    expect(creds.status).toBe(200);
    const res = await t.call("POST", "/v1/orders/intent", {
      key: tr.key,
      body: { agent_id: tr.agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.47 },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ mode: "delegated", status: "open" });
    expect(res.body.venue_order_id).toBe(res.body.order_hash);
    expect((await t.app.services.venue.getOrder({ venue_order_id: res.body.venue_order_id }))?.status).toBe("live");
    expect(res.body.unsigned_order).toBeUndefined();
  });

  test("credentials without order:place: a delegated intent is 409 and reserves nothing", async () => {
    const tr = await newTrader(t);
    const creds = await t.call("POST", `/v1/agents/${tr.agent.id}/creds`, {
      key: tr.key,
      body: { api_key: "k-2", api_secret: "s-2", scopes: ["order:cancel"] },
    });
    expect(creds.status).toBe(200);
    const res = await t.call("POST", "/v1/orders/intent", {
      key: tr.key,
      body: { agent_id: tr.agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.47 },
    });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("invalid_state");
    expect(res.body.detail).toContain("order:place");
    const agent = await getAgent(t, tr);
    expect(agent.daily_volume.used_usdc).toBe(0);
    expect(agent.open_orders).toBe(0);
  });

  test("an idempotent credentials submission keeps a keyed hash of the request, not a plain one", async () => {
    const tr = await newTrader(t);
    // A weak secret, long enough that finding it in the sealed (base64) body cannot be chance: "weak"
    // alone turns up in about one random 2 kB base64 text in 8,000.
    const body = JSON.stringify({ api_key: "k-3", api_secret: "weakweakweakweak", scopes: ["order:place"] });
    const path = `/v1/agents/${tr.agent.id}/creds`;
    const idem = `idem-${tr.agent.id}`;
    const res = await t.call("POST", path, { key: tr.key, raw: body, headers: { "idempotency-key": idem } });
    expect(res.status).toBe(200);
    const rows = await (await database()).db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, idem));
    expect(rows).toHaveLength(1);
    const text = `POST ${path}\n${body}`;
    expect(rows[0].requestHash).not.toBe(createHash("sha256").update(text).digest("hex"));
    expect(rows[0].requestHash).toBe(createHmac("sha256", tr.key).update(text).digest("hex"));
    expect(rows[0].body).toStartWith("aes256gcm:");
    expect(rows[0].body).not.toContain("weakweakweakweak");
  });
});
