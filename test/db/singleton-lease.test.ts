/**
 * The cluster-wide jobs' one way of asking for their lease (src/db/singleton-lease.ts): `gain` once when
 * the lease is taken, `lose` once when it is no longer held, nothing in between, nothing after the stop;
 * a failed acquire (the database unreachable) counts as not held. The lease itself across real
 * instances: test/venue-truth/user-channel-cluster.test.ts (job:user_channel taken over after a SIGKILL).
 */
import { expect, test } from "bun:test";
import type { AgentLease } from "../../actors/lease-port.ts";
import { holdsSingleton, watchSingleton } from "../../src/db/singleton-lease.ts";

const lease = { agentId: "job:webhooks", epoch: 1 } as AgentLease;

test("watchSingleton: gain when taken, lose when lost, once each; an error is not held; nothing after the stop", async () => {
  const answers: ("held" | "free" | "error")[] = ["free", "held", "held", "error", "held", "free", "held"];
  const asked: string[] = [];
  const leases = {
    acquire: async (id: string) => {
      asked.push(id);
      const a = answers.shift() ?? "held";
      if (a === "error") throw new Error("database unreachable");
      return a === "held" ? lease : null;
    },
  };
  const seen: string[] = [];
  const stop = watchSingleton(leases, "webhooks", 5, { gain: () => seen.push("gain"), lose: () => seen.push("lose") });
  while (answers.length > 0) await Bun.sleep(5);
  await Bun.sleep(20);
  stop();
  const after = seen.length;
  await Bun.sleep(30);
  expect(asked.every((id) => id === "job:webhooks")).toBe(true);
  // free, held (gain), held, error (lose), held (gain), free (lose), held (gain)
  expect(seen).toEqual(["gain", "lose", "gain", "lose", "gain"]);
  expect(seen.length).toBe(after);
});

test("holdsSingleton asks without waiting or asking the owner, and answers false on an error", async () => {
  const opts: unknown[] = [];
  expect(await holdsSingleton({ acquire: async (_id, o) => (opts.push(o), lease) }, "prune_events")).toBe(true);
  expect(await holdsSingleton({ acquire: async () => null }, "prune_events")).toBe(false);
  expect(await holdsSingleton({ acquire: async () => Promise.reject(new Error("x")) }, "prune_events")).toBe(false);
  expect(opts).toEqual([{ waitMs: 0, ask: false }]);
});
