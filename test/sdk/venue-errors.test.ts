/**
 * The venue-side error types through the SDK, with the service on the CLOB adapter and the venue
 * simulator: invalid_credentials (the venue refuses the key), venue_timeout (the venue answers too late;
 * the order is kept as unknown).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolve } from "node:path";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { InvalidCredentialsError, VenueTimeoutError, type PayloadIntentAnswer } from "../../packages/sdk/src/client.ts";
import { ClobVenue } from "../../src/venues/clob/clob-venue.ts";
import { startVenueSim, type VenueSim } from "../../src/venues/sim/sim-server.ts";
import { sharedPglite } from "../support/databases.ts";
import { DEM_YES } from "../support/payload.ts";
import { newOrgClient, serveTestApp, type LiveService } from "./serve.ts";

let sim: VenueSim;
let live: LiveService;
beforeAll(async () => {
  sim = startVenueSim({ port: 0, marketsFile: resolve(import.meta.dir, "../../fixtures/markets.json") });
  live = await serveTestApp(await sharedPglite(), { venue: new ClobVenue({ baseUrl: sim.url, timeoutMs: 5000 }), env: { VENUE_TIMEOUT_MS: "400" } });
});
afterAll(async () => {
  await live?.stop();
  await sim?.stop();
});

const faults = (f: Record<string, number>) =>
  fetch(`${sim.url}/_sim/faults`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(f) });

test("credentials the venue does not know: InvalidCredentialsError, the agent stays in payload mode", async () => {
  const { client } = await newOrgClient(live.url);
  const agent = await client.createAgent({ wallet_address: privateKeyToAccount(generatePrivateKey()).address });
  const err = await client
    .setCredentials(agent.id, { api_key: "unknown", api_secret: Buffer.from("k".repeat(32)).toString("base64"), passphrase: "p", scopes: ["order:place"] })
    .catch((e) => e);
  expect(err).toBeInstanceOf(InvalidCredentialsError);
  expect(err.status).toBe(400);
  expect(err.code).toBe("invalid_credentials");
  expect((await client.getAgent(agent.id)).mode).toBe("payload");
});

test("a venue slower than the service's timeout: VenueTimeoutError, the order kept as unknown", async () => {
  const { client } = await newOrgClient(live.url);
  const account = privateKeyToAccount(generatePrivateKey());
  const creds = { api_key: `slow-${account.address.slice(2, 10)}`, api_secret: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64"), passphrase: "pp" };
  await fetch(`${sim.url}/_sim/credentials`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...creds, address: account.address, scopes: ["order:place", "order:cancel"] }) });
  const agent = await client.createAgent({ wallet_address: account.address });
  const answer = (await client.placeIntent({ agent_id: agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.45 })) as PayloadIntentAnswer;
  expect((await faults({ latency_ms: 1500 })).status).toBe(200);
  try {
    const err = await client.signAndSubmit(answer, account, { venueCredentials: creds }).catch((e) => e);
    expect(err).toBeInstanceOf(VenueTimeoutError);
    expect(err.status).toBe(504);
    expect(err.code).toBe("venue_timeout");
    expect((await client.getOrder(answer.order_id)).status).toBe("unknown");
  } finally {
    await faults({ latency_ms: 0 });
  }
});
