/**
 * Set-up of the suites that run the service with VENUE=clob against the venue simulator
 * (service-clob*.test.ts): the venue as the service builds it from that configuration, the fixture
 * market they trade, signing-only wallets of the official client, and an agent of a given wallet.
 */
import { expect } from "bun:test";
import { type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { loadConfig } from "../../src/config.ts";
import { createVenue } from "../../src/venues/create-venue.ts";
import markets from "../../fixtures/markets.json" with { type: "json" };
import { ADMIN_TOKEN, type TestApp } from "../support/app.ts";
import { officialSigner } from "../support/official-client.ts";

/** The first plain 0.01-tick market of fixtures/markets.json (Yes: bids 0.48, asks 0.50). */
export const MARKET = (markets as any[]).find((m) => m.accepting_orders && !m.closed && !m.neg_risk && m.tick_size === "0.01");
/** Its Yes token. */
export const TOKEN: string = MARKET.tokens[0].token_id;

/**
 * The configuration VENUE=clob at the simulator `url`, the venue createVenue builds from it (as
 * main.ts does), and that environment, for the test app.
 */
export async function clobVenueAt(url: string) {
  const env = { VENUE: "clob", VENUE_URL: url };
  const config = loadConfig({ ADMIN_TOKEN, ...env });
  return { config, env, venue: await createVenue(config) };
}

/** A viem wallet client of the private key `key`, as the official client's signer (signing is local). */
export const walletOf = (key: Hex) => officialSigner(privateKeyToAccount(key));

/** An agent of `wallet` in a new organization, its limits set to `limits`; each step's status asserted. */
export async function agentOfWallet(t: TestApp, wallet: string, limits: Record<string, unknown>): Promise<{ key: string; agentId: string }> {
  const org = await t.call("POST", "/v1/orgs", { body: { name: "clob" }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(org.status).toBe(201);
  const key: string = org.body.api_key.key;
  const agent = await t.call("POST", "/v1/agents", { key, body: { wallet_address: wallet } });
  expect(agent.status).toBe(201);
  const patched = await t.call("PATCH", `/v1/agents/${agent.body.id}/limits`, { key, body: limits });
  expect(patched.status).toBe(200);
  return { key, agentId: agent.body.id as string };
}
