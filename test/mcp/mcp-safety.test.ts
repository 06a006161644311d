/**
 * The MCP server as a model uses it, through the reference clients (1.x @modelcontextprotocol/sdk and
 * 2.x @modelcontextprotocol/client) over stdio and Streamable HTTP, against the live service:
 *
 * - retries after a dropped answer (over HTTP the answer is lost on the way back after the server did
 *   the work; over stdio the client stops waiting): every tool annotated idempotent answers the current
 *   state as a success (sign_and_submit "already submitted", cancel_order "already cancelled",
 *   cancel_all and kill_switch nothing more), and no second order exists;
 * - an order held for approval is signed through MCP after the person's approval and a restart of the
 *   MCP server (the order is read from the API, no memory of the process);
 * - list_markets lists tradable markets only by default, searches the question, answers one line per
 *   market; get_book; cancel_all keeps the agent trading; per-code refusal hints; heartbeat off;
 *   kill_switch's filled list; get_positions reports a missing route clearly;
 * - HTTP mode refuses a non-loopback bind without MCP_HTTP_TOKEN.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { Client as Client1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as Stdio1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as Http1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as Client2, StreamableHTTPClientTransport as Http2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as Stdio2 } from "@modelcontextprotocol/client/stdio";
import { sharedPglite } from "../support/databases.ts";
import { BTC_YES, DEM_NO, DEM_YES, FED_YES } from "../support/payload.ts";
import { serveTestApp, type LiveService } from "../sdk/serve.ts";
import { ROOT, setupAgent, startHttp, structured, text } from "./support.ts";
import { until } from "../support/until.ts";


let live: LiveService;
beforeAll(async () => {
  live = await serveTestApp(await sharedPglite());
});
afterAll(() => live?.stop());

const setup = () => setupAgent(live.url);
const okOf = (r: any) => {
  if (r.isError) throw new Error(text(r));
  return r.structuredContent;
};

interface Session {
  call(name: string, args?: Record<string, unknown>): Promise<any>;
  /** Calls the tool and loses its answer: the server does the work, the client never sees the result. */
  callDropped(name: string, args?: Record<string, unknown>): Promise<void>;
  listTools(): Promise<any[]>;
  close(): Promise<void>;
}
type Connect = (env: Record<string, string>) => Promise<Session>;

/** Over HTTP: a fetch that lets the request reach the server, reads the whole answer, then fails as a dropped connection. */
function droppingFetch() {
  const state = { dropNext: null as string | null };
  const f = (async (input: any, init?: RequestInit) => {
    const body = typeof init?.body === "string" ? init.body : "";
    const res = await fetch(input, init);
    if (state.dropNext && body.includes('"tools/call"') && body.includes(`"name":"${state.dropNext}"`)) {
      state.dropNext = null;
      await res.text(); // the server answered; the answer is lost on the way back
      throw new TypeError("fetch failed: connection reset");
    }
    return res;
  }) as typeof fetch;
  return { f, state };
}

const http = (cls: "1" | "2"): Connect => async (env) => {
  const server = await startHttp(env);
  const { f, state } = droppingFetch();
  const transport = cls === "1" ? new Http1(new URL(server.url), { fetch: f }) : new Http2(new URL(server.url), { fetch: f });
  const client: any = cls === "1" ? new Client1({ name: "model", version: "1.0.0" }) : new Client2({ name: "model", version: "2.0.0" });
  await client.connect(transport);
  return {
    call: (name, args = {}) => client.callTool({ name, arguments: args }),
    callDropped: async (name, args = {}) => {
      state.dropNext = name;
      await expect(client.callTool({ name, arguments: args })).rejects.toThrow();
    },
    listTools: async () => (await client.listTools()).tools,
    close: async () => {
      await client.close().catch(() => undefined);
      server.proc.kill();
      await server.proc.exited;
    },
  };
};

