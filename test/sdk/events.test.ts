/**
 * The SDK's event iterator against a small Server-Sent Events server written to the contract's wire
 * format (CONTRACT 14: `id:` increasing, `event:` order|risk_rejected|breaker|kill, JSON `data:`,
 * `: keepalive` comments, replay after Last-Event-ID). The live route is tested in events-live.test.ts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { BrokerClient, UnauthenticatedError, type BrokerEvent } from "../../packages/sdk/src/client.ts";

const EVENTS = [
  { id: 1, event: "order", data: { order: { id: "ord_1", status: "awaiting_signature", agent_id: "agt_1" } } },
  { id: 2, event: "risk_rejected", data: { decision_id: "dec_1", intent: {}, failures: [{ check: "order_size", code: "order_too_large", message: "m", limit: 100, actual: 500 }], checks: [] } },
  { id: 3, event: "order", data: { order: { id: "ord_1", status: "open", agent_id: "agt_1" } } },
  { id: 4, event: "breaker", data: { state: "tripped", reason: "kill", since: "2026-11-24T00:00:00Z", previous: { state: "closed", reason: null } } },
  { id: 5, event: "kill", data: { kill_id: "kil_1", agent_id: "agt_1", cancelled: ["ord_1"], failed: [] } },
];
/** The `data:` line: the service's envelope (docs/events.md). */
const envelope = (e: (typeof EVENTS)[number]) => JSON.stringify({ id: e.id, type: e.event, agent_id: "agt_1", created_at: "2026-11-24T00:00:00Z", data: e.data });

let server: ReturnType<typeof Bun.serve>;
const connections: { lastEventId: string | null; agentId: string | null; apiKey: string | null; accept: string | null }[] = [];

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 30,
    fetch(req) {
      const url = new URL(req.url);
      if (url.pathname !== "/v1/events") return new Response("not found", { status: 404 });
      if (req.headers.get("x-api-key") !== "bk_good")
        return Response.json({ type: "about:blank", title: "Unauthenticated", status: 401, code: "unauthenticated", detail: "no key" }, { status: 401, headers: { "content-type": "application/problem+json" } });
      const last = req.headers.get("last-event-id");
      connections.push({ lastEventId: last, agentId: url.searchParams.get("agent_id"), apiKey: req.headers.get("x-api-key"), accept: req.headers.get("accept") });
      const first = connections.length === 1;
      const after = last ? Number(last) : 0;
      const enc = new TextEncoder();
      const stream = new ReadableStream<Uint8Array>({
        async start(c) {
          c.enqueue(enc.encode("retry: 50\n: keepalive\n\n"));
          // The first connection carries two events and drops (one split across chunks); later ones replay the rest and stay open.
          const todo = EVENTS.filter((e) => e.id > after).slice(0, first ? 2 : undefined);
          for (const e of todo) {
            const frame = `id: ${e.id}\nevent: ${e.event}\ndata: ${envelope(e)}\n\n`;
            c.enqueue(enc.encode(frame.slice(0, 10)));
            await Bun.sleep(2);
            c.enqueue(enc.encode(frame.slice(10)));
            c.enqueue(enc.encode(": keepalive\n\n"));
          }
          if (first) c.close();
        },
      });
      return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
    },
  });
});
afterAll(() => server?.stop(true));

test("yields every event in order across a dropped stream, reconnecting with Last-Event-ID", async () => {
  const client = new BrokerClient({ baseUrl: `http://127.0.0.1:${server.port}`, apiKey: "bk_good" });
  const ac = new AbortController();
  const got: BrokerEvent[] = [];
  for await (const ev of client.events({ agent_id: "agt_1", signal: ac.signal })) {
    got.push(ev);
    if (got.length === EVENTS.length) ac.abort();
  }
  expect(got.map((e) => [e.id, e.type])).toEqual(EVENTS.map((e) => [String(e.id), e.event]));
  expect(got[1]!.type === "risk_rejected" && got[1]!.data.failures[0]!.limit).toBe(100);
  expect(got[0]!.type === "order" && got[0]!.data.order.status).toBe("awaiting_signature");
  expect(got.every((e) => e.agent_id === "agt_1" && e.created_at === "2026-11-24T00:00:00Z")).toBe(true);
  expect(connections.slice(0, 2).map((c) => c.lastEventId)).toEqual([null, "2"]);
  expect(connections.every((c) => c.agentId === "agt_1" && c.apiKey === "bk_good" && c.accept === "text/event-stream")).toBe(true);
});

test("resumes from a given lastEventId and filters by type", async () => {
  connections.length = 1; // not the first connection: the server keeps it open
  const client = new BrokerClient({ baseUrl: `http://127.0.0.1:${server.port}`, apiKey: "bk_good" });
  const ac = new AbortController();
  const got: BrokerEvent[] = [];
  for await (const ev of client.events({ lastEventId: "2", types: ["kill", "breaker"], signal: ac.signal })) {
    got.push(ev);
    if (ev.type === "kill") ac.abort();
  }
  expect(got.map((e) => e.type)).toEqual(["breaker", "kill"]);
  expect(connections.at(-1)!.lastEventId).toBe("2");
});

test("an authentication problem is thrown, not retried forever", async () => {
  const client = new BrokerClient({ baseUrl: `http://127.0.0.1:${server.port}`, apiKey: "bk_bad" });
  const it = client.events();
  await expect(it.next()).rejects.toBeInstanceOf(UnauthenticatedError);
});

test("a service that is gone: gives up after maxReconnects", async () => {
  const client = new BrokerClient({ baseUrl: "http://127.0.0.1:1", apiKey: "bk_good" });
  const err = await client.events({ maxReconnects: 2, reconnectDelayMs: 5 }).next().catch((e) => e);
  expect(err.name).toBe("NetworkError");
  expect(err.message).toContain("gave up after 2");
});
