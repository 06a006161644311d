/**
 * A POST without a body is never refused as malformed JSON. Over real HTTP, fetch sends a bodiless
 * POST with `content-length: 0`; the body-limit parser answers every body, an empty one included, so
 * nothing falls through to Elysia's own parsers (which refuse an empty JSON body, and throw on the
 * kill route's former `parse: "none"`). The kill route's optional {reason} is validated and kept.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase, rowsOf } from "../support/databases.ts";
import { newTrader, type Trader } from "../support/payload.ts";

describeEachDatabase("POST without a body over real HTTP", (_kind, database) => {
  let t: TestApp;
  let tr: Trader;
  let server: ReturnType<typeof Bun.serve>;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp(await database());
    tr = await newTrader(t);
    server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => t.app.handle(req) });
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    server?.stop(true);
    await t?.app.stop();
  });

  const post = async (path: string, headers: Record<string, string>, body?: string) => {
    const res = await fetch(`${base}${path}`, { method: "POST", headers: { "x-api-key": tr.key, ...headers }, body });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const reasonOf = async (killId: string) => (await rowsOf(await database(), sql`select reason from kills where id = ${killId}`))[0]?.reason;

  test("kill, breaker and resume with no body (content-length: 0), with and without a JSON content type", async () => {
    const variants: Record<string, string>[] = [{}, { "content-type": "application/json" }];
    for (const headers of variants) {
      const killed = await post(`/v1/agents/${tr.agent.id}/kill`, headers);
      expect(killed.status).toBe(200);
      expect(killed.body.agent.breaker.state).toBe("tripped");
      expect(await reasonOf(killed.body.kill_id)).toBeNull();
      expect((await post(`/v1/agents/${tr.agent.id}/resume`, headers)).status).toBe(200);
      expect((await post(`/v1/agents/${tr.agent.id}/breaker`, headers)).status).toBe(200);
      expect((await post(`/v1/agents/${tr.agent.id}/resume`, headers)).status).toBe(200);
    }
    // Another organization's agent: 404, not 400.
    const other = await newTrader(t);
    const foreign = await post(`/v1/agents/${other.agent.id}/kill`, {});
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("not_found");
  });

  test("kill's optional body: {reason} is kept; a wrong body is 400 and kills nothing", async () => {
    const json = { "content-type": "application/json" };
    const killed = await post(`/v1/agents/${tr.agent.id}/kill`, json, JSON.stringify({ reason: "strategy misbehaving" }));
    expect(killed.status).toBe(200);
    expect(await reasonOf(killed.body.kill_id)).toBe("strategy misbehaving");
    expect((await post(`/v1/agents/${tr.agent.id}/resume`, {})).status).toBe(200);

    for (const bad of [JSON.stringify({ reason: 5 }), JSON.stringify({ other: 1 }), "[1]", "[]", "42", '"text"', "{not json"]) {
      const res = await post(`/v1/agents/${tr.agent.id}/kill`, json, bad);
      expect([bad, res.status, res.body.code]).toEqual([bad, 400, "invalid_request"]);
    }
    const refused = await post(`/v1/agents/${tr.agent.id}/kill`, { "content-type": "text/plain" }, "stop");
    expect(refused.status).toBe(400);
    const kills = await rowsOf(await database(), sql`select count(*)::int as n from kills where agent_id = ${tr.agent.id}`);
    expect(Number(kills[0].n)).toBe(3);
    // Without a key the answer is 401 whatever the body.
    const anonymous = await fetch(`${base}/v1/agents/${tr.agent.id}/kill`, { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" });
    expect(anonymous.status).toBe(401);
  });
});
