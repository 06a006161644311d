/**
 * Helpers of the payload-mode order suites (test/http/intents.test.ts, test/http/orders.test.ts,
 * test/integration/payload-flow.test.ts): fixture tokens, traders with real viem accounts, intents,
 * signatures, and problem-details assertions.
 */
import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { LocalAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { TestApp, TestResponse } from "./app.ts";

export const CHECK_NAMES = [
  "breaker",
  "market_filters",
  "order_size",
  "daily_volume",
  "concentration",
  "kelly_cap",
  "price_sanity",
  "liquidity_impact",
] as const;

export const EXCHANGE_V2 = "0xE111180000d2663C0091e4f400237545B87B996B";
export const NEG_RISK_EXCHANGE_V2 = "0xe2222d279d744050d28e00520010520000310F59";
export const ZERO32 = `0x${"0".repeat(64)}`;
export const ORDER_TYPE_FIELDS = [
  { name: "salt", type: "uint256" },
  { name: "maker", type: "address" },
  { name: "signer", type: "address" },
  { name: "tokenId", type: "uint256" },
  { name: "makerAmount", type: "uint256" },
  { name: "takerAmount", type: "uint256" },
  { name: "side", type: "uint8" },
  { name: "signatureType", type: "uint8" },
  { name: "timestamp", type: "uint256" },
  { name: "metadata", type: "bytes32" },
  { name: "builder", type: "bytes32" },
];
export const DOMAIN_TYPE_FIELDS = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
];

const FIXTURE = JSON.parse(readFileSync(resolve(import.meta.dir, "../../fixtures/markets.json"), "utf8")) as any[];

/** The token id of `outcome` in the fixture market whose question starts with `question`. */
export function token(question: string, outcome: "Yes" | "No"): string {
  const m = FIXTURE.find((x) => x.question.startsWith(question));
  if (!m) throw new Error(`no fixture market ${question}`);
  const t = m.tokens.find((x: any) => x.outcome === outcome);
  if (!t) throw new Error(`no ${outcome} token in ${question}`);
  return t.token_id;
}

/** Fixture tokens. DEM: tick 0.01, bid 0.48 / ask 0.50 (Yes), bid 0.50 / ask 0.52 (No). */
export const DEM_YES = token("Will the Democratic nominee", "Yes");
export const DEM_NO = token("Will the Democratic nominee", "No");
/** Neg-risk market, tick 0.001, bid 0.238 / ask 0.242. */
export const NEWSOM_YES = token("Will Gavin Newsom", "Yes");
/** Tick 0.001, bid 0.312 / ask 0.318. */
export const BTC_YES = token("Will Bitcoin reach", "Yes");
/** Tick 0.01, bid 0.17 / ask 0.19. */
export const MADRID_YES = token("Will Real Madrid", "Yes");
/** Not accepting orders. */
export const FED_YES = token("Will the Fed cut", "Yes");

export interface Trader {
  key: string;
  agent: any;
  account: LocalAccount;
}

/** A new organization (unless `key` is given) and an agent whose wallet is a fresh viem account. */
export async function newTrader(t: TestApp, opts: { key?: string; body?: Record<string, unknown> } = {}): Promise<Trader> {
  const account = privateKeyToAccount(generatePrivateKey());
  const { key, agent } = await t.newAgent({ key: opts.key, body: { wallet_address: account.address, ...(opts.body ?? {}) } });
  return { key, agent, account };
}

export function intentBody(tr: Trader, body: Record<string, unknown> = {}): Record<string, unknown> {
  return { agent_id: tr.agent.id, market_id: DEM_YES, side: "buy", size_usdc: 5, price: 0.5, ...body };
}

export function postIntent(t: TestApp, tr: Trader, body: Record<string, unknown> = {}, query = ""): Promise<TestResponse> {
  return t.call("POST", `/v1/orders/intent${query}`, { key: tr.key, body: intentBody(tr, body) });
}

