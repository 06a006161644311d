/**
 * The MCP server driven by the reference MCP clients, the 1.x @modelcontextprotocol/sdk client and
 * the 2.x @modelcontextprotocol/client, over stdio and over Streamable HTTP, against the live service:
 * tools with schemas and annotations, check, place, sign and submit, read, cancel, kill, a risk
 * rejection as isError with every failure, and a service error that leaves the server running.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { Client as Client1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as Stdio1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as Http1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as Client2, StreamableHTTPClientTransport as Http2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as Stdio2 } from "@modelcontextprotocol/client/stdio";
import { BrokerClient } from "../../packages/sdk/src/client.ts";
import { sharedPglite } from "../support/databases.ts";
import { CHECK_NAMES, DEM_YES } from "../support/payload.ts";
import { serveTestApp, type LiveService } from "../sdk/serve.ts";
import { PATH_WITH_BUN, ROOT, setupAgent, startHttp, structured, text } from "./support.ts";

const NODE = Bun.which("node") ?? "node";
const TOOLS = ["list_markets", "get_market", "check_intent", "place_intent", "sign_and_submit", "get_order", "list_orders", "cancel_order", "get_agent", "kill_switch", "heartbeat", "cancel_all", "get_book", "get_positions"];
const READS = ["list_markets", "get_market", "check_intent", "get_order", "list_orders", "get_agent", "get_book", "get_positions"];

interface AnyClient {
  connect(t: any): Promise<void>;
  listTools(): Promise<{ tools: any[] }>;
  callTool(p: { name: string; arguments?: Record<string, unknown> }): Promise<any>;
  readResource(p: { uri: string }): Promise<any>;
  listResources(): Promise<{ resources: any[] }>;
  close(): Promise<void>;
}

let live: LiveService;
beforeAll(async () => {
  live = await serveTestApp(await sharedPglite());
  // The package binary runs from dist: build both packages.
  for (const pkg of ["sdk", "mcp"]) {
    const b = Bun.spawnSync([resolve(ROOT, "node_modules/.bin/tsc"), "-p", "tsconfig.build.json"], { cwd: resolve(ROOT, "packages", pkg) });
    if (b.exitCode !== 0) throw new Error(`build of ${pkg} failed: ${b.stdout}${b.stderr}`);
  }
}, 120_000);
afterAll(() => live?.stop());

const setup = () => setupAgent(live.url);

type Variant = { name: string; protocol: string | null; make: (env: Record<string, string>) => Promise<{ client: AnyClient; transport: any; stop: () => Promise<void>; logs: () => string }> };

/** The 2.x client negotiating the newest revision it and the server share ("auto"), or the plain 2025 handshake ("legacy"). */
type Mode = "auto" | "legacy";
const client2 = (mode: Mode) => new Client2({ name: "test", version: "2.0.0" }, { versionNegotiation: { mode } });

const stdio = (cls: "1" | "2", command: string[], mode: Mode = "auto"): Variant["make"] => async (env) => {
  const Transport = cls === "1" ? Stdio1 : Stdio2;
  const transport = new Transport({ command: command[0]!, args: command.slice(1), env, cwd: ROOT, stderr: "pipe" } as any);
  let logs = "";
  (transport as any).stderr?.on("data", (d: Buffer) => (logs += d.toString()));
  const client = (cls === "1" ? new Client1({ name: "test", version: "1.0.0" }) : client2(mode)) as unknown as AnyClient;
  return { client, transport, stop: () => client.close(), logs: () => logs };
};
const http = (cls: "1" | "2", mode: Mode = "auto"): Variant["make"] => async (env) => {
  const server = await startHttp(env);
  const transport = cls === "1" ? new Http1(new URL(server.url)) : new Http2(new URL(server.url));
  const client = (cls === "1" ? new Client1({ name: "test", version: "1.0.0" }) : client2(mode)) as unknown as AnyClient;
  return {
    client,
    transport,
    stop: async () => {
      await client.close();
      server.proc.kill();
      await server.proc.exited;
    },
    logs: server.stderr,
  };
};

