/**
 * The SDK and the MCP server as a user gets them: `.ci/packages.sh` packs both with npm, installs the
 * tarballs with `npm install --engine-strict` into a fresh directory, starts the service from this
 * checkout on a fresh DATA_DIR (PGlite, first key from DATA_DIR/initial-api-key), runs
 * test/packages/consumer.mjs with node (agent, intent, sign, submit, events, kill), type-checks it with
 * that directory's tsc, and lists the installed MCP binary's tools with the reference MCP client.
 * Needs the npm registry (as `bun install` does).
 */
import { expect, test } from "bun:test";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

test("npm pack → npm install in an empty directory → node script, tsc and MCP tools against the running service", async () => {
  const run = Bun.spawn(["bash", resolve(ROOT, ".ci/packages.sh")], { cwd: ROOT, env: { ...process.env, BUN: process.execPath }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  const lines = out.trim().split("\n");
  const failedChecks = lines.filter((l) => l.startsWith("packages: FAILED"));
  if (code !== 0 || failedChecks.length) throw new Error(`.ci/packages.sh failed (${code}):\n${out}\n${err}`);
  expect(lines.at(-1)).toBe("packages: 9 passed, 0 failed");

  const consumer = JSON.parse(lines.find((l) => l.startsWith("consumer-result: "))!.slice("consumer-result: ".length));
  expect(consumer.agent_id).toMatch(/^agt_/);
  expect(consumer.refused).toContain("order_too_large");
  expect(["open", "filled"]).toContain(consumer.submitted);
  expect(consumer.events.at(-1)).toBeOneOf(["open", "filled"]);
  expect(consumer.kill).toEqual({ cancelled: consumer.submitted === "open" ? [consumer.order_id] : [], failed: [], breaker: "tripped" });

  const mcp = JSON.parse(lines.find((l) => l.startsWith("mcp-result: "))!.slice("mcp-result: ".length));
  expect(mcp.server.name).toBe("agent-brokerage");
  expect(mcp.tools).toEqual(expect.arrayContaining(["list_markets", "place_intent", "sign_and_submit", "kill_switch"]));
  expect(mcp.list_markets_error).toBe(false);
}, 180_000);
