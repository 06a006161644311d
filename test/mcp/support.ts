/**
 * What the MCP suites share: a fresh org and agent whose wallet key the MCP server gets as
 * BROKER_PRIVATE_KEY, the server started with --http on a free port, and the readers of a tool's result.
 */
import { expect } from "bun:test";
import { dirname, resolve } from "node:path";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { newOrgClient } from "../sdk/serve.ts";

export const ROOT = resolve(import.meta.dir, "../..");
/** Children find this very bun first (`bun run mcp` calls bun again). */
export const PATH_WITH_BUN = `${dirname(process.execPath)}:${process.env.PATH ?? ""}`;

/** A fresh org and agent on the live service at `url`, and the MCP server's environment for it. */
export async function setupAgent(url: string) {
  const { client, key } = await newOrgClient(url);
  const pk = generatePrivateKey();
  const agent = await client.createAgent({ wallet_address: privateKeyToAccount(pk).address });
  const env = { PATH: PATH_WITH_BUN, HOME: process.env.HOME ?? "/tmp", BROKER_URL: url, BROKER_API_KEY: key, BROKER_AGENT_ID: agent.id, BROKER_PRIVATE_KEY: pk };
  return { client, key, pk, agent, env };
}

/** Starts the server with --http on a free port (and `args`) and answers its URL and process. */
export async function startHttp(env: Record<string, string>, args: string[] = []) {
  const proc = Bun.spawn([process.execPath, resolve(ROOT, "packages/mcp/src/main.ts"), "--http", "--port", "0", ...args], { cwd: ROOT, env, stderr: "pipe", stdout: "ignore" });
  const reader = proc.stderr.getReader();
  let buf = "";
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += new TextDecoder().decode(value);
    const m = buf.match(/on (http:\/\/[^ ]+:\d+\/mcp)/);
    if (m) {
      reader.releaseLock();
      return { url: m[1]!, proc, stderr: () => buf };
    }
  }
  proc.kill();
  throw new Error(`the MCP server did not start: ${buf}`);
}

/** A success's structured content, or an error result's {"error": ...} JSON block. */
export const structured = (r: any): any => {
  if (!r.isError) return r.structuredContent;
  expect(r.structuredContent).toBeUndefined();
  return JSON.parse((r.content as any[]).find((c) => c.text.startsWith('{"error"')).text);
};

/** A result's text blocks, joined. */
export const text = (r: any) => (r.content as any[]).map((c) => c.text).join("\n");
