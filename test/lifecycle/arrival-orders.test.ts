/**
 * A trade counts once whatever reports it and in whatever order (issue #22): the venue's user channel
 * (MATCHED with a trade id and no transaction, then MINED naming it), its REST catch-up, the chain's
 * `OrderFilled` log (transaction and log index, no trade id) and the placement's answer (the trades it
 * names), each handed to the venue report sink as the sources hand them, in every order of arrival.
 * After every report the order counts the trade once (filled shares and USDC), lists one fill, and
 * the agent's position agrees with it; once all are in, the fill carries every name. Two trades of
 * the same size (the rule's one ambiguity), a trade FAILED, a reorganisation and a trade mined again
 * in another transaction are covered too. PGlite and, with TEST_DATABASE_URL, PostgreSQL.
 */
import { beforeAll, expect, test } from "bun:test";
import type { FillReport, FillRevertedReport, VenueReport } from "../../src/domain/venue-report.ts";
import { createTestApp, type TestApp, type TestResponse } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { expectProblem, getOrder, newTrader, postIntent, sign, submitSigned, type Trader } from "../support/payload.ts";

/** Every order of `xs`. */
function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [[...xs]];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}

/** A deterministic shuffle (mulberry32), so a failing order of arrival can be run again. */
function sample<T>(all: readonly T[][], n: number, seed: number): T[][] {
  let a = seed >>> 0;
  const rnd = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pool = [...all];
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, n);
}

const TX1 = `0x${"a1".repeat(32)}` as const;
const TX2 = `0x${"b2".repeat(32)}` as const;
const TX3 = `0x${"c3".repeat(32)}` as const;
/** One trade of the resting buy (0.47): 4 shares for 1.88 USDC. */
const S = 4_000_000n;
const U = 1_880_000n;

