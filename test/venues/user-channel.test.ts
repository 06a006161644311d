/**
 * The user channel source (src/venues/clob/user-channel.ts) against the venue simulator over a real
 * WebSocket, with Polymarket's official client as the account's own client and as the counterparty.
 * Credentials are sealed in the vault and opened only for the subscribe message and the catch-up; the
 * reports go to a recording sink.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ApiKeyCreds, ClobClient, OrderType, Side } from "@polymarket/clob-client-v2";
import sodium from "libsodium-wrappers";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { CredentialVault } from "../../src/crypto/credential-vault.ts";
import type { VenueReport } from "../../src/domain/venue-report.ts";
import { type OpenCredentials, UserChannel } from "../../src/venues/clob/user-channel.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import markets from "../../fixtures/markets.json" with { type: "json" };
import { officialSigner } from "../support/official-client.ts";
import { until } from "../support/until.ts";

const ALICE_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" as Hex;
const BOB_KEY = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a" as Hex;
const PLAIN = (markets as any[]).find((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
const YES: string = PLAIN.tokens[0].token_id;

let sim: VenueSim;
let vault: CredentialVault;
let alice: { client: ClobClient; creds: ApiKeyCreds; address: string };
let bob: { client: ClobClient; creds: ApiKeyCreds; address: string };
let sealed: Uint8Array;
let opened = 0;

const reports: VenueReport[] = [];
const logged: string[] = [];
const sink = { report: (r: VenueReport) => void reports.push(r) };
const logger = {
  info: (msg: string, fields?: Record<string, unknown>) => void logged.push(`${msg} ${JSON.stringify(fields ?? {})}`),
  warn: (msg: string, fields?: Record<string, unknown>) => void logged.push(`${msg} ${JSON.stringify(fields ?? {})}`),
};

async function clientOf(key: Hex) {
  const account = privateKeyToAccount(key);
  const l1 = new ClobClient({ host: sim.url, chain: 137, signer: officialSigner(account) });
  const creds = await l1.createOrDeriveApiKey();
  return { client: new ClobClient({ host: sim.url, chain: 137, signer: officialSigner(account), creds, throwOnError: true }), creds, address: account.address };
}

/** Opens Alice's sealed credentials for one use, as the service does for a submission. */
const openAlice: OpenCredentials = (use) => {
  opened++;
  return vault.withOpened(sealed, (c) => use({ ...c, address: alice.address }));
};

