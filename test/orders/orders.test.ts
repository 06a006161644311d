/**
 * The payload-mode order flow after approval (CONTRACT sections 7, 9, 12): submit-signed with real
 * viem signatures and its refusals, reading, listing and cancelling orders, the expiry sweep of
 * unsigned orders, and the kill switch, on the paper venue. PGlite, and PostgreSQL when
 * TEST_DATABASE_URL is set. Every test makes its own organization and agent.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { hashTypedData, recoverAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Database } from "../../src/db/database.ts";
import { orders } from "../../src/db/schema.ts";
import { createPaperVenue } from "../../src/venues/create-venue.ts";
import type { PaperVenue } from "../../src/venues/paper/paper-venue.ts";
import type { PostSignedOrder, Venue } from "../../src/venues/venue.ts";
import { createTestApp, type TestApp, type TestResponse } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import {
  approved,
  DEM_YES,
  expectChecks,
  expectInvalid,
  expectProblem,
  getAgent,
  getOrder, holdShares,
  MADRID_YES,
  newTrader,
  postIntent,
  sign,
  sleep,
  submitSigned,
  type Trader,
} from "../support/payload.ts";

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ORDER_FIELDS = [
  "agent_id",
  "client_order_id",
  "created_at",
  "filled_usdc",
  "flagged_for_review",
  "history",
  "id",
  "market_id",
  "mode",
  "order_hash",
  "order_type",
  "price",
  "side",
  "size_usdc",
  "status",
  "updated_at",
  "venue_order_id",
];

/** The same signature with s → n − s and v flipped: valid, but high s. */
function highS(sig: string): `0x${string}` {
  const r = sig.slice(2, 66);
  const s = BigInt(`0x${sig.slice(66, 130)}`);
  const v = Number.parseInt(sig.slice(130, 132), 16);
  return `0x${r}${(N - s).toString(16).padStart(64, "0")}${(v === 27 ? 28 : 27).toString(16)}`;
}

