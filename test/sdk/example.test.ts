/** examples/agent.ts run as a user runs it (`bun examples/agent.ts` with BROKER_URL and BROKER_API_KEY) against the live service. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolve } from "node:path";
import type { Limits } from "../../src/risk/limits.ts";
import { TEST_DEFAULT_LIMITS } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { newOrgClient, serveTestApp, type LiveService } from "./serve.ts";

const ROOT = resolve(import.meta.dir, "../..");
let live: LiveService;
beforeAll(async () => {
  live = await serveTestApp(await sharedPglite());
});
afterAll(() => live?.stop());

test("bun examples/agent.ts: agent, failed check with its failures, approved order signed and submitted, events, kill", async () => {
  const { key, client } = await newOrgClient(live.url);
  const proc = Bun.spawn([process.execPath, "examples/agent.ts"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", BROKER_URL: live.url, BROKER_API_KEY: key },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(out).toContain("dry run refused:");
  expect(out).toMatch(/order_size\/order_too_large: .* \(limit 100, actual 5000\)/);
  expect(out).toContain("price_sanity/price_far_from_mid");
  const agents = (await client.listAgents()).data;
  expect(agents).toHaveLength(1);
  if (code !== 0) throw new Error(`example failed (${code}):\n${out}\n${err}`);
  expect(out).toMatch(/submitted: (open|filled)/);
  expect(out).toMatch(/is (open|filled) \(from the event stream\)/);
  expect(out).toMatch(/killed in \d+ ms: cancelled \d, failed 0, breaker tripped/);
  const orders = (await client.listOrders({ agent_id: agents[0]!.id })).data;
  expect(orders).toHaveLength(1);
  expect(["cancelled", "filled"]).toContain(orders[0]!.status);
  expect(out.trim().endsWith("ok")).toBe(true);
}, 60_000);

test("bun examples/agent.ts above the approval threshold: waits for a person's approval, then signs what was approved", async () => {
  const approvals = await serveTestApp(await sharedPglite(), { defaultLimits: { ...TEST_DEFAULT_LIMITS, approval_threshold_usdc: 1 } as Limits });
  try {
    const { key, client } = await newOrgClient(approvals.url);
    const proc = Bun.spawn([process.execPath, "examples/agent.ts"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", BROKER_URL: approvals.url, BROKER_API_KEY: key },
      stdout: "pipe",
      stderr: "pipe",
    });
    // The person: approves the order once it is pending.
    let approved: string | null = null;
    const person = (async () => {
      for (let i = 0; i < 200 && approved === null; i++) {
        const pending = (await client.listOrders({ status: "pending_approval" })).data;
        if (pending.length) {
          await client.approveOrder(pending[0]!.id, { reason: "looked fine" });
          approved = pending[0]!.id;
        } else await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    await person;
    if (code !== 0) throw new Error(`example failed (${code}):\n${out}\n${err}`);
    expect(approved).not.toBeNull();
    expect(out).toContain(`order ${approved} waits for a person's approval`);
    expect(out).toContain(`approved by a person: order ${approved}`);
    expect(out).toMatch(/submitted: (open|filled)/);
    expect(out.trim().endsWith("ok")).toBe(true);
  } finally {
    await approvals.stop();
  }
}, 60_000);
