/**
 * The SDK's event iterator against the service's own GET /v1/events (CONTRACT 14): order status
 * changes, a risk rejection with its failures, the kill and breaker events, and replay after
 * Last-Event-ID.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { NotFoundError, type BrokerEvent, type PayloadIntentAnswer } from "../../packages/sdk/src/client.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { DEM_YES } from "../support/payload.ts";
import { newOrgClient, serveTestApp, type LiveService } from "./serve.ts";

describeEachDatabase("sdk events against the live route", (_kind, database) => {
  let live: LiveService;
  beforeAll(async () => {
    live = await serveTestApp(await database());
  });
  afterAll(() => live?.stop());

  test("order, risk_rejected, kill and breaker events in order; Last-Event-ID replays what was missed", async () => {
    const { client } = await newOrgClient(live.url);
    const account = privateKeyToAccount(generatePrivateKey());
    const agent = await client.createAgent({ wallet_address: account.address });

    const stop = new AbortController();
    let opened!: () => void;
    const connected = new Promise<void>((r) => (opened = r));
    const it = client.events({ agent_id: agent.id, signal: stop.signal, onOpen: () => opened() });
    const first = it.next();
    const outcome = await Promise.race([connected.then(() => "open" as const), first.then(() => "event" as const)]);
    expect(outcome).toBe("open");

    const got: BrokerEvent[] = [];
    const collect = (async () => {
      for (let n = await first; !n.done; n = await it.next()) {
        got.push(n.value);
        if (n.value.type === "kill") break;
      }
    })();
    const answer = (await client.placeIntent({ agent_id: agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.45 })) as PayloadIntentAnswer;
    await client.signAndSubmit(answer, account);
    await client.placeIntent({ agent_id: agent.id, market_id: DEM_YES, side: "buy", size_usdc: 500, price: 0.45 }).catch(() => undefined);
    await client.kill(agent.id);
    await Promise.race([collect, Bun.sleep(10_000)]);
    stop.abort();

    const statuses = got.filter((e) => e.type === "order" && e.data.order.id === answer.order_id).map((e) => (e.type === "order" ? e.data.order.status : ""));
    expect(statuses).toContain("open");
    expect(statuses.at(-1)).toBe("cancelled");
    const rejected = got.find((e) => e.type === "risk_rejected");
    expect(rejected?.type === "risk_rejected" && rejected.data.failures.map((f) => f.code)).toContain("order_too_large");
    expect(got.some((e) => e.type === "breaker" && e.data.state === "tripped")).toBe(true);
    const kill = got.find((e) => e.type === "kill");
    expect(kill?.type === "kill" && kill.data.cancelled).toEqual([answer.order_id]);
    const ids = got.map((e) => Number(e.id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);

    // Replay: from the first event's id, everything after it comes again.
    const replay: BrokerEvent[] = [];
    const ac = new AbortController();
    for await (const e of client.events({ agent_id: agent.id, lastEventId: got[0]!.id, signal: ac.signal })) {
      replay.push(e);
      if (replay.length === got.length - 1) ac.abort();
    }
    expect(replay.map((e) => e.id)).toEqual(got.slice(1).map((e) => e.id));
  }, 30_000);

  test("another organization's agent is a NotFoundError; no events of one organization reach another", async () => {
    const a = await newOrgClient(live.url);
    const b = await newOrgClient(live.url);
    const agentA = await a.client.createAgent({ wallet_address: privateKeyToAccount(generatePrivateKey()).address });
    const err = await b.client.events({ agent_id: agentA.id }).next().catch((e) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    const stop = new AbortController();
    let opened!: () => void;
    const connected = new Promise<void>((r) => (opened = r));
    const seen: BrokerEvent[] = [];
    const reading = (async () => {
      for await (const e of b.client.events({ signal: stop.signal, onOpen: () => opened() })) seen.push(e);
    })();
    await connected;
    await a.client.placeIntent({ agent_id: agentA.id, market_id: DEM_YES, side: "buy", size_usdc: 500, price: 0.45 }).catch(() => undefined);
    await Bun.sleep(1500);
    stop.abort();
    await reading;
    expect(seen).toEqual([]);
  });
});