const stdio = (cls: "1" | "2"): Connect => async (env) => {
  const Transport: any = cls === "1" ? Stdio1 : Stdio2;
  const transport = new Transport({ command: process.execPath, args: ["run", "mcp"], env, cwd: ROOT, stderr: "pipe" });
  const client: any = cls === "1" ? new Client1({ name: "model", version: "1.0.0" }) : new Client2({ name: "model", version: "2.0.0" });
  await client.connect(transport);
  // The client gives up waiting at once (a timeout): the request went out, the answer is never read.
  const timeout = { timeout: 1 };
  return {
    call: (name, args = {}) => client.callTool({ name, arguments: args }),
    callDropped: async (name, args = {}) => {
      const p = cls === "1" ? client.callTool({ name, arguments: args }, undefined, timeout) : client.callTool({ name, arguments: args }, timeout);
      await expect(p).rejects.toThrow();
    },
    listTools: async () => (await client.listTools()).tools,
    close: () => client.close(),
  };
};

const VARIANTS: [string, Connect][] = [
  ["1.x client, stdio", stdio("1")],
  ["2.x client, stdio", stdio("2")],
  ["1.x client, Streamable HTTP", http("1")],
  ["2.x client, Streamable HTTP", http("2")],
];

for (const [name, connect] of VARIANTS) {
  describe(`MCP as a model uses it: ${name}`, () => {
    test("retries after dropped answers answer the current state; approval, restart, then sign; markets, book, cancel_all, hints", async () => {
      const s = await setup();
      let m = await connect(s.env);
      try {
        const tools = await m.listTools();
        const byName = Object.fromEntries(tools.map((t: any) => [t.name, t]));
        for (const t of ["cancel_all", "get_book", "get_positions"]) expect(byName[t]).toBeDefined();
        expect(byName.cancel_all.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
        expect(byName.get_book.annotations.readOnlyHint).toBe(true);

        // list_markets: tradable only by default, one line per market, the data once (structured).
        const all = (await s.client.listMarkets({ limit: 200 })).data;
        expect(all.some((x) => !x.accepting_orders || x.closed)).toBe(true);
        const listed = await m.call("list_markets", { limit: 200 });
        const tradable = okOf(listed).markets;
        expect(tradable.length).toBe(all.filter((x) => x.active && !x.closed && x.accepting_orders).length);
        for (const x of tradable) expect(x).toMatchObject({ active: true, closed: false, accepting_orders: true });
        expect(tradable.map((x: any) => x.market_id)).not.toContain(FED_YES);
        const lines = text(listed).split("\n");
        expect(lines.length).toBe(tradable.length + 1);
        expect(text(listed)).not.toContain('"market_id"');
        for (const x of tradable) expect(text(listed)).toContain(`${x.market_id} | ${x.question} [${x.outcome}]`);
        const everything = okOf(await m.call("list_markets", { include_untradable: true, limit: 200 })).markets;
        expect(everything.map((x: any) => x.market_id)).toContain(FED_YES);
        const btc = okOf(await m.call("list_markets", { query: "bitcoin 2027" })).markets;
        expect(btc.map((x: any) => x.market_id)).toContain(BTC_YES);
        for (const x of btc) expect(x.question.toLowerCase()).toContain("bitcoin");

        // get_book: the venue's depth, as the REST route answers it.
        const book = okOf(await m.call("get_book", { market_id: DEM_YES, depth: 3 }));
        const rest = await s.client.getBook(DEM_YES, { depth: 3 });
        const { timestamp: _t1, ...bookLevels } = book;
        const { timestamp: _t2, ...restLevels } = rest;
        expect(bookLevels).toEqual(restLevels);
        expect(Number.isNaN(Date.parse(book.timestamp))).toBe(false);
        expect(book.bids.length).toBeGreaterThan(0);
        expect(Number(book.bids[0].price)).toBeLessThan(Number(book.asks[0].price));

        // sign_and_submit, its answer lost: the retry answers "already submitted"; one order only.
        const good = { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.45 };
        const first = okOf(await m.call("place_intent", good)).order_id;
        await m.callDropped("sign_and_submit", { order_id: first });
        await until("the dropped submit to land", async () => (await s.client.getOrder(first)).status === "open", 10_000);
        const retried = await m.call("sign_and_submit", { order_id: first });
        expect(retried.isError).toBeFalsy();
        expect(structured(retried)).toMatchObject({ order_id: first, status: "open", already_submitted: true });
        expect(text(retried)).toContain("Already submitted");
        expect(text(retried)).not.toMatch(/place_intent|place it again|place a new/i);
        expect((await s.client.listOrders({ agent_id: s.agent.id })).data.map((o) => o.id)).toEqual([first]);

        // cancel_order, its answer lost: the retry answers "already cancelled" as a success.
        await m.callDropped("cancel_order", { order_id: first });
        await until("the dropped cancel to land", async () => (await s.client.getOrder(first)).status === "cancelled", 10_000);
        const recancel = await m.call("cancel_order", { order_id: first });
        expect(recancel.isError).toBeFalsy();
        expect(structured(recancel).order.status).toBe("cancelled");
        expect(text(recancel)).toContain("already cancelled");

        // cancel_all (one market), its answer lost: the retry cancels nothing more; the agent keeps trading.
        const a = okOf(await m.call("place_intent", good)).order_id;
        const b = okOf(await m.call("place_intent", { ...good, market_id: DEM_NO, price: 0.49 })).order_id;
        expect(okOf(await m.call("sign_and_submit", { order_id: a })).status).toBe("open");
        expect(okOf(await m.call("sign_and_submit", { order_id: b })).status).toBe("open");
        await m.callDropped("cancel_all", { market_id: DEM_YES });
        await until("the dropped cancel_all to land", async () => (await s.client.getOrder(a)).status === "cancelled", 10_000);
        const again = okOf(await m.call("cancel_all", { market_id: DEM_YES }));
        expect(again).toMatchObject({ cancelled: [], failed: [], filled: [], breaker: "closed", market_id: DEM_YES });
        expect((await s.client.getOrder(b)).status).toBe("open");
        const whole = okOf(await m.call("cancel_all", {}));
        expect(whole).toMatchObject({ cancelled: [b], failed: [], breaker: "closed", market_id: null });
        expect((await s.client.getAgent(s.agent.id)).breaker.state).toBe("closed");
        const after = okOf(await m.call("place_intent", good)).order_id;
        expect(okOf(await m.call("sign_and_submit", { order_id: after })).status).toBe("open");

        // An order held for a person's approval: sign_and_submit says to wait, not to place again.
        await s.client.updateLimits(s.agent.id, { approval_threshold_usdc: 4 });
        const held = okOf(await m.call("place_intent", { ...good, price: 0.44 }));
        expect(held.status).toBe("pending_approval");
        const early = await m.call("sign_and_submit", { order_id: held.order_id });
        expect(early.isError).toBe(true);
        expect(structured(early).error.code).toBe("pending_approval");
        expect(text(early)).toContain("do not place it again");
        // The person approves; the MCP server restarts; the order is signed from what the API holds.
        expect((await s.client.approveOrder(held.order_id)).status).toBe("awaiting_signature");
        await m.close();
        m = await connect(s.env);
        const signed = await m.call("sign_and_submit", { order_id: held.order_id });
        expect(signed.isError).toBeFalsy();
        expect(structured(signed)).toMatchObject({ order_id: held.order_id, status: "open", already_submitted: false });
        expect((await s.client.getOrder(held.order_id)).status).toBe("open");
        await s.client.updateLimits(s.agent.id, { approval_threshold_usdc: null });

        // Refusal hints per code: another market for a market that takes no orders; a person for a tripped breaker.
        const fed = await m.call("place_intent", { ...good, market_id: FED_YES, price: 0.5 });
        expect(fed.isError).toBe(true);
        expect(structured(fed).error.failures.map((f: any) => f.code)).toContain("market_not_accepting_orders");
        expect(structured(fed).error.needs_person).toBe(false);
        expect(text(fed)).toContain("choose another market");
        await s.client.tripBreaker(s.agent.id);
        const tripped = await m.call("place_intent", good);
        expect(structured(tripped).error.needs_person).toBe(true);
        expect(text(tripped)).toContain("A person must act");
        expect(text(tripped)).not.toMatch(/try again/i);
        await s.client.resume(s.agent.id);

        // heartbeat while off: what to do with this tool, no REST route.
        const beat = await m.call("heartbeat", {});
        expect(beat.isError).toBe(true);
        expect(structured(beat).error.code).toBe("heartbeat_off");
        expect(text(beat)).toContain("interval_s");
        expect(text(beat)).not.toMatch(/\/v1\/|REST|route/);

        // get_positions: this build does not serve the route yet; the tool says so plainly.
        const positions = await m.call("get_positions", {});
        if (positions.isError) {
          expect(structured(positions).error.code).toBe("not_supported");
          expect(text(positions)).toContain("GET /v1/agents/{id}/positions answered 404");
        } else {
          expect(structured(positions).agent_id).toBe(s.agent.id);
        }

        // kill_switch, its answer lost: the retry is a success that changes nothing more; the lists include filled.
        await m.callDropped("kill_switch", { reason: "model retry test" });
        await until("the dropped kill to land", async () => (await s.client.getAgent(s.agent.id)).breaker.state === "tripped", 10_000);
        await until("the dropped kill's cancels", async () => (await s.client.getOrder(after)).status === "cancelled", 10_000);
        const rekill = await m.call("kill_switch", {});
        expect(rekill.isError).toBeFalsy();
        expect(structured(rekill)).toMatchObject({ cancelled: [], filled: [], failed: [] });
        expect(text(rekill)).toContain("had already filled");
      } finally {
        await m.close();
      }
    }, 90_000);
  });
}

test("get_positions calls GET /v1/agents/{id}/positions and reports a 404 of that route clearly", async () => {
  const s = await setup();
  const seen: string[] = [];
  // A recorder in front of the live service: every path the MCP server asks for, passed through untouched.
  const front = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      const u = new URL(req.url);
      seen.push(`${req.method} ${u.pathname}`);
      return fetch(`${live.url}${u.pathname}${u.search}`, { method: req.method, headers: req.headers, body: req.method === "GET" ? undefined : await req.arrayBuffer() });
    },
  });
  const m = await stdio("2")({ ...s.env, BROKER_URL: `http://127.0.0.1:${front.port}` });
  try {
    const r = await m.call("get_positions", {});
    expect(seen).toContain(`GET /v1/agents/${s.agent.id}/positions`);
    const routeServed = (await fetch(`${live.url}/v1/agents/${s.agent.id}/positions`, { headers: { "x-api-key": s.key } })).status !== 404;
    if (routeServed) expect(r.isError).toBeFalsy();
    else {
      expect(r.isError).toBe(true);
      expect(structured(r).error.code).toBe("not_supported");
      expect(text(r)).toContain("404");
    }
  } finally {
    await m.close();
    front.stop(true);
  }
}, 60_000);