/** A paper venue that records, for every signed order posted to it, the order row's status at that instant. */
function recordingVenue(database: () => Database) {
  const paper = createPaperVenue({ chainId: 137, paperMarkets: null });
  const statusAtPost = new Map<string, string | null>();
  const posts = new Map<string, number>();
  /** ok: as the paper venue answers; refuse: a venue refusal; down: no answer; lost: accepted, but the answer is lost. */
  const control = { mode: "ok" as "ok" | "refuse" | "down" | "lost", delayMs: 0 };
  const hook = async (req: PostSignedOrder, opts?: { signal?: AbortSignal }) => {
    const id = paper.orderIdFor(req.order);
    if (id) {
      const [row] = await database().db.select({ status: orders.status }).from(orders).where(eq(orders.orderHash, id));
      statusAtPost.set(id, row?.status ?? null);
      posts.set(id, (posts.get(id) ?? 0) + 1);
    }
    if (control.delayMs) await new Promise((r) => setTimeout(r, control.delayMs));
    if (control.mode === "refuse") return { ok: false as const, error: "not enough balance / allowance" };
    if (control.mode === "down") throw new Error("connection reset by the venue");
    const answer = await paper.postSignedOrder(req, opts);
    if (control.mode === "lost") throw new Error("socket hang up after the venue accepted");
    return answer;
  };
  const venue = new Proxy(paper, {
    get(target, prop) {
      if (prop === "postSignedOrder") return hook;
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  }) as PaperVenue & Venue;
  return { venue, paper, statusAtPost, posts, control };
}

/** The total size resting at `price` on a side of the paper book, 0 when there is no such level. */
function restingAt(paper: PaperVenue, tokenId: string, side: "bids" | "asks", price: number): number {
  const book = paper.bookSnapshot(tokenId)!;
  const level = book[side].find((l) => Number(l.price) === price);
  return level ? Number(level.size) : 0;
}

describeEachDatabase("payload orders HTTP", (_kind, database) => {
  let db: Database;
  let t: TestApp;
  /** Signature deadline 1 s after approval. */
  let tShort: TestApp;
  let rec: ReturnType<typeof recordingVenue>;
  /** Every signature this file sends, to check that no log line or error body holds one. */
  const signatures = new Set<string>();

  beforeAll(async () => {
    db = await database();
    rec = recordingVenue(() => db);
    t = await createTestApp(db, { venue: rec.venue });
    tShort = await createTestApp(db, { config: { signatureTtlS: 1 } });
  });
  afterAll(async () => {
    await Promise.all([t, tShort].map((a) => a?.app.stop()));
  });

  const signed = async (tr: Trader, order: any) => {
    const sig = await sign(tr.account, order.unsigned_order);
    signatures.add(sig);
    return sig;
  };
  /** An approved and submitted order (asserts 200). */
  const placed = async (tr: Trader, body: Record<string, unknown> = {}) => {
    const order = await approved(t, tr, body);
    const res = await submitSigned(t, tr.key, order.order_id, await signed(tr, order));
    if (res.status !== 200) throw new Error(`submit failed: ${res.status} ${res.text}`);
    return { order, res };
  };
  /** A refusal of submit-signed that never echoes the signature. */
  const refused = (res: TestResponse, status: number, code: string, signature: string) => {
    signatures.add(signature);
    const p = expectProblem(res, status, code);
    if (signature.length >= 10) {
      expect(res.text).not.toContain(signature);
      expect(res.text.toLowerCase()).not.toContain(signature.slice(2, 34).toLowerCase());
    }
    return p;
  };
  const statuses = (order: any) => order.history.map((h: any) => h.status);

  describe("submit-signed", () => {
    test("forwards the signed order: 200 {order_id, status, venue_order_id}; submitting is written before the venue call", async () => {
      const tr = await newTrader(t);
      // Marketable: 10 shares at 0.52 take the 0.50 ask.
      const order = await approved(t, tr, { size_usdc: 5.2, price: 0.52 });
      const res = await submitSigned(t, tr.key, order.order_id, await signed(tr, order));
      expect(res.status).toBe(200);
      expect(res.body.order_id).toBe(order.order_id);
      expect(res.body.status).toBe("filled");
      // The paper venue's order id is the EIP-712 order hash, like Polymarket's.
      expect(res.body.venue_order_id).toBe(order.order_hash);

      const atVenue = await t.app.services.venue.getOrder({ venue_order_id: res.body.venue_order_id });
      expect(atVenue).toEqual({ venue_order_id: order.order_hash, status: "matched", filled_usdc: "5" });
      expect(rec.statusAtPost.get(order.order_hash)).toBe("submitting");
      expect(rec.posts.get(order.order_hash)).toBe(1);

      const got = await getOrder(t, tr.key, order.order_id);
      expect(got.status).toBe("filled");
      expect(got.venue_order_id).toBe(order.order_hash);
      expect(got.filled_usdc).toBe(5);
      expect(statuses(got)).toEqual(["awaiting_signature", "submitting", "filled"]);
      for (const h of got.history) expect(h.at).toMatch(ISO);
      const times = got.history.map((h: any) => Date.parse(h.at));
      for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThanOrEqual(times[i - 1]);

      const agent = await getAgent(t, tr);
      expect(agent.open_orders).toBe(0);
      expect(agent.daily_volume.used_usdc).toBe(5.2);
    });

    test("an order that does not cross rests on the venue's book and is open", async () => {
      const tr = await newTrader(t);
      // 5 / 0.44 → 11.36 shares, 4.9984 USDC; there is no seeded bid at 0.44.
      expect(restingAt(rec.paper, DEM_YES, "bids", 0.44)).toBe(0);
      const order = await approved(t, tr, { price: 0.44 });
      const res = await submitSigned(t, tr.key, order.order_id, await signed(tr, order));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ order_id: order.order_id, status: "open", venue_order_id: order.order_hash });
      expect((await t.app.services.venue.getOrder({ venue_order_id: order.order_hash }))?.status).toBe("live");
      expect(restingAt(rec.paper, DEM_YES, "bids", 0.44)).toBe(11.36);
      expect(rec.statusAtPost.get(order.order_hash)).toBe("submitting");

      const got = await getOrder(t, tr.key, order.order_id);
      expect(got.status).toBe("open");
      expect(got.filled_usdc).toBe(0);
      expect(statuses(got)).toEqual(["awaiting_signature", "submitting", "open"]);
      const agent = await getAgent(t, tr);
      expect(agent.open_orders).toBe(1);
      expect(agent.daily_volume.used_usdc).toBe(4.9984);
    });

    test("malformed signatures are 400 invalid_signature and leave the order awaiting its signature", async () => {
      const tr = await newTrader(t);
      const order = await approved(t, tr);
      const good = await signed(tr, order);
      const bad = [
        "",
        "0x",
        "0x1234",
        good.slice(0, 130), // 64 bytes
        `${good}00`, // 66 bytes
        good.slice(2), // no 0x
        `0x${"zz".repeat(65)}`, // not hex
        `0x${good.slice(2, 130)}g${good.slice(131)}`,
        ` ${good}`,
      ];
      for (const sig of bad) {
        const res = await submitSigned(t, tr.key, order.order_id, sig);
        try {
          refused(res, 400, "invalid_signature", sig);
        } catch (error) {
          throw new Error(`${JSON.stringify(sig)}: ${(error as Error).message}`);
        }
      }
      expect((await getOrder(t, tr.key, order.order_id)).status).toBe("awaiting_signature");
      expect(rec.posts.has(order.order_hash)).toBe(false);
      // A non-string signature is a body validation error.
      expectInvalid(await t.call("POST", "/v1/orders/submit-signed", { key: tr.key, body: { order_id: order.order_id, signature: 1 } }), "/signature");
      // The right signature still goes through.
      const res = await submitSigned(t, tr.key, order.order_id, good);
      expect(res.status).toBe(200);
    });

    test("a high-s signature is 400 even though it recovers to the signer", async () => {
      const tr = await newTrader(t);
      const order = await approved(t, tr);
      const good = await signed(tr, order);
      const malleated = highS(good);
      expect(malleated).not.toBe(good);
      expect(BigInt(`0x${malleated.slice(66, 130)}`) > N / 2n).toBe(true);
      // The same key signed it; only the s half differs.
      expect(await recoverAddress({ hash: order.order_hash, signature: malleated })).toBe(tr.account.address);
      refused(await submitSigned(t, tr.key, order.order_id, malleated), 400, "invalid_signature", malleated);
      expect((await getOrder(t, tr.key, order.order_id)).status).toBe("awaiting_signature");
      expect((await submitSigned(t, tr.key, order.order_id, good)).status).toBe(200);
    });

    test("a signature by another account is 400", async () => {
      const tr = await newTrader(t);
      const order = await approved(t, tr);
      const stranger = privateKeyToAccount(generatePrivateKey());
      const sig = await stranger.signTypedData(order.unsigned_order);
      refused(await submitSigned(t, tr.key, order.order_id, sig), 400, "invalid_signature", sig);
      expect((await getOrder(t, tr.key, order.order_id)).status).toBe("awaiting_signature");
      expect(rec.posts.has(order.order_hash)).toBe(false);
      expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(5);
    });

    test("a signature over a different order is 400: only the approved order can be forwarded", async () => {
      const tr = await newTrader(t);
      const a = await approved(t, tr);
      const b = await approved(t, tr, { market_id: MADRID_YES, price: 0.18 });
      const sigB = await signed(tr, b);
      refused(await submitSigned(t, tr.key, a.order_id, sigB), 400, "invalid_signature", sigB);

      // The signer's own signature over A with a larger amount is not A.
      const bigger = { ...a.unsigned_order, message: { ...a.unsigned_order.message, makerAmount: "50000000", takerAmount: "100000000" } };
      expect(hashTypedData(bigger)).not.toBe(a.order_hash);
      const sigBigger = await tr.account.signTypedData(bigger);
      refused(await submitSigned(t, tr.key, a.order_id, sigBigger), 400, "invalid_signature", sigBigger);
      // Nor is A signed for the other exchange.
      const otherDomain = { ...a.unsigned_order, domain: { ...a.unsigned_order.domain, verifyingContract: "0xe2222d279d744050d28e00520010520000310F59" } };
      const sigDomain = await tr.account.signTypedData(otherDomain);
      refused(await submitSigned(t, tr.key, a.order_id, sigDomain), 400, "invalid_signature", sigDomain);

      expect((await getOrder(t, tr.key, a.order_id)).status).toBe("awaiting_signature");
      expect(rec.posts.has(a.order_hash)).toBe(false);
      // Each order with its own signature goes through.
      expect((await submitSigned(t, tr.key, b.order_id, sigB)).status).toBe(200);
      expect((await submitSigned(t, tr.key, a.order_id, await signed(tr, a))).status).toBe(200);
    });

    test("a second submit of the same order is 409 invalid_state; concurrent submits post once", async () => {
      const tr = await newTrader(t);
      const order = await approved(t, tr, { price: 0.45 });
      const sig = await signed(tr, order);
      expect((await submitSigned(t, tr.key, order.order_id, sig)).status).toBe(200);
      const again = refused(await submitSigned(t, tr.key, order.order_id, sig), 409, "invalid_state", sig);
      expect(again.order_status).toBe("open");
      expect(rec.posts.get(order.order_hash)).toBe(1);

      const twin = await approved(t, tr, { price: 0.45 });
      const twinSig = await signed(tr, twin);
      const answers = await Promise.all(Array.from({ length: 5 }, () => submitSigned(t, tr.key, twin.order_id, twinSig)));
      expect(answers.filter((r) => r.status === 200).length).toBe(1);
      for (const r of answers.filter((r) => r.status !== 200)) refused(r, 409, "invalid_state", twinSig);
      expect(rec.posts.get(twin.order_hash)).toBe(1);
      expect((await getAgent(t, tr)).open_orders).toBe(2);
    });

    test("after the signature deadline: 410 order_expired, the order expires and its reservation is released", async () => {
      const tr = await newTrader(tShort);
      const order = await approved(tShort, tr);
      const sig = await signed(tr, order);
      expect((await getAgent(tShort, tr)).daily_volume.used_usdc).toBe(5);
      expect(Date.parse(order.signature_deadline) - Date.now()).toBeLessThanOrEqual(1000);
      await sleep(Math.max(0, Date.parse(order.signature_deadline) - Date.now()) + 50);

      refused(await submitSigned(tShort, tr.key, order.order_id, sig), 410, "order_expired", sig);
      const got = await getOrder(tShort, tr.key, order.order_id);
      expect(got.status).toBe("expired");
      expect(statuses(got)).toEqual(["awaiting_signature", "expired"]);
      const agent = await getAgent(tShort, tr);
      expect(agent.daily_volume.used_usdc).toBe(0);
      expect(agent.open_orders).toBe(0);
      expect(await tShort.app.services.venue.getOrder({ venue_order_id: order.order_hash })).toBeNull();
      // Never forwarded afterwards either.
      const later = await submitSigned(tShort, tr.key, order.order_id, sig);
      expect([409, 410]).toContain(later.status);
      expect(await tShort.app.services.venue.getOrder({ venue_order_id: order.order_hash })).toBeNull();
    });

    test("a deadline moved into the past in the database is honoured too", async () => {
      const tr = await newTrader(t);
      const order = await approved(t, tr);
      const sig = await signed(tr, order);
      await db.db.update(orders).set({ signatureDeadline: new Date(Date.now() - 1000) }).where(eq(orders.id, order.order_id));
      refused(await submitSigned(t, tr.key, order.order_id, sig), 410, "order_expired", sig);
      expect((await getOrder(t, tr.key, order.order_id)).status).toBe("expired");
      expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(0);
      expect(rec.posts.has(order.order_hash)).toBe(false);
    });

    test("another organization's order is 404; another agent's scoped key is 403", async () => {
      const tr = await newTrader(t);
      const order = await approved(t, tr);
      const sig = await signed(tr, order);
      const stranger = await t.newOrg("stranger");
      refused(await submitSigned(t, stranger.key, order.order_id, sig), 404, "not_found", sig);
      expectProblem(await t.call("GET", `/v1/orders/${order.order_id}`, { key: stranger.key }), 404, "not_found");
      expectProblem(await t.call("DELETE", `/v1/orders/${order.order_id}`, { key: stranger.key }), 404, "not_found");

      const sibling = await newTrader(t, { key: tr.key });
      const issued = await t.call("POST", "/v1/api-keys", { key: tr.key, body: { agent_id: sibling.agent.id } });
      expect(issued.status).toBe(201);
      refused(await submitSigned(t, issued.body.key, order.order_id, sig), 403, "forbidden", sig);

      expect((await getOrder(t, tr.key, order.order_id)).status).toBe("awaiting_signature");
      expect(rec.posts.has(order.order_hash)).toBe(false);
      expectProblem(await submitSigned(t, tr.key, "ord_zzzzzzzzzzzzzzzzzzzz", sig), 404, "not_found");
      expectInvalid(await t.call("POST", "/v1/orders/submit-signed", { key: tr.key, body: { order_id: "nope", signature: sig } }), "/order_id");
      expectInvalid(
        await t.call("POST", "/v1/orders/submit-signed", { key: tr.key, body: { order_id: order.order_id, signature: sig, extra: true } }),
        "/extra",
      );
      expect((await submitSigned(t, tr.key, order.order_id, sig)).status).toBe(200);
    });

    test("an order cancelled with DELETE cannot be submitted: 409", async () => {
      const tr = await newTrader(t);
      const order = await approved(t, tr);
      const sig = await signed(tr, order);
      expect((await t.call("DELETE", `/v1/orders/${order.order_id}`, { key: tr.key })).status).toBe(200);
      const p = refused(await submitSigned(t, tr.key, order.order_id, sig), 409, "invalid_state", sig);
      expect(p.order_status).toBe("cancelled");
      expect((await getOrder(t, tr.key, order.order_id)).status).toBe("cancelled");
      expect(rec.posts.has(order.order_hash)).toBe(false);
    });

    test("a venue refusal is 502 venue_rejected: the order is rejected and its reservation released", async () => {
      const tr = await newTrader(t);
      const order = await approved(t, tr);
      const sig = await signed(tr, order);
      rec.control.mode = "refuse";
      let res: TestResponse;
      try {
        res = await submitSigned(t, tr.key, order.order_id, sig);
      } finally {
        rec.control.mode = "ok";
      }
      const p = refused(res, 502, "venue_rejected", sig);
      expect(p.venue_error).toContain("not enough balance");
      expect(p.order_id).toBe(order.order_id);
      const got = await getOrder(t, tr.key, order.order_id);
      expect(got.status).toBe("rejected");
      expect(statuses(got)).toEqual(["awaiting_signature", "submitting", "rejected"]);
      expect(rec.statusAtPost.get(order.order_hash)).toBe("submitting");
      const agent = await getAgent(t, tr);
      expect(agent.daily_volume.used_usdc).toBe(0);
      expect(agent.open_orders).toBe(0);
      // Not sent again.
      refused(await submitSigned(t, tr.key, order.order_id, sig), 409, "invalid_state", sig);
      expect(rec.posts.get(order.order_hash)).toBe(1);
    });

    test("a venue that does not answer is 504 venue_timeout: the order is unknown, keeps its reservation, and is reconciled", async () => {
      const tr = await newTrader(t);
      const never = await approved(t, tr);
      const lost = await approved(t, tr, { price: 0.39 });
      const sigNever = await signed(tr, never);
      const sigLost = await signed(tr, lost);
      let down: TestResponse;
      let gone: TestResponse;
      try {
        rec.control.mode = "down";
        down = await submitSigned(t, tr.key, never.order_id, sigNever);
        rec.control.mode = "lost";
        gone = await submitSigned(t, tr.key, lost.order_id, sigLost);
      } finally {
        rec.control.mode = "ok";
      }
      for (const [res, sig, order] of [[down, sigNever, never], [gone, sigLost, lost]] as const) {
        const p = refused(res, 504, "venue_timeout", sig);
        expect(p.order_id).toBe(order.order_id);
        expect((await getOrder(t, tr.key, order.order_id)).status).toBe("unknown");
      }
      // Unresolved orders keep their reservation: 5 + 12.82 × 0.39 (= 4.9998).
      expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(9.9998);

      await t.app.services.orders.reconcile();
      const neverGot = await getOrder(t, tr.key, never.order_id);
      expect(neverGot.status).toBe("rejected");
      expect(statuses(neverGot)).toEqual(["awaiting_signature", "submitting", "unknown", "rejected"]);
      const lostGot = await getOrder(t, tr.key, lost.order_id);
      expect(lostGot.status).toBe("open");
      expect(lostGot.venue_order_id).toBe(lost.order_hash);
      const agent = await getAgent(t, tr);
      expect(agent.daily_volume.used_usdc).toBe(4.9998);
      expect(agent.open_orders).toBe(1);
      // Reconciliation never re-posts.
      expect(rec.posts.get(never.order_hash)).toBe(1);
      expect(rec.posts.get(lost.order_hash)).toBe(1);
      expect((await t.call("DELETE", `/v1/orders/${lost.order_id}`, { key: tr.key })).status).toBe(200);
    });

    test("a fill-or-kill order that cannot fill is cancelled at once and releases its reservation", async () => {
      const tr = await newTrader(t);
      const order = await approved(t, tr, { price: 0.45, order_type: "FOK" });
      const res = await submitSigned(t, tr.key, order.order_id, await signed(tr, order));
      expect(res.status).toBe(200);
      expect(res.body.status).toBe("cancelled");
      expect((await t.app.services.venue.getOrder({ venue_order_id: order.order_hash }))?.status).toBe("unmatched");
      const got = await getOrder(t, tr.key, order.order_id);
      expect(statuses(got)).toEqual(["awaiting_signature", "submitting", "cancelled"]);
      expect(got.filled_usdc).toBe(0);
      const agent = await getAgent(t, tr);
      expect(agent.daily_volume.used_usdc).toBe(0);
      expect(agent.open_orders).toBe(0);
    });

    test("no log line holds a signature", () => {
      expect(signatures.size).toBeGreaterThan(10);
      const logs = t.logs.join("\n") + tShort.logs.join("\n");
      for (const s of signatures) {
        if (s.length < 20) continue;
        expect(logs).not.toContain(s.slice(2, 34));
      }
    });
  });

  describe("read, list, cancel", () => {
    test("GET /v1/orders/{id} answers the order with its history; unknown ids 404, malformed 400", async () => {
      const tr = await newTrader(t);
      await holdShares(t, tr);
      const order = await approved(t, tr, { side: "sell", size_usdc: 5.2, price: 0.52, client_order_id: "my-ref-1" });
      const got = await getOrder(t, tr.key, order.order_id);
      // While it awaits its signature the order also carries what to sign, and until when; GET also carries its fills.
      expect(Object.keys(got).sort()).toEqual([...ORDER_FIELDS, "expiration", "signature_deadline", "unsigned_order", "filled_shares", "fills"].sort());
      expect(got.expiration).toBe(order.expiration);
      expect(got.unsigned_order).toEqual(order.unsigned_order);
      expect(got.signature_deadline).toBe(order.signature_deadline);
      expect(got).toMatchObject({
        id: order.order_id,
        agent_id: tr.agent.id,
        mode: "payload",
        market_id: DEM_YES,
        side: "sell",
        size_usdc: 5.2,
        price: 0.52,
        order_type: "GTC",
        status: "awaiting_signature",
        order_hash: order.order_hash,
        venue_order_id: null,
        filled_usdc: 0,
        flagged_for_review: false,
        client_order_id: "my-ref-1",
      });
      expect(got.created_at).toMatch(ISO);
      expect(got.updated_at).toMatch(ISO);
      expect(got.history).toHaveLength(1);
      expect(got.history[0]).toMatchObject({ status: "awaiting_signature" });
      expect(got.history[0].at).toBe(got.created_at);
      expect(got.created_at).toBe(new Date(Number(order.unsigned_order.message.timestamp)).toISOString());

      expectProblem(await t.call("GET", "/v1/orders/ord_zzzzzzzzzzzzzzzzzzzz", { key: tr.key }), 404, "not_found");
      expectProblem(await t.call("GET", "/v1/orders/not-an-id", { key: tr.key }), 400, "invalid_request");
      expectProblem(await t.call("GET", `/v1/orders/${order.order_id}`), 401, "unauthenticated");
    });

    test("GET /v1/orders filters by agent_id and status and paginates with limit and cursor", async () => {
      const a = await newTrader(t);
      const b = await newTrader(t, { key: a.key });
      const aOrders = [];
      for (let i = 0; i < 5; i++) aOrders.push(await approved(t, a));
      const bOrders = [await approved(t, b), await approved(t, b)];
      expect((await t.call("DELETE", `/v1/orders/${aOrders[1].order_id}`, { key: a.key })).status).toBe(200);
      const ids = (res: TestResponse) => res.body.data.map((o: any) => o.id);
      const list = (q: string) => t.call("GET", `/v1/orders${q}`, { key: a.key });

      const all = await list("?limit=200");
      expect(all.status).toBe(200);
      expect(all.body.next_cursor).toBeNull();
      expect(new Set(ids(all))).toEqual(new Set([...aOrders, ...bOrders].map((o) => o.order_id)));
      const created = all.body.data.map((o: any) => Date.parse(o.created_at));
      for (let i = 1; i < created.length; i++) expect(created[i]).toBeLessThanOrEqual(created[i - 1]);
      for (const o of all.body.data) expect(Object.keys(o).sort()).toEqual(ORDER_FIELDS);

      expect(new Set(ids(await list(`?agent_id=${a.agent.id}`)))).toEqual(new Set(aOrders.map((o) => o.order_id)));
      expect(ids(await list(`?agent_id=${a.agent.id}`))).toEqual(aOrders.map((o) => o.order_id).reverse());
      expect(ids(await list(`?status=cancelled`))).toEqual([aOrders[1].order_id]);
      expect(new Set(ids(await list(`?agent_id=${b.agent.id}&status=awaiting_signature`)))).toEqual(new Set(bOrders.map((o) => o.order_id)));
      expect(ids(await list(`?agent_id=${b.agent.id}&status=cancelled`))).toEqual([]);
      expect(ids(await list(`?status=filled`))).toEqual([]);
      expect((await list(`?agent_id=${a.agent.id}&status=awaiting_signature`)).body.data.length).toBe(4);

      // Pages of 2 walk all 7 once, newest first, as the single page does.
      const walked: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: TestResponse = await list(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        expect(res.status).toBe(200);
        expect(res.body.data.length).toBeLessThanOrEqual(2);
        walked.push(...ids(res));
        cursor = res.body.next_cursor;
        if (++pages > 10) throw new Error("pagination does not end");
      } while (cursor);
      expect(pages).toBe(4);
      expect(walked).toEqual(ids(all));

      // Filters and pagination together.
      const p1 = await list(`?agent_id=${a.agent.id}&status=awaiting_signature&limit=3`);
      expect(p1.body.data.length).toBe(3);
      expect(typeof p1.body.next_cursor).toBe("string");
      const p2 = await list(`?agent_id=${a.agent.id}&status=awaiting_signature&limit=3&cursor=${encodeURIComponent(p1.body.next_cursor)}`);
      expect(p2.body.data.length).toBe(1);
      expect(p2.body.next_cursor).toBeNull();
      expect(new Set([...ids(p1), ...ids(p2)]).size).toBe(4);

      // Another organization sees none of them; bad parameters are 400.
      const stranger = await t.newOrg("stranger");
      expect((await t.call("GET", "/v1/orders", { key: stranger.key })).body.data).toEqual([]);
      expect((await t.call("GET", `/v1/orders?agent_id=${a.agent.id}`, { key: stranger.key })).body.data).toEqual([]);
      for (const q of ["?status=bogus", "?limit=0", "?limit=201", "?cursor=not-a-cursor", "?agent_id=nope", "?foo=1"]) {
        expectProblem(await list(q), 400, "invalid_request");
      }
    });

    test("DELETE of an order awaiting its signature cancels it locally and releases its reservation", async () => {
      const tr = await newTrader(t);
      const order = await approved(t, tr);
      expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(5);
      const res = await t.call("DELETE", `/v1/orders/${order.order_id}`, { key: tr.key });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(ORDER_FIELDS);
      expect(res.body.status).toBe("cancelled");
      expect(statuses(res.body)).toEqual(["awaiting_signature", "cancelled"]);
      expect(await t.app.services.venue.getOrder({ venue_order_id: order.order_hash })).toBeNull();
      const agent = await getAgent(t, tr);
      expect(agent.daily_volume.used_usdc).toBe(0);
      expect(agent.open_orders).toBe(0);
      expectProblem(await t.call("DELETE", `/v1/orders/${order.order_id}`, { key: tr.key }), 409, "invalid_state");
      // The released room can be used again.
      await patchDaily(tr, 5);
      expect((await postIntent(t, tr)).status).toBe(201);
    });

    test("DELETE of an open resting order cancels it at the venue and takes it off the book", async () => {
      const tr = await newTrader(t);
      // 5 / 0.42 → 11.90 shares, 4.998 USDC.
      expect(restingAt(rec.paper, DEM_YES, "bids", 0.42)).toBe(0);
      const { order } = await placed(tr, { price: 0.42 });
      expect(restingAt(rec.paper, DEM_YES, "bids", 0.42)).toBe(11.9);
      expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(4.998);

      const res = await t.call("DELETE", `/v1/orders/${order.order_id}`, { key: tr.key });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe("cancelled");
      expect(res.body.venue_order_id).toBe(order.order_hash);
      expect(statuses(res.body)).toEqual(["awaiting_signature", "submitting", "open", "cancelled"]);
      expect((await t.app.services.venue.getOrder({ venue_order_id: order.order_hash }))?.status).toBe("cancelled");
      expect(restingAt(rec.paper, DEM_YES, "bids", 0.42)).toBe(0);
      const agent = await getAgent(t, tr);
      expect(agent.daily_volume.used_usdc).toBe(0);
      expect(agent.open_orders).toBe(0);
      expectProblem(await t.call("DELETE", `/v1/orders/${order.order_id}`, { key: tr.key }), 409, "invalid_state");
    });

    test("DELETE of a resting order that has filled at the venue records the fill instead of a cancellation", async () => {
      const maker = await newTrader(t);
      const taker = await newTrader(t);
      // The maker's bid at 0.49 becomes the best bid: 5 / 0.49 → 10.20 shares, 4.998 USDC.
      const { order, res } = await placed(maker, { price: 0.49 });
      expect(res.body.status).toBe("open");
      // The taker sells the same 10.20 shares at 0.49 and takes the whole bid.
      await holdShares(t, taker);
      const { res: sold } = await placed(taker, { side: "sell", price: 0.49 });
      expect(sold.body.status).toBe("filled");
      const atVenue = await t.app.services.venue.getOrder({ venue_order_id: order.order_hash });
      expect(atVenue).toEqual({ venue_order_id: order.order_hash, status: "matched", filled_usdc: "4.998" });

      const del = await t.call("DELETE", `/v1/orders/${order.order_id}`, { key: maker.key });
      const p = expectProblem(del, 409, "invalid_state");
      expect(p.order_status).toBe("filled");
      const got = await getOrder(t, maker.key, order.order_id);
      expect(got.status).toBe("filled");
      expect(got.filled_usdc).toBe(4.998);
      // The filled notional stays counted against the daily volume.
      const agent = await getAgent(t, maker);
      expect(agent.daily_volume.used_usdc).toBe(4.998);
      expect(agent.open_orders).toBe(0);
    });

    test("DELETE of a filled order is 409 and changes nothing", async () => {
      const tr = await newTrader(t);
      const { order, res } = await placed(tr, { size_usdc: 5.2, price: 0.52 });
      expect(res.body.status).toBe("filled");
      const p = expectProblem(await t.call("DELETE", `/v1/orders/${order.order_id}`, { key: tr.key }), 409, "invalid_state");
      expect(p.order_status).toBe("filled");
      const got = await getOrder(t, tr.key, order.order_id);
      expect(got.status).toBe("filled");
      expect(statuses(got)).toEqual(["awaiting_signature", "submitting", "filled"]);
      expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(5.2);
    });

    test("the expiry sweep expires unsigned orders past their deadline and releases their reservations", async () => {
      const tr = await newTrader(t);
      const a = await approved(t, tr);
      const b = await approved(t, tr, { market_id: MADRID_YES, price: 0.18 });
      // 5 / 0.40 = 12.5 shares, 5 USDC, resting.
      const { order: open } = await placed(tr, { price: 0.4 });
      expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(14.9986);

      // Nothing is due yet.
      await t.app.services.orders.expireDue(new Date());
      expect((await getOrder(t, tr.key, a.order_id)).status).toBe("awaiting_signature");

      const n = await t.app.services.orders.expireDue(new Date(Date.now() + 10 * 60_000));
      expect(n).toBeGreaterThanOrEqual(2);
      for (const o of [a, b]) {
        const got = await getOrder(t, tr.key, o.order_id);
        expect(got.status).toBe("expired");
        expect(statuses(got)).toEqual(["awaiting_signature", "expired"]);
      }
      expect((await getOrder(t, tr.key, open.order_id)).status).toBe("open");
      const agent = await getAgent(t, tr);
      expect(agent.daily_volume.used_usdc).toBe(5);
      expect(agent.open_orders).toBe(1);

      // An expired order is never forwarded.
      const sig = await signed(tr, a);
      const res = await submitSigned(t, tr.key, a.order_id, sig);
      expect([409, 410]).toContain(res.status);
      expect(rec.posts.has(a.order_hash)).toBe(false);
    });
  });

  test("one expiry pass expires every due order, past a page of 500, across agents, and releases their reservations", async () => {
    const limits = { min_order_usdc: 1, max_order_usdc: 1_000, daily_volume_usdc: 1_000_000, capital_usdc: 1_000_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, max_depth_share: 1, max_slippage: 1, duplicate_window_s: 0, max_orders_per_minute: 10_000, max_open_orders: 10_000, runaway_trip_count: 10_000 };
    const traders = await Promise.all([0, 1, 2].map(() => newTrader(t, { body: { limits } })));
    const PER_AGENT = 370; // 1,110 in all
    for (const tr of traders) {
      for (let i = 0; i < PER_AGENT; i += 10) {
        await Promise.all(Array.from({ length: Math.min(10, PER_AGENT - i) }, () => approved(t, tr, { size_usdc: 5, price: 0.5 })));
      }
      const agent = await getAgent(t, tr);
      expect(agent.open_orders).toBe(PER_AGENT);
      expect(agent.daily_volume.used_usdc).toBe(5 * PER_AGENT);
    }
    const awaiting = async () => {
      const rows = await db.db.select({ agentId: orders.agentId, status: orders.status }).from(orders).where(eq(orders.status, "awaiting_signature"));
      return rows.filter((r) => traders.some((tr) => tr.agent.id === r.agentId)).length;
    };
    expect(await awaiting()).toBe(3 * PER_AGENT);

    // Pages of 500 (the sweep reads 2,000 at a time): 1,110 due orders take three.
    const n = await t.app.services.orders.expireDue(new Date(Date.now() + 10 * 60_000), { page: 500 });
    expect(n).toBeGreaterThanOrEqual(3 * PER_AGENT);
    expect(await awaiting()).toBe(0);
    for (const tr of traders) {
      const agent = await getAgent(t, tr);
      expect(agent.open_orders).toBe(0);
      expect(agent.daily_volume.used_usdc).toBe(0);
    }
  }, 120_000);

  describe("kill switch (payload mode)", () => {
    test("cancels the order awaiting its signature and the open one, trips the breaker, and holds until resume", async () => {
      const tr = await newTrader(t);
      const awaiting = await approved(t, tr);
      const awaitingSig = await signed(tr, awaiting);
      // 5 / 0.41 → 12.19 shares, 4.9979 USDC, resting.
      const { order: open } = await placed(tr, { price: 0.41 });
      expect(restingAt(rec.paper, DEM_YES, "bids", 0.41)).toBe(12.19);
      expect((await getAgent(t, tr)).open_orders).toBe(2);

      const res = await t.call("POST", `/v1/agents/${tr.agent.id}/kill`, { key: tr.key });
      expect(res.status).toBe(200);
      const k = res.body;
      expect(Object.keys(k).sort()).toEqual(
        ["agent", "agent_id", "cancelled", "completed_at", "credentials_deleted", "duration_ms", "failed", "filled", "kill_id", "started_at"].sort(),
      );
      expect(k.kill_id).toMatch(/^kil_[0-9a-z]+$/);
      expect(k.agent_id).toBe(tr.agent.id);
      expect([...k.cancelled].sort()).toEqual([awaiting.order_id, open.order_id].sort());
      expect(k.failed).toEqual([]);
      expect(k.credentials_deleted).toBe(false);
      expect(k.started_at).toMatch(ISO);
      expect(k.completed_at).toMatch(ISO);
      expect(Number.isInteger(k.duration_ms)).toBe(true);
      expect(k.duration_ms).toBeGreaterThanOrEqual(0);
      expect(k.duration_ms).toBeLessThan(5000);
      expect(k.agent.breaker.state).toBe("tripped");
      expect(k.agent.breaker.reason).toBe("kill");
      expect(k.agent.mode).toBe("payload");
      expect(k.agent.open_orders).toBe(0);
      expect(k.agent.daily_volume.used_usdc).toBe(0);

      // Both cancelled here, the open one also at the venue.
      for (const id of [awaiting.order_id, open.order_id]) {
        const got = await getOrder(t, tr.key, id);
        expect(got.status).toBe("cancelled");
        expect(got.flagged_for_review).toBe(false);
        expect(got.history.at(-1).status).toBe("cancelled");
      }
      expect((await t.app.services.venue.getOrder({ venue_order_id: open.order_hash }))?.status).toBe("cancelled");
      expect(restingAt(rec.paper, DEM_YES, "bids", 0.41)).toBe(0);

      // New intents are rejected by the breaker; the order approved before the kill is not forwarded.
      const intent = expectProblem(await postIntent(t, tr), 422, "risk_rejected");
      expect(intent.failures.map((f: any) => [f.check, f.code])).toEqual([["breaker", "breaker_tripped"]]);
      expectChecks(intent.checks, ["breaker"]);
      refused(await submitSigned(t, tr.key, awaiting.order_id, awaitingSig), 409, "invalid_state", awaitingSig);
      expect(rec.posts.has(awaiting.order_hash)).toBe(false);

      // A second kill is harmless: same shape, nothing left to cancel.
      const again = await t.call("POST", `/v1/agents/${tr.agent.id}/kill`, { key: tr.key, body: { reason: "again" } });
      expect(again.status).toBe(200);
      expect(Object.keys(again.body).sort()).toEqual(Object.keys(k).sort());
      expect(again.body.kill_id).not.toBe(k.kill_id);
      expect(again.body.cancelled).toEqual([]);
      expect(again.body.failed).toEqual([]);
      expect(again.body.agent.breaker).toMatchObject({ state: "tripped", reason: "kill" });
      expect((await getAgent(t, tr)).breaker.state).toBe("tripped");

      // Resume closes the breaker; intents are approved and forwarded again.
      const resumed = await t.call("POST", `/v1/agents/${tr.agent.id}/resume`, { key: tr.key });
      expect(resumed.status).toBe(200);
      expect(resumed.body.breaker).toMatchObject({ state: "closed", reason: null });
      const after = await approved(t, tr);
      expectChecks(after.risk.checks);
      expect((await submitSigned(t, tr.key, after.order_id, await signed(tr, after))).status).toBe(200);
      // The order cancelled by the kill stays cancelled.
      refused(await submitSigned(t, tr.key, awaiting.order_id, awaitingSig), 409, "invalid_state", awaitingSig);
    });

    test("a kill during a submission waits for the venue's answer, then cancels the order there", async () => {
      const tr = await newTrader(t);
      // 5 / 0.12 → 41.66 shares, 4.9992 USDC, resting where no seeded bid is.
      const order = await approved(t, tr, { market_id: MADRID_YES, price: 0.12 });
      const sig = await signed(tr, order);
      rec.control.delayMs = 150;
      let submit: Promise<TestResponse>;
      let kill: TestResponse;
      try {
        submit = submitSigned(t, tr.key, order.order_id, sig);
        // The venue call has started: the row says submitting.
        for (let i = 0; i < 100 && !rec.statusAtPost.has(order.order_hash); i++) await sleep(5);
        expect(rec.statusAtPost.get(order.order_hash)).toBe("submitting");
        kill = await t.call("POST", `/v1/agents/${tr.agent.id}/kill`, { key: tr.key });
      } finally {
        rec.control.delayMs = 0;
      }
      const submitted = await submit;
      expect(submitted.status).toBe(200);
      expect(kill.status).toBe(200);
      expect(kill.body.cancelled).toEqual([order.order_id]);
      expect(kill.body.failed).toEqual([]);
      expect((await t.app.services.venue.getOrder({ venue_order_id: order.order_hash }))?.status).toBe("cancelled");
      expect(restingAt(rec.paper, MADRID_YES, "bids", 0.12)).toBe(0);
      const got = await getOrder(t, tr.key, order.order_id);
      expect(got.status).toBe("cancelled");
      expect(statuses(got)).toEqual(["awaiting_signature", "submitting", "open", "cancelled"]);
      expect((await getAgent(t, tr)).daily_volume.used_usdc).toBe(0);
    });

    test("another organization cannot kill the agent; the agent keeps its orders", async () => {
      const tr = await newTrader(t);
      const order = await approved(t, tr);
      const stranger = await t.newOrg("stranger");
      expectProblem(await t.call("POST", `/v1/agents/${tr.agent.id}/kill`, { key: stranger.key }), 404, "not_found");
      expect((await getOrder(t, tr.key, order.order_id)).status).toBe("awaiting_signature");
      expect((await getAgent(t, tr)).breaker.state).toBe("closed");
    });
  });

  async function patchDaily(tr: Trader, used: number) {
    const res = await t.call("PATCH", `/v1/agents/${tr.agent.id}/limits`, { key: tr.key, body: { daily_volume_usdc: used } });
    expect(res.status).toBe(200);
  }
});
