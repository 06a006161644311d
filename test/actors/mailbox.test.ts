import { describe, expect, test } from "bun:test";
import { Mailbox } from "../../actors/mailbox.ts";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe("Mailbox", () => {
  test("runs many concurrent async messages in the order they were sent, one at a time", async () => {
    const mailbox = new Mailbox();
    const started: number[] = [];
    const finished: number[] = [];
    let running = 0;
    let maxRunning = 0;
    const n = 100;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        mailbox.send(async () => {
          running++;
          maxRunning = Math.max(maxRunning, running);
          started.push(i);
          // Varying delays: later messages are often faster, so any overlap would reorder them.
          const delay = (n - i) % 7;
          if (delay > 0) await sleep(delay);
          else await Promise.resolve();
          finished.push(i);
          running--;
          return i * 2;
        }),
      ),
    );
    const expected = Array.from({ length: n }, (_, i) => i);
    expect(started).toEqual(expected);
    expect(finished).toEqual(expected);
    expect(results).toEqual(expected.map((i) => i * 2));
    expect(maxRunning).toBe(1);
  });

  test("a message sent from inside another runs after it, never nested", async () => {
    const mailbox = new Mailbox();
    const events: string[] = [];
    let inner: Promise<void> | undefined;
    await mailbox.send(async () => {
      events.push("outer start");
      inner = mailbox.send(() => {
        events.push("inner");
      });
      await sleep(5);
      events.push("outer end");
    });
    await inner;
    expect(events).toEqual(["outer start", "outer end", "inner"]);
  });

  test("synchronous messages also run one at a time and return their value", async () => {
    const mailbox = new Mailbox();
    const order: number[] = [];
    const values = await Promise.all([1, 2, 3].map((v) => mailbox.send(() => (order.push(v), v + 10))));
    expect(values).toEqual([11, 12, 13]);
    expect(order).toEqual([1, 2, 3]);
  });

  test("a throwing message rejects only its sender; the messages behind it still run", async () => {
    const mailbox = new Mailbox();
    const ran: string[] = [];
    const a = mailbox.send(async () => {
      await sleep(2);
      ran.push("a");
      return "a";
    });
    const b = mailbox.send(async () => {
      ran.push("b");
      throw new Error("boom");
    });
    const c = mailbox.send(() => {
      ran.push("c");
      throw new TypeError("sync boom");
    });
    const d = mailbox.send(async () => {
      await sleep(1);
      ran.push("d");
      return "d";
    });
    const settled = await Promise.allSettled([a, b, c, d]);
    expect(settled[0]).toEqual({ status: "fulfilled", value: "a" });
    expect(settled[1].status).toBe("rejected");
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(Error);
    expect((settled[1] as PromiseRejectedResult).reason.message).toBe("boom");
    expect(settled[2].status).toBe("rejected");
    expect((settled[2] as PromiseRejectedResult).reason).toBeInstanceOf(TypeError);
    expect(settled[3]).toEqual({ status: "fulfilled", value: "d" });
    expect(ran).toEqual(["a", "b", "c", "d"]);
    // And the mailbox keeps working afterwards.
    expect(await mailbox.send(() => 42)).toBe(42);
    expect(mailbox.idle).toBe(true);
  });

  test("idle, pending and idleFor follow the queue", async () => {
    const mailbox = new Mailbox();
    expect(mailbox.idle).toBe(true);
    expect(mailbox.pending).toBe(0);
    // Once the last sender has its answer, the mailbox is already idle.
    expect(await mailbox.send(async () => "only")).toBe("only");
    expect(mailbox.idle).toBe(true);
    expect(mailbox.pending).toBe(0);
    expect(mailbox.idleFor(Date.now())).toBeLessThan(50);
    const now = Date.now();
    expect(mailbox.idleFor(now + 5000)).toBeGreaterThanOrEqual(5000);

    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = mailbox.send(() => gate);
    const second = mailbox.send(() => "second");
    const third = mailbox.send(() => "third");
    expect(mailbox.idle).toBe(false);
    expect(mailbox.pending).toBe(3);
    // While busy, it has not been idle at all, however late "now" is.
    expect(mailbox.idleFor(Date.now() + 60_000)).toBe(0);

    await sleep(5);
    expect(mailbox.pending).toBe(3);
    release();
    await Promise.all([first, second, third]);
    expect(mailbox.idle).toBe(true);
    expect(mailbox.pending).toBe(0);

    const finishedAt = Date.now();
    const idle = mailbox.idleFor(finishedAt + 1000);
    // Counted from when the last message finished, not from creation.
    expect(idle).toBeGreaterThanOrEqual(1000);
    expect(idle).toBeLessThan(1000 + 50);
    expect(mailbox.idleFor(finishedAt)).toBeLessThan(50);
  });
});
