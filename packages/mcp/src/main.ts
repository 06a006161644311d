#!/usr/bin/env node
/**
 * agent-brokerage-mcp: stdio by default; `--http [--port N] [--host H]` for Streamable HTTP at /mcp.
 * Logs go to stderr (stdout is the stdio transport); no secret is ever logged.
 */
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { BrokerClient, type PayloadIntentAnswer } from "@agent-brokerage/sdk";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ConfigError, loadMcpConfig } from "./config.js";
import { createBrokerMcpServer } from "./server.js";

const log = (msg: string) => process.stderr.write(`${JSON.stringify({ at: new Date().toISOString(), msg })}\n`);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { http: { type: "boolean", default: false }, port: { type: "string", default: "3333" }, host: { type: "string", default: "127.0.0.1" } },
  });
  const config = loadMcpConfig();
  const client = new BrokerClient({ baseUrl: config.brokerUrl, apiKey: config.apiKey });
  const pending = new Map<string, PayloadIntentAnswer>();
  const make = () => createBrokerMcpServer({ client, agentId: config.agentId, signer: config.signer, venueCredentials: config.venueCredentials, pending });

  if (!values.http) {
    await make().connect(new StdioServerTransport());
    log(`agent-brokerage MCP server on stdio for ${config.brokerUrl}${config.signer ? " with a local signer" : ""}`);
    return;
  }

  // Stateless Streamable HTTP: a server and transport per request; the unsigned orders are shared.
  const http = createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/mcp") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found; the MCP endpoint is /mcp" }));
      return;
    }
    if (config.httpToken && req.headers.authorization !== `Bearer ${config.httpToken}`) {
      res.writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" }).end(JSON.stringify({ error: "unauthorized" }));
      return;
    }
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST", "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null }));
      return;
    }
    const server = make();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } catch (err) {
      log(`MCP request failed: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32603, message: "Internal error" }, id: null }));
    }
  });
  const port = Number(values.port);
  http.listen(port, values.host, () => {
    const addr = http.address();
    const actual = typeof addr === "object" && addr ? addr.port : port;
    log(`agent-brokerage MCP server on http://${values.host}:${actual}/mcp for ${config.brokerUrl}`);
  });
  const stop = () => http.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((err) => {
  log(err instanceof ConfigError ? `configuration: ${err.message}` : `failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
