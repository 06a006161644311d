/**
 * venue_auth: the SDK's L2 headers over the exact POST /order body the service sends. Checked against
 * the known vector, the service's own serializer, and end to end through the service (VENUE=clob
 * adapter) to the venue simulator, which verifies the HMAC over the body it receives.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { OrderType as OfficialOrderType, orderToJsonV2 } from "@polymarket/clob-client-v2";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BrokerClient, VenueRejectedError, buildL2Signature, buildVenueAuth, serializePostOrderBody, type PayloadIntentAnswer } from "../../packages/sdk/src/client.ts";
import { serializePostOrderBody as serviceBody } from "../../src/venues/clob/clob-venue.ts";
import { ClobVenue } from "../../src/venues/clob/clob-venue.ts";
import { verifyL2Signature } from "../../src/venues/clob/l2-auth.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { sharedPglite } from "../support/databases.ts";
import { DEM_YES } from "../support/payload.ts";
import { VECTOR_ORDER } from "../support/vector-order.ts";
import { newOrgClient, serveTestApp, type LiveService } from "./serve.ts";

/** The CONTRACT 6 vector's order with a builder code. */
const message = { ...VECTOR_ORDER, builder: `0x${"ab".repeat(32)}` as const };

describe("venue_auth building blocks", () => {
  test("the L2 signature matches CONTRACT 11.2's known vector", () => {
    expect(buildL2Signature({ secret: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", timestamp: 1000000, method: "test-sign", path: "/orders", body: '{"hash": "0x123"}' })).toBe(
      "ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=",
    );
  });

  test("the POST /order body is the service's and the official client's, byte for byte, for each side, order type and expiration", () => {
    const sig = `0x${"1b".repeat(65)}`;
    for (const side of [0, 1] as const)
      for (const [order_type, expiration] of [["GTC", "0"], ["GTD", "1900000000"], ["FOK", "0"], ["FAK", ""]] as const) {
        const order = { ...message, side };
        const sdk = serializePostOrderBody({ order, signature: sig, order_type, expiration, owner: "key-1" });
        expect(sdk).toBe(serviceBody({ order: order as any, signature: sig, order_type, expiration, owner: "key-1" }));
        // And the official Polymarket client's own body for the same order.
        const official = { ...order, side: side === 0 ? "BUY" : "SELL", expiration: expiration || "0", signature: sig } as any;
        expect(sdk).toBe(JSON.stringify(orderToJsonV2(official, "key-1", OfficialOrderType[order_type])));
      }
  });

  test("buildVenueAuth signs that body under POST /order, and the service's verifier accepts it", () => {
    const secret = Buffer.from("0123456789abcdef0123456789abcdef").toString("base64url");
    const sig = `0x${"1c".repeat(65)}`;
    const auth = buildVenueAuth({ credentials: { api_key: "k", api_secret: secret, passphrase: "p" }, order: message, signature: sig, order_type: "GTC", expiration: "0", timestamp: 1700000000 });
    expect(auth).toMatchObject({ api_key: "k", passphrase: "p", timestamp: "1700000000" });
    expect(auth.signature).toMatch(/^[A-Za-z0-9_-]+=*$/);
    const body = serviceBody({ order: message as any, signature: sig, order_type: "GTC", expiration: "0", owner: "k" });
    expect(verifyL2Signature({ secret, timestamp: auth.timestamp, method: "POST", path: "/order", body, signature: auth.signature })).toBe(true);
    expect(verifyL2Signature({ secret, timestamp: auth.timestamp, method: "POST", path: "/order", body: body.replace("GTC", "GTD"), signature: auth.signature })).toBe(false);
  });
});

describe("signAndSubmit with venue_auth through the service to the venue simulator", () => {
  let sim: VenueSim;
  let live: LiveService;
  beforeAll(async () => {
    sim = startVenueSim({ port: 0, marketsFile: resolve(import.meta.dir, "../../fixtures/markets.json") });
    live = await serveTestApp(await sharedPglite(), { venue: new ClobVenue({ baseUrl: sim.url, timeoutMs: 3000 }) });
  });
  afterAll(async () => {
    await live?.stop();
    await sim?.stop();
  });

  test("the simulator verifies the SDK's HMAC over the body the service sent; a wrong secret is refused", async () => {
    const { client } = await newOrgClient(live.url);
    const account = privateKeyToAccount(generatePrivateKey());
    const creds = { api_key: `key-${account.address.slice(2, 10)}`, api_secret: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64"), passphrase: "pass-1" };
    const reg = await fetch(`${sim.url}/_sim/credentials`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...creds, address: account.address, scopes: ["order:place", "order:cancel"] }),
    });
    expect(reg.status).toBe(201);
    const agent = await client.createAgent({ wallet_address: account.address });
    const intent = { agent_id: agent.id, market_id: DEM_YES, side: "buy" as const, size_usdc: 5, price: 0.45 };

    const good = (await client.placeIntent(intent)) as PayloadIntentAnswer;
    const submitted = await client.signAndSubmit(good, account, { venueCredentials: creds });
    expect(submitted.status).toBe("open");
    expect(submitted.venue_order_id).toBe(good.order_hash);
    expect(sim.state.venue.order(good.order_hash)).toBeDefined();

    const bad = (await client.placeIntent({ ...intent, price: 0.44 })) as PayloadIntentAnswer;
    const err = await client.signAndSubmit(bad, account, { venueCredentials: { ...creds, api_secret: Buffer.from("x".repeat(32)).toString("base64") } }).catch((e) => e);
    expect(err).toBeInstanceOf(VenueRejectedError);
    expect(err.status).toBe(502);
    expect(err.venueError).toContain("Unauthorized");
    expect(JSON.stringify(err.problem)).not.toContain(creds.api_secret);
    expect((await client.getOrder(bad.order_id)).status).toBe("rejected");
  });
});
