import { afterEach, describe, expect, test } from "bun:test";
import { ActorRegistry, type Evictable } from "../../actors/registry.ts";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

class FakeActor implements Evictable {
  static made = 0;
  readonly serial = ++FakeActor.made;
  lastUsed = Date.now();
  evictable = true;
  evicted = false;
  constructor(readonly id: string) {}
  canEvict(now: number, idleMs: number): boolean {
    return this.evictable && now - this.lastUsed >= idleMs;
  }
  onEvict(): void {
    this.evicted = true;
  }
}

const registries: ActorRegistry<FakeActor>[] = [];
afterEach(() => {
  for (const r of registries.splice(0)) r.stop();
});

function makeRegistry(opts: { idleMs?: number; sweepEveryMs?: number; known?: Set<string>; delayMs?: number } = {}) {
  const calls: string[] = [];
  const sizes: number[] = [];
  const known = opts.known ?? new Set(["a", "b", "c"]);
  const registry = new ActorRegistry<FakeActor>({
    idleMs: opts.idleMs ?? 1000,
    sweepEveryMs: opts.sweepEveryMs ?? 0,
    activate: async (id) => {
      calls.push(id);
      await sleep(opts.delayMs ?? 5);
      return known.has(id) ? new FakeActor(id) : null;
    },
    onSizeChange: (n) => sizes.push(n),
  });
  registries.push(registry);
  return { registry, calls, sizes, known };
}

describe("ActorRegistry", () => {
  test("activates an actor on first use and reuses it afterwards", async () => {
    const { registry, calls, sizes } = makeRegistry();
    expect(registry.size).toBe(0);
    expect(registry.peek("a")).toBeUndefined();
    const a = await registry.get("a");
    expect(a).toBeInstanceOf(FakeActor);
    expect(a!.id).toBe("a");
    expect(calls).toEqual(["a"]);
    expect(registry.size).toBe(1);
    expect(registry.peek("a")).toBe(a!);
    expect(sizes).toEqual([1]);
    const again = await registry.get("a");
    expect(again).toBe(a);
    expect(calls).toEqual(["a"]);
    expect(registry.activationCount).toBe(1);
  });

  test("50 concurrent get(id) calls activate once and all receive the same instance", async () => {
    const { registry, calls } = makeRegistry({ delayMs: 20 });
    const got = await Promise.all(Array.from({ length: 50 }, () => registry.get("b")));
    expect(calls).toEqual(["b"]);
    expect(registry.activationCount).toBe(1);
    expect(registry.size).toBe(1);
    const first = got[0];
    expect(first).not.toBeNull();
    for (const g of got) expect(g).toBe(first);
  });

  test("concurrent calls for different ids activate each id once", async () => {
    const { registry, calls } = makeRegistry({ delayMs: 10 });
    const got = await Promise.all(["a", "b", "c", "a", "b", "c", "a"].map((id) => registry.get(id)));
    expect([...calls].sort()).toEqual(["a", "b", "c"]);
    expect(got[0]).toBe(got[3]);
    expect(got[0]).toBe(got[6]);
    expect(got[1]).toBe(got[4]);
    expect(got[0]).not.toBe(got[1]);
    expect(registry.size).toBe(3);
  });

  test("an unknown id answers null and is not cached as live", async () => {
    const { registry, calls, known } = makeRegistry();
    const both = await Promise.all([registry.get("nope"), registry.get("nope")]);
    expect(both).toEqual([null, null]);
    expect(calls).toEqual(["nope"]);
    expect(registry.size).toBe(0);
    expect(registry.peek("nope")).toBeUndefined();
    expect(registry.activationCount).toBe(0);
    // The next lookup asks again (so an agent created later is found).
    expect(await registry.get("nope")).toBeNull();
    expect(calls).toEqual(["nope", "nope"]);
    known.add("nope");
    const found = await registry.get("nope");
    expect(found?.id).toBe("nope");
    expect(registry.size).toBe(1);
  });

  test("a failed activation rejects its callers and is not cached", async () => {
    let fail = true;
    let calls = 0;
    const registry = new ActorRegistry<FakeActor>({
      idleMs: 1000,
      sweepEveryMs: 0,
      activate: async (id) => {
        calls++;
        await sleep(2);
        if (fail) throw new Error("database down");
        return new FakeActor(id);
      },
    });
    registries.push(registry);
    const settled = await Promise.allSettled([registry.get("x"), registry.get("x")]);
    expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected"]);
    expect(calls).toBe(1);
    expect(registry.size).toBe(0);
    fail = false;
    const x = await registry.get("x");
    expect(x?.id).toBe("x");
    expect(calls).toBe(2);
  });

  test("sweep(now) evicts idle actors only, and keeps those that cannot be evicted", async () => {
    const { registry, sizes } = makeRegistry({ idleMs: 1000 });
    const [a, b, c] = await Promise.all(["a", "b", "c"].map((id) => registry.get(id)));
    const t0 = Date.now();
    a!.lastUsed = t0 - 5000; // idle long enough
    b!.lastUsed = t0 - 5000;
    b!.evictable = false; // busy: canEvict false
    c!.lastUsed = t0; // recently used
    expect(registry.sweep(t0 + 500)).toBe(1);
    expect(registry.peek("a")).toBeUndefined();
    expect(a!.evicted).toBe(true);
    expect(registry.peek("b")).toBe(b!);
    expect(b!.evicted).toBe(false);
    expect(registry.peek("c")).toBe(c!);
    expect(c!.evicted).toBe(false);
    expect(registry.size).toBe(2);
    expect(sizes[sizes.length - 1]).toBe(2);

    // Nothing more to drop at the same instant.
    expect(registry.sweep(t0 + 500)).toBe(0);
    // Later, c has been idle long enough too; b still cannot go.
    expect(registry.sweep(t0 + 2000)).toBe(1);
    expect(registry.peek("c")).toBeUndefined();
    expect(registry.peek("b")).toBe(b!);
    b!.evictable = true;
    expect(registry.sweep(t0 + 2000)).toBe(1);
    expect(registry.size).toBe(0);
    expect(sizes[sizes.length - 1]).toBe(0);
  });

  test("re-activation after eviction gives a new instance", async () => {
    const { registry, calls } = makeRegistry({ idleMs: 10 });
    const first = await registry.get("a");
    first!.lastUsed = 0;
    expect(registry.sweep(Date.now())).toBe(1);
    const second = await registry.get("a");
    expect(second).not.toBeNull();
    expect(second).not.toBe(first);
    expect(second!.serial).not.toBe(first!.serial);
    expect(calls).toEqual(["a", "a"]);
    expect(registry.activationCount).toBe(2);
    expect(registry.peek("a")).toBe(second!);
  });

  test("the timer sweeps idle actors by itself, and stop() ends it", async () => {
    const { registry } = makeRegistry({ idleMs: 30, sweepEveryMs: 10, delayMs: 0 });
    const a = await registry.get("a");
    const b = await registry.get("b");
    b!.evictable = false;
    expect(registry.size).toBe(2);
    const deadline = Date.now() + 2000;
    while (registry.peek("a") && Date.now() < deadline) await sleep(10);
    expect(registry.peek("a")).toBeUndefined();
    expect(a!.evicted).toBe(true);
    expect(registry.peek("b")).toBe(b!);

    registry.stop();
    b!.evictable = true;
    await sleep(80);
    // No timer any more: b stays until swept by hand.
    expect(registry.peek("b")).toBe(b!);
    expect(registry.sweep()).toBe(1);
    expect(registry.size).toBe(0);
  });
});