test("Streamable HTTP off loopback: refused without MCP_HTTP_TOKEN (exit 1, a message), served with it and only with the bearer", async () => {
  const s = await setup();
  const proc = Bun.spawn([process.execPath, resolve(ROOT, "packages/mcp/src/main.ts"), "--http", "--port", "0", "--host", "0.0.0.0"], { cwd: ROOT, env: s.env, stderr: "pipe", stdout: "ignore" });
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  expect(code).toBe(1);
  expect(err).toContain("MCP_HTTP_TOKEN");
  expect(err).not.toContain(s.pk.slice(2));

  const server = await startHttp({ ...s.env, MCP_HTTP_TOKEN: "a-long-test-token" }, ["--host", "0.0.0.0"]);
  try {
    const url = server.url.replace("0.0.0.0", "127.0.0.1");
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    expect((await fetch(url, { method: "POST", headers, body: JSON.stringify(init) })).status).toBe(401);
    expect((await fetch(url, { method: "POST", headers: { ...headers, authorization: "Bearer wrong" }, body: JSON.stringify(init) })).status).toBe(401);
    const client = new Client1({ name: "test", version: "1.0.0" });
    await client.connect(new Http1(new URL(url), { requestInit: { headers: { authorization: "Bearer a-long-test-token" } } }));
    expect((await client.listTools()).tools.length).toBeGreaterThan(10);
    await client.close();
  } finally {
    server.proc.kill();
    await server.proc.exited;
  }
}, 60_000);