const MODERN = "2026-07-28";
const PREVIOUS = "2025-11-25";
const VARIANTS: Variant[] = [
  { name: "1.x client, stdio, `bun run mcp`", protocol: null, make: stdio("1", [process.execPath, "run", "mcp"]) },
  { name: "2.x client (2026-07-28), stdio, the package binary under Node.js", protocol: MODERN, make: stdio("2", [NODE, resolve(ROOT, "packages/mcp/dist/main.js")]) },
  { name: "2.x client (2025 handshake), stdio", protocol: PREVIOUS, make: stdio("2", [process.execPath, "run", "mcp"], "legacy") },
  { name: "1.x client, Streamable HTTP", protocol: PREVIOUS, make: http("1") },
  { name: "2.x client (2026-07-28), Streamable HTTP", protocol: MODERN, make: http("2") },
];

for (const v of VARIANTS) {
  describe(`MCP: ${v.name}`, () => {
    test("tools, check, place, sign and submit, read, cancel, rejection, service error, kill", async () => {
      const s = await setup();
      const { client, transport, stop, logs } = await v.make(s.env);
      try {
        await client.connect(transport);
        // The revision spoken: the 1.x stdio client does not expose it (its newest is 2025-11-25).
        const negotiated = (client as any).getNegotiatedProtocolVersion?.() ?? (transport as any).protocolVersion ?? null;
        expect(negotiated).toBe(v.protocol);

        // Tools: all fourteen, each with a title, a description, input and output schemas and annotations.
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
        for (const t of tools) {
          expect(t.title ?? t.annotations?.title).toBeTruthy();
          expect(t.description.length).toBeGreaterThan(40);
          expect(t.inputSchema.type).toBe("object");
          expect(t.outputSchema?.type).toBe("object");
          expect(t.annotations).toBeDefined();
          expect(t.annotations.readOnlyHint).toBe(READS.includes(t.name));
          expect(t.annotations.destructiveHint ?? false).toBe(["kill_switch", "cancel_order", "cancel_all"].includes(t.name));
        }
        const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
        expect(byName.place_intent.annotations.idempotentHint).toBe(false);
        expect(byName.kill_switch.annotations.idempotentHint).toBe(true);
        expect(byName.place_intent.inputSchema.required.sort()).toEqual(["market_id", "price", "side", "size_usdc"]);
        expect(byName.place_intent.inputSchema.properties.size_usdc.description).toContain("USDC");

        const markets = await client.callTool({ name: "list_markets", arguments: { limit: 200 } });
        if (markets.isError) throw new Error(text(markets));
        expect(structured(markets).markets.some((m: any) => m.market_id === DEM_YES)).toBe(true);
        expect(structured(await client.callTool({ name: "get_market", arguments: { market_id: DEM_YES } })).market.market_id).toBe(DEM_YES);

        // A dry run that fails: isError with every failure, as the service reports them.
        const bad = { market_id: DEM_YES, side: "buy", size_usdc: 500, price: 0.9 };
        const expected = (await s.client.checkIntent({ ...bad, side: "buy", agent_id: s.agent.id })).risk.failures!;
        expect(expected.length).toBeGreaterThanOrEqual(3);
        const checked = await client.callTool({ name: "check_intent", arguments: bad });
        expect(checked.isError).toBe(true);
        expect(structured(checked).error.failures).toEqual(expected);
        for (const f of expected) expect(text(checked)).toContain(`${f.check}/${f.code}`);
        expect(text(checked)).toContain("limit 100, actual 500");

        // The same intent placed: refused with every failure and the decision id.
        const refused = await client.callTool({ name: "place_intent", arguments: bad });
        expect(refused.isError).toBe(true);
        expect(structured(refused).error.failures).toEqual(expected);
        expect(structured(refused).error.decision_id).toMatch(/^dec_/);
        expect(structured(refused).error.checks.map((c: any) => c.check)).toEqual([...CHECK_NAMES]);

        const good = { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.45 };
        const dry = await client.callTool({ name: "check_intent", arguments: good });
        expect(dry.isError).toBeFalsy();
        expect(structured(dry).approved).toBe(true);

        const placed = await client.callTool({ name: "place_intent", arguments: good });
        expect(placed.isError).toBeFalsy();
        const orderId = structured(placed).order_id;
        expect(structured(placed)).toMatchObject({ mode: "payload", status: "awaiting_signature" });
        expect(structured(placed).unsigned_order.primaryType).toBe("Order");

        const submitted = await client.callTool({ name: "sign_and_submit", arguments: { order_id: orderId } });
        expect(submitted.isError).toBeFalsy();
        expect(structured(submitted)).toMatchObject({ order_id: orderId, status: "open" });
        const again = await client.callTool({ name: "sign_and_submit", arguments: { order_id: orderId } });
        // Nothing more happens, and the repeat says so as a success (the tool is idempotent).
        expect(again.isError).toBeFalsy();
        expect(structured(again)).toMatchObject({ order_id: orderId, status: "open", already_submitted: true });

        const read = await client.callTool({ name: "get_order", arguments: { order_id: orderId } });
        expect(structured(read).order.status).toBe("open");
        const listed = await client.callTool({ name: "list_orders", arguments: { status: "open" } });
        expect(structured(listed).orders.map((o: any) => o.id)).toEqual([orderId]);
        expect(structured(await client.callTool({ name: "get_agent", arguments: {} })).agent.open_orders).toBe(1);

        const limits = await client.readResource({ uri: "broker://agent/limits" });
        expect(JSON.parse(limits.contents[0].text).limits.max_order_usdc).toBe(100);
        const open = await client.readResource({ uri: "broker://agent/orders/open" });
        expect(JSON.parse(open.contents[0].text).orders.map((o: any) => o.id)).toEqual([orderId]);
        const { resources } = await client.listResources();
        expect(resources.map((r) => r.uri).sort()).toEqual(["broker://agent/limits", "broker://agent/orders/open", "broker://events/recent"]);
        const readFeed = async () => JSON.parse((await client.readResource({ uri: "broker://events/recent" })).contents[0].text);
        const isOpenEvent = (e: any) => e.type === "order" && e.data.order.id === orderId && e.data.order.status === "open";
        let feed = await readFeed();
        // Events reach the server's subscription a moment after the change: wait for it (at most 5 s).
        for (let i = 0; i < 50 && !feed.events.some(isOpenEvent); i++) {
          await Bun.sleep(100);
          feed = await readFeed();
        }
        expect(feed.stream).toBe("live");
        expect(feed.events.some(isOpenEvent)).toBe(true);

        // A second order, cancelled.
        const second = structured(await client.callTool({ name: "place_intent", arguments: { ...good, price: 0.44 } })).order_id;
        const cancelled = await client.callTool({ name: "cancel_order", arguments: { order_id: second } });
        expect(structured(cancelled).order.status).toBe("cancelled");

        // Service errors are readable tool errors; the server keeps serving.
        const malformed = await client.callTool({ name: "get_order", arguments: { order_id: "ord_doesnotexist" } });
        expect(malformed.isError).toBe(true);
        expect(structured(malformed).error).toMatchObject({ code: "invalid_request", status: 400 });
        expect(text(malformed)).toContain("/params/id");
        const missing = await client.callTool({ name: "get_order", arguments: { order_id: "ord_00000000000000000000" } });
        expect(missing.isError).toBe(true);
        expect(structured(missing).error).toMatchObject({ code: "not_found", status: 404 });
        expect(text(missing)).toContain("404 not_found");

        const kill = await client.callTool({ name: "kill_switch", arguments: { reason: "mcp test" } });
        expect(kill.isError).toBeFalsy();
        expect(structured(kill).cancelled).toEqual([orderId]);
        expect(structured(kill).filled).toEqual([]);
        expect(structured(kill).failed).toEqual([]);
        expect((await s.client.getOrder(orderId)).status).toBe("cancelled");
        const halted = await client.callTool({ name: "place_intent", arguments: good });
        expect(halted.isError).toBe(true);
        expect(structured(halted).error.failures.map((f: any) => f.code)).toContain("breaker_tripped");
      } finally {
        await stop();
      }
      // The private key and the API key never reach a log line.
      expect(logs()).not.toContain(s.pk.slice(2));
      expect(logs()).not.toContain(s.key);
    }, 60_000);
  });
}

