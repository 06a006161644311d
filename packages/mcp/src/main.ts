#!/usr/bin/env node
/**
 * agent-brokerage-mcp: stdio by default; `--http [--port N] [--host H]` for Streamable HTTP at /mcp.
 * Both entries serve the 2026-07-28 protocol revision and the 2025 revisions from one server factory
 * (serveStdio and createMcpHandler of @modelcontextprotocol/server). Logs go to stderr (stdout is the
 * stdio transport); no secret is ever logged.
 */
import { serve } from "@hono/node-server";
import { parseArgs } from "node:util";
import { BrokerClient, type PayloadIntentAnswer } from "@agent-brokerage/sdk";
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
  // Unsigned orders awaiting sign_and_submit, shared by every server instance of this process.
  const pending = new Map<string, PayloadIntentAnswer>();
  const recentEvents = config.agentId ? new RecentEvents(client, config.agentId).start() : undefined;
  const make = () =>
    createBrokerMcpServer({ client, agentId: config.agentId, signer: config.signer, venueCredentials: config.venueCredentials, pending, recentEvents });

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

  const handler = createMcpHandler(make, { legacy: "stateless", onerror: (err) => log(`MCP request failed: ${err.message}`) });
  const loopback = ["127.0.0.1", "localhost", "::1"].includes(values.host);
  const server = serve(
    {
      hostname: values.host,
      port: Number(values.port),
      fetch: async (request: Request): Promise<Response> => {
        if (new URL(request.url).pathname !== "/mcp") return Response.json({ error: "not found; the MCP endpoint is /mcp" }, { status: 404 });
        // DNS-rebinding protection on a loopback listener; a bearer token when configured.
        const rejected = loopback ? hostHeaderValidationResponse(request, localhostAllowedHostnames()) : undefined;
        if (rejected) return rejected;
        if (config.httpToken && request.headers.get("authorization") !== `Bearer ${config.httpToken}`) {
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

main().catch((err) => {
  log(err instanceof ConfigError ? `configuration: ${err.message}` : `failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