describeEachDatabase("a trade counts once in every order of arrival", (_kind, database) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(await database());
  });
  const sink = () => t.app.services.venueReports;

  /**
   * As a client does on 503 `agent_busy` (the agent's lease not taken in time on a loaded machine:
   * "nothing was done, retry later"): the call again, a few times.
   */
  async function retryBusy(call: () => Promise<TestResponse>): Promise<TestResponse> {
    for (let i = 0; ; i++) {
      const res = await call();
      if (res.status !== 503 || res.body?.code !== "agent_busy" || i === 10) return res;
      await Bun.sleep(200);
    }
  }

  /** A fresh agent's resting buy: 5 USDC at 0.47, 10.63 shares (best ask 0.50). */
  async function restingBuy(): Promise<{ tr: Trader; id: string; hash: `0x${string}` }> {
    const tr = await newTrader(t);
    const intent = await retryBusy(() => postIntent(t, tr, { price: 0.47 }));
    expect(intent.status).toBe(201);
    const order = intent.body;
    const signature = await sign(tr.account, order.unsigned_order);
    const res = await retryBusy(() => submitSigned(t, tr.key, order.order_id, signature));
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("open");
    return { tr, id: order.order_id, hash: order.order_hash };
  }

  const trade = (hash: `0x${string}`, id: string, f: Partial<FillReport> = {}): FillReport => ({
    kind: "fill",
    ref: { orderHash: hash },
    source: "user_channel",
    fillKey: `trade:${id}`,
    tradeId: id,
    sharesUnits: S,
    usdcUnits: U,
    feeUnits: 0n,
    price: "0.47",
    status: "matched",
    at: new Date(),
    ...f,
  });
  const log = (hash: `0x${string}`, txHash: `0x${string}`, logIndex: number, f: Partial<FillReport> = {}): FillReport => ({
    kind: "fill",
    ref: { orderHash: hash, venueOrderId: hash },
    source: "chain",
    fillKey: `tx:${txHash}:${logIndex}`,
    txHash,
    logIndex,
    blockNumber: 100n,
    sharesUnits: S,
    usdcUnits: U,
    feeUnits: 0n,
    price: "0.47",
    status: "mined",
    at: new Date(),
    ...f,
  });
  const placement = (hash: `0x${string}`, covers: string[], shares = S, usdc = U): FillReport => ({
    kind: "fill",
    ref: { venueOrderId: hash },
    source: "rest",
    fillKey: `order:${hash}:placement`,
    sharesUnits: shares,
    usdcUnits: usdc,
    feeUnits: 0n,
    price: "0.47",
    status: "matched",
    at: new Date(),
    covers,
  });
  const reverted = (hash: `0x${string}`, fillKey: string, reason: FillRevertedReport["reason"], source: FillRevertedReport["source"]): FillRevertedReport => ({
    kind: "fill_reverted",
    ref: { orderHash: hash },
    source,
    fillKey,
    reason,
    at: new Date(),
  });

  /** What the order and the agent's position count now (units), and the fills listed. */
  async function counted(o: { tr: Trader; id: string }) {
    const got = await getOrder(t, o.tr.key, o.id);
    const res = await t.call("GET", `/v1/agents/${o.tr.agent.id}/positions`, { key: o.tr.key });
    expect(res.status).toBe(200);
    const p = res.body.positions[0];
    return {
      shares: Math.round(got.filled_shares * 1e6),
      usdc: Math.round(got.filled_usdc * 1e6),
      fills: got.fills.length,
      position: p ? Math.round(Number(p.shares) * 1e6) : 0,
      cost: p ? Math.round(Number(p.cost_usdc) * 1e6) : 0,
      status: got.status as string,
      listed: got.fills as any[],
    };
  }

  /** The shares the agent's actor holds (in memory, for its sells' risk check): what a sell of 50 is refused for. */
  async function actorHolds(o: { tr: Trader }): Promise<number> {
    const p = expectProblem(await retryBusy(() => postIntent(t, o.tr, { side: "sell", size_usdc: 25, price: 0.5 })), 422, "risk_rejected");
    return p.failures.find((f: any) => f.code === "insufficient_position").limit;
  }

  for (const covers of [["trade:T1"], ["trade:T1", `tx:${TX1}`]]) {
    test(`one trade: the user channel's MATCHED and MINED, the REST catch-up, the chain's log, the placement's answer (naming ${covers.map((c) => c.split(":")[0]).join(" and ")}): all 120 orders`, async () => {
      const kinds = ["matched", "mined", "rest", "chain", "placement"] as const;
      for (const order of permutations(kinds)) {
        const o = await restingBuy();
        const reports: Record<(typeof kinds)[number], VenueReport> = {
          matched: trade(o.hash, "T1"),
          mined: trade(o.hash, "T1", { txHash: TX1, status: "mined" }),
          rest: trade(o.hash, "T1", { source: "rest", txHash: TX1, status: "confirmed" }),
          chain: log(o.hash, TX1, 3),
          placement: placement(o.hash, covers),
        };
        for (const [i, kind] of order.entries()) {
          await sink().deliver(reports[kind]);
          const c = await counted(o);
          // After every report: the trade once, in the order and in the position alike.
          expect({ order, after: order.slice(0, i + 1), ...c, listed: undefined }).toEqual({
            order,
            after: order.slice(0, i + 1),
            shares: 4_000_000,
            usdc: 1_880_000,
            fills: 1,
            position: 4_000_000,
            cost: 1_880_000,
            status: "open",
            listed: undefined,
          });
        }
        const last = await counted(o);
        expect({ order, fill: last.listed[0] }).toMatchObject({
          order,
          fill: { trade_id: "T1", tx_hash: TX1, log_index: 3, shares: "4", usdc: "1.88", status: "confirmed" },
        });
        expect([...last.listed[0].sources].sort()).toEqual(expect.arrayContaining(["chain", "rest", "user_channel"]));
        expect({ order, actorHolds: await actorHolds(o) }).toEqual({ order, actorHolds: 4 });
      }
    }, 600_000);
  }

  test("two trades of the same size (the one ambiguity): linked crosswise at most for a while, never counted twice, each named right once its transaction is known", async () => {
    const kinds = ["m1", "m2", "n1", "n2", "c1", "c2"] as const;
    const all = permutations(kinds);
    // The crosswise orders first, then a fixed sample of the 720.
    const crosswise: (typeof kinds)[number][][] = [
      ["m1", "m2", "c2", "c1", "n1", "n2"],
      ["m1", "c2", "m2", "c1", "n1", "n2"],
      ["m1", "c2", "n1", "m2", "c1", "n2"],
      ["c2", "m1", "c1", "m2", "n2", "n1"],
    ];
    for (const order of [...crosswise, ...sample(all, 40, 22)]) {
      const o = await restingBuy();
      const reports: Record<(typeof kinds)[number], VenueReport> = {
        m1: trade(o.hash, "T1"),
        m2: trade(o.hash, "T2"),
        n1: trade(o.hash, "T1", { txHash: TX1, status: "mined" }),
        n2: trade(o.hash, "T2", { txHash: TX2, status: "mined" }),
        c1: log(o.hash, TX1, 3),
        c2: log(o.hash, TX2, 5),
      };
      for (const [i, kind] of order.entries()) {
        await sink().deliver(reports[kind]);
        const c = await counted(o);
        const trades = new Set(order.slice(0, i + 1).map((k) => k.slice(1))).size;
        // Never more than the trades reported so far (each once); never less than one of them; the position agrees.
        expect({ order, after: i, ok: c.shares >= 4_000_000 && c.shares <= trades * 4_000_000, agrees: c.position === c.shares && c.cost === c.usdc }).toEqual({
          order,
          after: i,
          ok: true,
          agrees: true,
        });
      }
      const last = await counted(o);
      expect({ order, shares: last.shares, position: last.position }).toEqual({ order, shares: 8_000_000, position: 8_000_000 });
      const named = last.listed.map((f) => [f.trade_id, f.tx_hash, f.log_index]).sort();
      expect({ order, named }).toEqual({ order, named: [["T1", TX1, 3], ["T2", TX2, 5]] });
      expect({ order, actorHolds: await actorHolds(o) }).toEqual({ order, actorHolds: 8 });
    }
  }, 600_000);

  test("a placement's answer naming two trades (1 and 3 shares), each reported by the user channel and the chain: all 120 orders", async () => {
    const kinds = ["placement", "m1", "m2", "c1", "c2"] as const;
    const size = { T1: 1_000_000n, T2: 3_000_000n };
    for (const order of permutations(kinds)) {
      const o = await restingBuy();
      const reports: Record<(typeof kinds)[number], VenueReport> = {
        placement: placement(o.hash, ["trade:T1", "trade:T2"], 4_000_000n, 1_880_000n),
        m1: trade(o.hash, "T1", { sharesUnits: size.T1, usdcUnits: 470_000n }),
        m2: trade(o.hash, "T2", { sharesUnits: size.T2, usdcUnits: 1_410_000n }),
        c1: log(o.hash, TX1, 3, { sharesUnits: size.T1, usdcUnits: 470_000n }),
        c2: log(o.hash, TX2, 5, { sharesUnits: size.T2, usdcUnits: 1_410_000n }),
      };
      const seen = new Set<string>();
      for (const [i, kind] of order.entries()) {
        await sink().deliver(reports[kind]);
        if (kind === "placement") ["T1", "T2"].forEach((x) => seen.add(x));
        else seen.add(`T${kind[1]}`);
        const want = [...seen].reduce((sum, x) => sum + Number(size[x as "T1" | "T2"]), 0);
        const c = await counted(o);
        // Each trade reported so far (the answer reports both), once; the position agrees.
        expect({ order, after: i, shares: c.shares, position: c.position, agrees: c.cost === c.usdc }).toEqual({ order, after: i, shares: want, position: want, agrees: true });
      }
      const last = await counted(o);
      expect({ order, usdc: last.usdc, fills: last.fills, actorHolds: await actorHolds(o) }).toEqual({ order, usdc: 1_880_000, fills: 2, actorHolds: 4 });
    }
  }, 600_000);

  test("a MATCHED trade that FAILED does not take the chain's log of another trade with it", async () => {
    const o = await restingBuy();
    await sink().deliver(trade(o.hash, "T1"));
    // The chain's log of another trade of that size, T1 not mined yet: taken as T1 for now.
    await sink().deliver(log(o.hash, TX2, 5));
    expect(await counted(o)).toMatchObject({ shares: 4_000_000, position: 4_000_000 });
    // T1 FAILED: the log is another trade's, and counts on its own.
    expect(await sink().deliver(reverted(o.hash, "trade:T1", "trade_failed", "user_channel"))).toBe("applied");
    let c = await counted(o);
    expect(c).toMatchObject({ shares: 4_000_000, usdc: 1_880_000, position: 4_000_000, cost: 1_880_000, status: "open" });
    expect(c.listed.filter((f) => f.status !== "failed").map((f) => [f.source, f.trade_id, f.tx_hash])).toEqual([["chain", null, TX2]]);
    // Its trade (T2, mined in TX2) comes: one fill.
    await sink().deliver(trade(o.hash, "T2", { txHash: TX2, status: "mined" }));
    c = await counted(o);
    expect(c).toMatchObject({ shares: 4_000_000, position: 4_000_000 });
    expect(c.listed.filter((f) => f.status !== "failed").map((f) => [f.trade_id, f.tx_hash, f.log_index])).toEqual([["T2", TX2, 5]]);
    expect(await actorHolds(o)).toBe(4);
  });

  test("a log taken back by a reorganisation, its trade mined again in another transaction: counted once throughout", async () => {
    const o = await restingBuy();
    await sink().deliver(trade(o.hash, "T1"));
    await sink().deliver(trade(o.hash, "T1", { txHash: TX1, status: "mined" }));
    await sink().deliver(log(o.hash, TX1, 3));
    expect(await counted(o)).toMatchObject({ shares: 4_000_000, fills: 1, position: 4_000_000 });
    // The block is reorganised away: nothing counts until the trade is mined again.
    await sink().deliver(reverted(o.hash, `tx:${TX1}:3`, "reorg", "chain"));
    expect(await counted(o)).toMatchObject({ shares: 0, position: 0 });
    // The chain logs it in another transaction before the user channel says so: counted once.
    await sink().deliver(log(o.hash, TX3, 7));
    expect(await counted(o)).toMatchObject({ shares: 4_000_000, position: 4_000_000 });
    await sink().deliver(trade(o.hash, "T1", { txHash: TX3, status: "mined" }));
    await sink().deliver(log(o.hash, TX3, 7, { status: "confirmed" }));
    const c = await counted(o);
    expect(c).toMatchObject({ shares: 4_000_000, usdc: 1_880_000, position: 4_000_000, cost: 1_880_000 });
    expect(c.listed.filter((f) => f.status !== "failed").map((f) => [f.tx_hash, f.log_index, f.status])).toEqual([[TX3, 7, "confirmed"]]);
    expect(await actorHolds(o)).toBe(4);
  });

  test("a trade RETRYING after a reorganisation names its new transaction: the new log is that trade, not another", async () => {
    const o = await restingBuy();
    // The user channel's trade mined in TX1; the chain has not logged it yet.
    await sink().deliver(trade(o.hash, "T1", { txHash: TX1, status: "mined" }));
    // Mined again in TX3 (TX1 reorganised away before the chain source saw it).
    await sink().deliver(trade(o.hash, "T1", { txHash: TX3, status: "mined" }));
    await sink().deliver(log(o.hash, TX3, 2));
    const c = await counted(o);
    expect(c).toMatchObject({ shares: 4_000_000, fills: 1, position: 4_000_000 });
    expect(c.listed[0]).toMatchObject({ trade_id: "T1", tx_hash: TX3, log_index: 2 });
  });

  test("a log the chain takes back and then shows again at the same place counts again", async () => {
    const o = await restingBuy();
    await sink().deliver(log(o.hash, TX1, 3));
    await sink().deliver(reverted(o.hash, `tx:${TX1}:3`, "reorg", "chain"));
    expect(await counted(o)).toMatchObject({ shares: 0, position: 0 });
    expect(await sink().deliver(log(o.hash, TX1, 3))).toBe("applied");
    expect(await counted(o)).toMatchObject({ shares: 4_000_000, position: 4_000_000 });
  });

  test("several trades of one order in one transaction and one log of their sum (the simulator's taker): counted once when they name it", async () => {
    for (const order of permutations(["n1", "n2", "c"] as const)) {
      const o = await restingBuy();
      const reports = {
        n1: trade(o.hash, "T1", { txHash: TX1, status: "mined", sharesUnits: 1_000_000n, usdcUnits: 470_000n }),
        n2: trade(o.hash, "T2", { txHash: TX1, status: "mined", sharesUnits: 3_000_000n, usdcUnits: 1_410_000n }),
        c: log(o.hash, TX1, 9),
      };
      for (const kind of order) await sink().deliver(reports[kind]);
      const c = await counted(o);
      expect({ order, shares: c.shares, usdc: c.usdc, position: c.position }).toEqual({ order, shares: 4_000_000, usdc: 1_880_000, position: 4_000_000 });
    }
  });
});