test("guards over MCP: the heartbeat tool turns the dead-man switch on, beats and turns it off; an intent above the approval threshold is pending_approval", async () => {
  const s = await setup();
  await s.client.updateLimits(s.agent.id, { approval_threshold_usdc: 4 });
  const { client, transport, stop } = await stdio("2", [process.execPath, "run", "mcp"])(s.env);
  try {
    await client.connect(transport);
    const tool = (await client.listTools()).tools.find((t) => t.name === "heartbeat");
    expect(tool.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(Object.keys(tool.inputSchema.properties).sort()).toEqual(["agent_id", "interval_s", "off"]);
    expect(tool.inputSchema.properties.interval_s).toMatchObject({ minimum: 5, maximum: 3600 });

    const on = await client.callTool({ name: "heartbeat", arguments: { interval_s: 60 } });
    expect(on.isError).toBeFalsy();
    expect(structured(on)).toMatchObject({ agent_id: s.agent.id, heartbeat: { interval_s: 60 } });
    expect(text(on)).toContain(structured(on).heartbeat.deadline_at);
    expect((await s.client.getAgent(s.agent.id)).heartbeat?.interval_s).toBe(60);

    await Bun.sleep(5);
    const beat = await client.callTool({ name: "heartbeat", arguments: {} });
    expect(beat.isError).toBeFalsy();
    expect(Date.parse(structured(beat).heartbeat.deadline_at)).toBeGreaterThan(Date.parse(structured(on).heartbeat.deadline_at));
    expect(structured(beat).heartbeat.last_at).toBe((await s.client.getAgent(s.agent.id)).heartbeat?.last_at);

    const off = await client.callTool({ name: "heartbeat", arguments: { off: true } });
    expect(structured(off)).toEqual({ agent_id: s.agent.id, heartbeat: null });
    const lone = await client.callTool({ name: "heartbeat", arguments: {} });
    expect(lone.isError).toBe(true);
    expect(structured(lone).error).toMatchObject({ code: "heartbeat_off" });
    expect(text(lone)).not.toMatch(/\/v1\/|REST/);

    // Above approval_threshold_usdc: reserved, a person decides; no unsigned order to sign yet.
    const placed = await client.callTool({ name: "place_intent", arguments: { market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.45 } });
    expect(placed.isError).toBeFalsy();
    expect(structured(placed)).toMatchObject({ mode: "payload", status: "pending_approval" });
    expect(structured(placed).unsigned_order).toBeUndefined();
    expect(structured(placed).next_step).toContain(structured(placed).approval_deadline);
    expect((await s.client.getOrder(structured(placed).order_id)).status).toBe("pending_approval");
  } finally {
    await stop();
  }
}, 60_000);

test("a bad configuration stops the server with a message naming the variable and no secret", async () => {
  const proc = Bun.spawn([process.execPath, resolve(ROOT, "packages/mcp/src/main.ts")], {
    cwd: ROOT,
    env: { PATH: PATH_WITH_BUN, BROKER_URL: live.url, BROKER_API_KEY: "bk_x", BROKER_PRIVATE_KEY: "0x1234secret" },
    stderr: "pipe",
    stdout: "pipe",
  });
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  expect(code).toBe(1);
  expect(err).toContain("BROKER_PRIVATE_KEY");
  expect(err).not.toContain("1234secret");
});

test("Streamable HTTP with MCP_HTTP_TOKEN: refused without the bearer token, served with it; other paths 404", async () => {
  const s = await setup();
  const server = await startHttp({ ...s.env, MCP_HTTP_TOKEN: "t0ken-for-test" });
  try {
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const bare = await fetch(server.url, { method: "POST", headers, body: JSON.stringify(init) });
    expect(bare.status).toBe(401);
    expect((await fetch(server.url.replace("/mcp", "/other"), { method: "POST", headers, body: "{}" })).status).toBe(404);
    const client = new Client1({ name: "test", version: "1.0.0" });
    await client.connect(new Http1(new URL(server.url), { requestInit: { headers: { authorization: "Bearer t0ken-for-test" } } }));
    expect((await client.listTools()).tools).toHaveLength(TOOLS.length);
    await client.close();
  } finally {
    server.proc.kill();
    await server.proc.exited;
  }
  expect(server.stderr()).not.toContain("t0ken-for-test");
});
