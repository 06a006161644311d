/** The SDK built with tsc (ESM + .d.ts) and imported under Node.js, not only Bun, against the live service. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { sharedPglite } from "../support/databases.ts";
import { ADMIN_TOKEN } from "../support/app.ts";
import { DEM_YES } from "../support/payload.ts";
import { serveTestApp, type LiveService } from "./serve.ts";

const ROOT = resolve(import.meta.dir, "../..");
const SDK = resolve(ROOT, "packages/sdk");
const node = Bun.which("node");

let live: LiveService;
beforeAll(async () => {
  live = await serveTestApp(await sharedPglite());
});
afterAll(() => live?.stop());

test("tsc builds ESM JavaScript and declarations into dist, for every entry of the exports map", () => {
  rmSync(resolve(SDK, "dist"), { recursive: true, force: true });
  const build = Bun.spawnSync([resolve(ROOT, "node_modules/.bin/tsc"), "-p", resolve(SDK, "tsconfig.build.json")], { cwd: SDK });
  expect(build.stderr.toString() + build.stdout.toString()).toBe("");
  expect(build.exitCode).toBe(0);
  const pkg = JSON.parse(readFileSync(resolve(SDK, "package.json"), "utf8"));
  expect(pkg.type).toBe("module");
  expect(Object.keys(pkg.dependencies).sort()).toEqual(["eventsource-parser", "viem"]);
  for (const entry of Object.values<any>(pkg.exports)) {
    if (typeof entry === "string") continue;
    expect(existsSync(resolve(SDK, entry.import))).toBe(true);
    expect(existsSync(resolve(SDK, entry.types))).toBe(true);
  }
  // No import of the service's code.
  const js = readFileSync(resolve(SDK, "dist/client.js"), "utf8");
  expect(js).not.toMatch(/\.\.\/(src|actors)\//);
  expect(readFileSync(resolve(SDK, "dist/client.d.ts"), "utf8")).toContain("class BrokerClient");
});

test("imported by package name under Node.js: a rejection as RiskRejectedError, an order placed, signed with viem and submitted", async () => {
  // Never skipped: Node.js is a prerequisite of the project (npm brings Bun, the SDK targets Node.js).
  if (!node) throw new Error("node is not on PATH: install Node.js 20.3 or later (the SDK's engines), then run the tests again");
  // Asynchronous spawn: the service answering it runs in this process.
  const run = Bun.spawn([node!, resolve(import.meta.dir, "node-smoke.mjs")], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", BROKER_URL: live.url, ADMIN_TOKEN, MARKET_ID: DEM_YES },
    stdout: "pipe",
    stderr: "pipe",
    timeout: 50_000,
  });
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  if (code !== 0) throw new Error(`node failed (${code}): ${err}`);
  const r = JSON.parse(out.trim().split("\n").at(-1)!);
  expect(Number(r.node.split(".")[0])).toBeGreaterThanOrEqual(20);
  expect(r.rejected).toContain("order_too_large");
  expect(["open", "filled"]).toContain(r.status);
  expect(r.orderId).toMatch(/^ord_/);
  expect(r.x402).toBe("function");
  expect(r.vector).toBe("ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=");
}, 60_000);
