#!/usr/bin/env node
/**
 * agent-brokerage-mcp: stdio by default; `--http [--port N] [--host H]` for Streamable HTTP at /mcp.
 * Both entries serve the 2026-07-28 protocol revision and the 2025 revisions from one server factory
 * (serveStdio and createMcpHandler of @modelcontextprotocol/server). Logs go to stderr (stdout is the
 * stdio transport); no secret is ever logged.
 */
import { serve } from "@hono/node-server";
import { createHash, timingSafeEqual } from "node:crypto";
import { parseArgs } from "node:util";
import { BrokerClient } from "@agent-brokerage/sdk";
import { createMcpHandler, hostHeaderValidationResponse, localhostAllowedHostnames } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { ConfigError, loadMcpConfig } from "./config.js";
import { RecentEvents } from "./recent-events.js";
import { createBrokerMcpServer } from "./server.js";

const log = (msg: string) => process.stderr.write(`${JSON.stringify({ at: new Date().toISOString(), msg })}\n`);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { http: { type: "boolean", default: false }, port: { type: "string", default: "3333" }, host: { type: "string", default: "127.0.0.1" } },
  });
  const config = loadMcpConfig();
  const client = new BrokerClient({ baseUrl: config.brokerUrl, apiKey: config.apiKey });
  const recentEvents = config.agentId ? new RecentEvents(client, config.agentId).start() : undefined;
  const make = () =>
    createBrokerMcpServer({ client, agentId: config.agentId, signer: config.signer, venueCredentials: config.venueCredentials, recentEvents });

  if (!values.http) {
    serveStdio(make);
    // The client closing stdin ends the session: stop the background event subscription too.
    process.stdin.on("close", () => {
      recentEvents?.close();
      setTimeout(() => process.exit(0), 100).unref();
    });
    log(`agent-brokerage MCP server on stdio for ${config.brokerUrl}${config.signer ? " with a local signer" : ""}`);
    return;
  }

  const loopback = ["127.0.0.1", "localhost", "::1"].includes(values.host);
  // Anyone who reaches the port could trade with this server's API key and signer: a listener other
  // than loopback needs a bearer token (docs/mcp.md#streamable-http).
  if (!loopback && !config.httpToken) {
    log(`configuration: refusing to listen on ${values.host} without MCP_HTTP_TOKEN (anyone reaching the port could trade); set MCP_HTTP_TOKEN or bind to 127.0.0.1`);
    process.exit(1);
  }
  const handler = createMcpHandler(make, { legacy: "stateless", onerror: (err) => log(`MCP request failed: ${err.message}`) });
  const server = serve(
    {
      hostname: values.host,
      port: Number(values.port),
      fetch: async (request: Request): Promise<Response> => {
        if (new URL(request.url).pathname !== "/mcp") return Response.json({ error: "not found; the MCP endpoint is /mcp" }, { status: 404 });
        // DNS-rebinding protection on a loopback listener; a bearer token when configured.
        const rejected = loopback ? hostHeaderValidationResponse(request, localhostAllowedHostnames()) : undefined;
        if (rejected) return rejected;
        if (config.httpToken && !sameSecret(request.headers.get("authorization") ?? "", `Bearer ${config.httpToken}`)) {
          return Response.json({ error: "unauthorized" }, { status: 401, headers: { "www-authenticate": "Bearer" } });
        }
        return handler.fetch(request);
      },
    },
    (info) => log(`agent-brokerage MCP server on http://${values.host}:${info.port}/mcp for ${config.brokerUrl}`),
  );
  const stop = () => {
    recentEvents?.close();
    server.close(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

/** Compares without leaking, through timing, how much of the token a caller guessed. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (v: string) => createHash("sha256").update(v).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

main().catch((err) => {
  log(err instanceof ConfigError ? `configuration: ${err.message}` : `failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