describe("ActorRegistry under a lease port", () => {
  /** A port whose leases the test marks lost while the agent loads (a stalled event loop past the TTL). */
  function leased(lostDuringLoad: number) {
    const given: { agentId: string; epoch: number; lost: boolean }[] = [];
    const port = {
      instanceId: "me",
      acquire: async (agentId: string) => {
        const l = { agentId, epoch: 7, lost: false };
        given.push(l);
        return l;
      },
      release: async (l: { lost: boolean }) => {
        l.lost = true;
      },
      setHandlers: () => {},
    };
    const activated: FakeActor[] = [];
    const registry = new ActorRegistry<FakeActor>({
      idleMs: 1000,
      sweepEveryMs: 0,
      lease: { port: port as any, acquireWaitMs: 100, handoffMaxMs: 100 },
      activate: async (id) => {
        await sleep(2);
        if (given.length <= lostDuringLoad) given.at(-1)!.lost = true;
        const a = new FakeActor(id);
        activated.push(a);
        return a;
      },
    });
    registries.push(registry);
    return { registry, given, activated };
  }

  test("a lease lost while the agent loaded is asked for again once: the agent loads under the new lease", async () => {
    const { registry, given, activated } = leased(1);
    const a = await registry.get("a");
    expect(given.length).toBe(2);
    expect(activated.length).toBe(2);
    expect(a).toBe(activated[1]!);
    expect(activated[0]!.evicted).toBe(true);
    expect(registry.leaseOf("a")).toBe(given[1] as any);
    expect(registry.peek("a")).toBe(a!);
  });

  test("lost again on the second load: the request fails (lease unavailable), nothing is kept", async () => {
    const { registry, given } = leased(2);
    await expect(registry.get("a")).rejects.toThrow();
    expect(given.length).toBe(2);
    expect(registry.peek("a")).toBeUndefined();
  });
});