/** An approved intent (asserts 201). */
export async function approved(t: TestApp, tr: Trader, body: Record<string, unknown> = {}): Promise<any> {
  const res = await postIntent(t, tr, body);
  if (res.status !== 201) throw new Error(`expected 201, got ${res.status}: ${res.text}`);
  return res.body;
}

export function sign(account: LocalAccount, unsigned: any): Promise<`0x${string}`> {
  return account.signTypedData(unsigned);
}

export function submitSigned(t: TestApp, key: string, orderId: string, signature: string): Promise<TestResponse> {
  return t.call("POST", "/v1/orders/submit-signed", { key, body: { order_id: orderId, signature } });
}

export async function getAgent(t: TestApp, tr: Trader): Promise<any> {
  const res = await t.call("GET", `/v1/agents/${tr.agent.id}`, { key: tr.key });
  if (res.status !== 200) throw new Error(`agent read failed: ${res.status} ${res.text}`);
  return res.body;
}

export async function getOrder(t: TestApp, key: string, id: string): Promise<any> {
  const res = await t.call("GET", `/v1/orders/${id}`, { key });
  if (res.status !== 200) throw new Error(`order read failed: ${res.status} ${res.text}`);
  return res.body;
}

export async function patchLimits(t: TestApp, tr: Trader, limits: Record<string, unknown>): Promise<any> {
  const res = await t.call("PATCH", `/v1/agents/${tr.agent.id}/limits`, { key: tr.key, body: limits });
  if (res.status !== 200) throw new Error(`limits patch failed: ${res.status} ${res.text}`);
  return res.body;
}

/** Asserts an RFC 9457 problem with the given status and code; answers its body. */
export function expectProblem(res: TestResponse, status: number, code: string): any {
  if (res.status !== status || res.body?.code !== code) throw new Error(`expected ${status} ${code}, got ${res.status}: ${res.text}`);
  expect(res.headers.get("content-type")).toStartWith("application/problem+json");
  expect(res.body.status).toBe(status);
  expect(res.body.code).toBe(code);
  expect(typeof res.body.type).toBe("string");
  expect(typeof res.body.title).toBe("string");
  expect(typeof res.body.detail).toBe("string");
  expect(res.text).not.toMatch(/\n\s+at |\.tsx?:\d+|node_modules/);
  return res.body;
}

/** A 400 invalid_request whose errors[] name `path` (a JSON pointer prefix such as "/side"). */
export function expectInvalid(res: TestResponse, path: string): any {
  const p = expectProblem(res, 400, "invalid_request");
  expect(Array.isArray(p.errors)).toBe(true);
  expect(p.errors.length).toBeGreaterThan(0);
  for (const e of p.errors) {
    expect(typeof e.path).toBe("string");
    expect(typeof e.message).toBe("string");
  }
  const paths: string[] = p.errors.map((e: any) => e.path);
  if (!paths.some((x) => x === path || x.startsWith(`${path}/`))) throw new Error(`no error at ${path}: ${res.text}`);
  return p;
}

/** The eight checks, in the fixed order, with their passed flags. */
export function expectChecks(checks: any, failing: string[] = []): void {
  expect(checks).toEqual(CHECK_NAMES.map((check) => ({ check, passed: !failing.includes(check) })));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Makes `tr` hold shares of `market`: it buys them from the book at the best ask (the paper venue
 * reports the fill in-process, and the service counts it in the agent's position). A sell needs them.
 */
export async function holdShares(t: TestApp, tr: Trader, opts: { market_id?: string; size_usdc?: number; price?: number } = {}): Promise<void> {
  const order = await approved(t, tr, { market_id: opts.market_id ?? DEM_YES, side: "buy", size_usdc: opts.size_usdc ?? 6, price: opts.price ?? 0.5 });
  const res = await submitSigned(t, tr.key, order.order_id, await sign(tr.account, order.unsigned_order));
  if (res.status !== 200 || res.body.status !== "filled") throw new Error(`the buy did not fill: ${res.status} ${res.text}`);
  await t.app.services.venueReports.settled();
}
