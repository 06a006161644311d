/**
 * Starts the MCP server's binary as installed from its npm tarball (argv[2], e.g.
 * <dir>/node_modules/.bin/agent-brokerage-mcp) over stdio with the reference MCP client
 * (@modelcontextprotocol/sdk, a devDependency of this repository), lists its tools and calls
 * `list_markets` against the service at BROKER_URL. Prints one JSON line; exits non-zero on failure.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const bin = process.argv[2];
if (!bin) throw new Error("usage: node mcp-tools.mjs <path of agent-brokerage-mcp>");
const transport = new StdioClientTransport({
  command: bin,
  env: { PATH: process.env.PATH ?? "", BROKER_URL: process.env.BROKER_URL ?? "", BROKER_API_KEY: process.env.BROKER_API_KEY ?? "" },
  stderr: "inherit",
});
const client = new Client({ name: "package-check", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const markets = await client.callTool({ name: "list_markets", arguments: {} });
console.log(
  JSON.stringify({
    server: client.getServerVersion(),
    tools: tools.map((t) => t.name).sort(),
    list_markets_error: markets.isError === true,
  }),
);
await client.close();