const post = (path: string, body: unknown) => fetch(`${sim.url}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

const of = (orderId: string, kind?: VenueReport["kind"], source?: string) =>
  reports.filter((r) => r.ref.venueOrderId?.toLowerCase() === orderId.toLowerCase() && (!kind || r.kind === kind) && (!source || r.source === source));

async function restingBuy(price: number, size: number, extra: { type?: OrderType; expiration?: number } = {}): Promise<string> {
  const order = await alice.client.createOrder({ tokenID: YES, price, size, side: Side.BUY, ...(extra.expiration ? { expiration: extra.expiration } : {}) });
  const r: any = await alice.client.postOrder(order, extra.type ?? OrderType.GTC);
  expect(r.success).toBe(true);
  expect(r.status).toBe("live");
  return r.orderID;
}

async function bobSells(price: number, size: number): Promise<number> {
  const order = await bob.client.createOrder({ tokenID: YES, price, size, side: Side.SELL });
  const r: any = await bob.client.postOrder(order, OrderType.FAK);
  expect(r.success).toBe(true);
  return Date.now();
}

let channel: UserChannel;

beforeAll(async () => {
  sim = startVenueSim({ port: 0 });
  await sodium.ready;
  const kp = sodium.crypto_box_keypair();
  vault = new CredentialVault({ publicKey: kp.publicKey, secretKey: kp.privateKey });
  alice = await clientOf(ALICE_KEY);
  bob = await clientOf(BOB_KEY);
  sealed = vault.seal({ api_key: alice.creds.key, api_secret: alice.creds.secret, passphrase: alice.creds.passphrase });
  channel = new UserChannel({ url: `${sim.wsUrl}/ws/user`, restUrl: sim.url, sink, logger, backoffMinMs: 20, backoffMaxMs: 200 });
  channel.follow("alice", openAlice, { openOrders: () => held });
  await until("subscribed", () => channel.state("alice")?.subscribed);
  await channel.settled("alice");
});

/** What the "service" holds open for Alice (the catch-up checks these). */
let held: string[] = [];

afterAll(async () => {
  await channel?.close();
  await sim?.stop();
});

describe("the user channel", () => {
  test("a counterparty's fill (official client) reaches the sink as a fill within 2 s, then MINED and CONFIRMED", async () => {
    // Price 0.49: inside the fixture's spread (bids 0.48, asks 0.50), so Bob's sell meets Alice's bid first.
    const id = await restingBuy(0.49, 10);
    await until("placed", () => of(id, "placed")[0]);
    const tradedAt = await bobSells(0.49, 10);
    const fill = await until("the fill", () => of(id, "fill", "user_channel")[0], 2000);
    expect(Date.now() - tradedAt).toBeLessThan(2000);
    if (fill.kind !== "fill") throw new Error("unreachable");
    expect(fill).toMatchObject({ source: "user_channel", status: "matched", sharesUnits: 10_000_000n, usdcUnits: 4_900_000n, price: "0.49", feeUnits: 0n });
    expect(fill.fillKey).toMatch(/^trade:[0-9a-f-]{36}$/);
    expect(fill.ref.orderHash).toBe(id.toLowerCase() as `0x${string}`);
    // MATCHED names no transaction yet (Polymarket's "" until broadcast); MINED and CONFIRMED do.
    expect(fill.txHash).toBeUndefined();
    const later = await until("MINED and CONFIRMED", () => {
      const s = of(id, "fill", "user_channel");
      return s.some((r) => r.kind === "fill" && r.status === "confirmed") ? s : null;
    });
    expect(later.map((r) => (r.kind === "fill" ? r.status : ""))).toEqual(["matched", "mined", "confirmed"]);
    for (const r of later.slice(1)) expect(r.kind === "fill" ? r.txHash : "").toMatch(/^0x[0-9a-f]{64}$/);
    expect(new Set(of(id, "fill").map((r) => (r.kind === "fill" ? r.fillKey : "")))).toEqual(new Set([fill.fillKey]));
  });

  test("partial fills: each trade is its own fill; only our leg is reported", async () => {
    const id = await restingBuy(0.49, 20);
    await bobSells(0.49, 5);
    await bobSells(0.49, 7);
    const fills = await until("two fills", () => {
      const f = of(id, "fill", "user_channel").filter((r) => r.kind === "fill" && r.status === "matched");
      return f.length === 2 ? f : null;
    });
    expect(fills.map((r) => (r.kind === "fill" ? r.sharesUnits : 0n))).toEqual([5_000_000n, 7_000_000n]);
    expect(new Set(fills.map((r) => (r.kind === "fill" ? r.fillKey : ""))).size).toBe(2);
    // Bob's taker orders are Bob's: Alice's stream names none of them.
    expect(reports.every((r) => r.kind !== "fill" || r.ref.venueOrderId !== undefined)).toBe(true);
    await alice.client.cancelOrder({ orderID: id });
    const c = await until("the cancel", () => of(id, "cancelled")[0]);
    expect(c).toMatchObject({ kind: "cancelled", sizeMatchedUnits: 12_000_000n });
  });

  test("a cancel done at the venue by the owner with the official client is reported cancelled", async () => {
    const id = await restingBuy(0.3, 10);
    await alice.client.cancelOrder({ orderID: id });
    const c = await until("cancelled", () => of(id, "cancelled", "user_channel")[0]);
    expect(c).toMatchObject({ kind: "cancelled", sizeMatchedUnits: 0n });
    expect(of(id, "expired")).toHaveLength(0);
  });

  test("a GTD order expires at the venue at its expiration and is reported expired", async () => {
    const expiration = Math.floor(Date.now() / 1000) + 2;
    const id = await restingBuy(0.3, 10, { type: OrderType.GTD, expiration });
    expect(of(id, "expired")).toHaveLength(0);
    const e = await until("expired", () => of(id, "expired", "user_channel")[0], 4000);
    expect(e.at.getTime()).toBeGreaterThanOrEqual(expiration * 1000 - 1000);
    expect(Date.now()).toBeGreaterThanOrEqual(expiration * 1000);
    expect(of(id, "cancelled")).toHaveLength(0);
    // The venue lists it no more.
    expect(((await alice.client.getOpenOrders({ id })) as any[]).length).toBe(0);
  });

  test("a trade that FAILED is taken back", async () => {
    expect((await post("/_sim/faults", { trade_fail_ratio: 1 })).status).toBe(200);
    try {
      const id = await restingBuy(0.49, 6);
      await bobSells(0.49, 6);
      const back = await until("the revert", () => of(id, "fill_reverted")[0]);
      const fill = of(id, "fill")[0];
      if (back.kind !== "fill_reverted" || fill?.kind !== "fill") throw new Error("expected a fill and its revert");
      expect(back).toMatchObject({ reason: "trade_failed", fillKey: fill.fillKey, source: "user_channel" });
    } finally {
      await post("/_sim/faults", { trade_fail_ratio: 0 });
    }
  });

  test("after a reconnect the REST catch-up finds what happened while disconnected", async () => {
    const filled = await restingBuy(0.49, 8);
    const cancelled = await restingBuy(0.3, 9);
    held = [filled, cancelled];
    await until("placed", () => of(cancelled, "placed")[0]);
    const before = channel.state("alice")!;
    expect((await post("/_sim/faults", { ws_refuse_ratio: 1 })).status).toBe(200);
    expect(((await (await post("/_sim/ws/drop", { channel: "user" })).json()) as { dropped: number }).dropped).toBe(1);
    await until("disconnected", () => !channel.state("alice")!.subscribed);
    // Meanwhile: a counterparty fills one order and the owner cancels the other, at the venue.
    await bobSells(0.49, 8);
    await alice.client.cancelOrder({ orderID: cancelled });
    await Bun.sleep(100);
    expect(of(filled, "fill")).toHaveLength(0);
    expect(of(cancelled, "cancelled")).toHaveLength(0);
    expect((await post("/_sim/faults", { ws_refuse_ratio: 0 })).status).toBe(200);
    await until("resubscribed", () => channel.state("alice")!.subscribed);
    await until("caught up", () => channel.state("alice")!.catchUps > before.catchUps);
    const fill = of(filled, "fill", "rest")[0];
    expect(fill).toMatchObject({ kind: "fill", sharesUnits: 8_000_000n, usdcUnits: 3_920_000n });
    expect(of(cancelled, "cancelled", "rest")[0]).toMatchObject({ kind: "cancelled", sizeMatchedUnits: 0n });
    expect(channel.state("alice")!.reconnects).toBeGreaterThan(before.reconnects);
    held = [];
  });

  test("credentials are opened per use, never logged, never kept", async () => {
    expect(opened).toBeGreaterThanOrEqual(2); // subscribe and catch-up, again after the reconnect
    // Wrong credentials: the venue closes the socket, the channel logs and retries; nothing secret in any line.
    const wrong = vault.seal({ api_key: alice.creds.key, api_secret: Buffer.alloc(32, 3).toString("base64"), passphrase: "not-the-passphrase-123" });
    channel.follow("wrong", (use) => vault.withOpened(wrong, (c) => use({ ...c, address: alice.address })));
    await until("a failed subscription logged", () => logged.some((l) => l.includes("disconnected") && l.includes("wrong")));
    channel.unfollow("wrong");
    const text = [...logged, Bun.inspect(channel, { depth: 10 })].join("\n");
    expect(text.length).toBeGreaterThan(0);
    for (const secret of [alice.creds.secret, alice.creds.passphrase, "not-the-passphrase-123", Buffer.alloc(32, 3).toString("base64")]) expect(text).not.toContain(secret);
    // Only a hash of the API key is held.
    expect(Bun.inspect(channel, { depth: 10 })).not.toContain(alice.creds.key);
  });
});
