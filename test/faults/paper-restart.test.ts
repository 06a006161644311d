/**
 * The default venue across a restart: the real service (`bun src/main.ts`, VENUE=paper, the embedded
 * markets) takes resting orders in delegated and payload mode, stops (SIGTERM) and starts again on the
 * same data. Its paper venue holds those orders again (docs/decisions.md, "The paper venue restores its
 * resting orders"):
 * - GET answers them open, and another organization still cannot see or cancel them;
 * - DELETE /v1/orders/{id} cancels one at the venue with the normal answer, and the kill switch another;
 * - a crossing order placed after the restart fills the restored one: the taker is answered filled, and
 *   the maker's cancel finds it filled at the venue.
 * On PGlite (temp DATA_DIR) and, when TEST_DATABASE_URL is set, on a PostgreSQL database of its own
 * (`<name>_paperrestart`, created on that server).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { privateKeyToAccount } from "viem/accounts";
import markets from "../../fixtures/markets.json" with { type: "json" };
import { ADMIN_TOKEN, type ServiceProcess, startService } from "../support/service-process.ts";
import { ownPostgresDatabase } from "../support/own-postgres-database.ts";

const ACCOUNT = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
// A market with a spread of two ticks: a bid one tick above the best bid rests alone at its price.
const MARKET = (markets as any[]).find(
  (m) =>
    m.accepting_orders &&
    !m.closed &&
    !m.neg_risk &&
    m.tick_size === "0.01" &&
    Math.round((Number(m.tokens[0].book.asks[0].price) - Number(m.tokens[0].book.bids[0].price)) * 100) === 2,
);
const TOKEN: string = MARKET.tokens[0].token_id;
const BEST_BID = Number(MARKET.tokens[0].book.bids[0].price);
const INSIDE = Math.round((BEST_BID + 0.01) * 100) / 100;
const BEST_ASK = Number(MARKET.tokens[0].book.asks[0].price);
const LIMITS = { duplicate_window_s: 0, max_orders_per_minute: 100_000, max_open_orders: 100_000, daily_volume_usdc: 1_000_000, capital_usdc: 1_000_000, max_market_exposure_pct: 1, kelly_fallback_pct: 1, book_max_age_s: 3600, max_order_usdc: 1000 };
const SEAL = Buffer.alloc(32, 7).toString("base64");

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function call(base: string, method: string, path: string, key: string | null, body?: unknown) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key) headers["x-api-key"] = key;
  const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

function scenario(name: string, env: () => Promise<Record<string, string> | null>, skip = false) {
  (skip ? test.skip : test)(`${name}: orders resting on the paper venue rest there again after a restart`, async () => {
    const extra = await env();
    if (!extra) return;
    const start = () => startService({ ...extra, VENUE: "paper", SEAL_SECRET_KEY: SEAL }, 60_000);

    // ---- first life: three resting orders
    let s: ServiceProcess = await start();
    let stopped = false;
    try {
      const made = await fetch(`${s.url}/v1/orgs`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ name: "paper restart" }),
      });
      const key = ((await made.json()) as any).api_key.key as string;
      const newAgent = async (delegated: boolean) => {
        const a = await call(s.url, "POST", "/v1/agents", key, { wallet_address: ACCOUNT.address, limits: LIMITS });
        expect(a.status).toBe(201);
        if (delegated) {
          const c = { api_key: crypto.randomUUID(), api_secret: randomBytes(32).toString("base64url"), passphrase: randomBytes(16).toString("hex") };
          expect((await call(s.url, "POST", `/v1/agents/${a.body.id}/creds`, key, { ...c, scopes: ["order:place", "order:cancel"] })).status).toBe(200);
        }
        return a.body.id as string;
      };
      const maker = await newAgent(true);
      const killed = await newAgent(true);
      const payload = await newAgent(false);
      const taker = await newAgent(true);

      // The maker's bid, one tick inside the spread: the best bid, alone at its price.
      const filledLater = await call(s.url, "POST", "/v1/orders/intent", key, { agent_id: maker, market_id: TOKEN, side: "buy", size_usdc: 9, price: INSIDE });
      expect(filledLater.status).toBe(201);
      expect(filledLater.body.status).toBe("open");
      // A payload bid at the seeded best bid, signed and submitted: it rests behind the seeded level.
      const intent = await call(s.url, "POST", "/v1/orders/intent", key, { agent_id: payload, market_id: TOKEN, side: "buy", size_usdc: 5, price: BEST_BID });
      expect(intent.status).toBe(201);
      const signature = await ACCOUNT.signTypedData(intent.body.unsigned_order);
      const submitted = await call(s.url, "POST", "/v1/orders/submit-signed", key, { order_id: intent.body.order_id, signature });
      expect(submitted.status).toBe(200);
      expect(submitted.body.status).toBe("open");
      const cancelledLater = intent.body.order_id as string;
      // A delegated bid below the best bid, for the kill switch.
      const killedLater = await call(s.url, "POST", "/v1/orders/intent", key, { agent_id: killed, market_id: TOKEN, side: "buy", size_usdc: 5, price: Math.round((BEST_BID - 0.01) * 100) / 100 });
      expect(killedLater.body.status).toBe("open");
      // The taker buys shares at the best ask, to sell after the restart (its position outlives it).
      const bought = await call(s.url, "POST", "/v1/orders/intent", key, { agent_id: taker, market_id: TOKEN, side: "buy", size_usdc: 12, price: BEST_ASK });
      expect(bought.body.status).toBe("filled");
      const held = async () => (await call(s.url, "GET", `/v1/agents/${taker}/positions`, key)).body.positions?.[0]?.shares;
      for (let i = 0; i < 100 && !(await held()); i++) await Bun.sleep(20);
      expect(Number(await held())).toBeGreaterThan(9 / INSIDE);

      // ---- restart
      expect(await s.stop()).toBe(0);
      stopped = true;
      s = await start();
      stopped = false;
      const restored = s.lines.map((l) => JSON.parse(l)).find((j) => j.msg === "paper venue: resting orders restored");
      expect(restored).toMatchObject({ restored: 3, withdrawn_seeded_orders: 0 });

      // (1) The orders read open; another organization can neither read nor cancel them.
      for (const id of [filledLater.body.order_id, cancelledLater, killedLater.body.order_id]) {
        const got = await call(s.url, "GET", `/v1/orders/${id}`, key);
        expect(got.body.status).toBe("open");
      }
      const stranger = await fetch(`${s.url}/v1/orgs`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ name: "stranger" }),
      });
      const strangerKey = ((await stranger.json()) as any).api_key.key as string;
      expect((await call(s.url, "DELETE", `/v1/orders/${cancelledLater}`, strangerKey)).status).toBe(404);

      // (2) A client's cancel is cancelled at the venue, with the normal answer; so is a kill.
      const del = await call(s.url, "DELETE", `/v1/orders/${cancelledLater}`, key);
      expect(del.status).toBe(200);
      expect(del.body.status).toBe("cancelled");
      const kill = await call(s.url, "POST", `/v1/agents/${killed}/kill`, key, {});
      expect(kill.status).toBe(200);
      expect({ cancelled: kill.body.cancelled, filled: kill.body.filled, failed: kill.body.failed }).toEqual({ cancelled: [killedLater.body.order_id], filled: [], failed: [] });
      expect((await call(s.url, "GET", `/v1/orders/${killedLater.body.order_id}`, key)).body.status).toBe("cancelled");

      // (3) A sell crossing the restored bid fills it: the taker is filled, the maker filled at the venue.
      const sell = await call(s.url, "POST", "/v1/orders/intent", key, { agent_id: taker, market_id: TOKEN, side: "sell", size_usdc: 9, price: INSIDE });
      expect(sell.status).toBe(201);
      expect(sell.body.status).toBe("filled");
      // Both sides at the maker's price for the maker's whole size (9 USDC in whole cents of shares).
      const sold = (await call(s.url, "GET", `/v1/orders/${sell.body.order_id}`, key)).body;
      expect(sold.status).toBe("filled");
      expect(sold.filled_usdc).toBeGreaterThan(8.9);
      const late = await call(s.url, "DELETE", `/v1/orders/${filledLater.body.order_id}`, key);
      expect(late.status).toBe(409);
      expect(late.body.order_status).toBe("filled");
      const maker1 = await call(s.url, "GET", `/v1/orders/${filledLater.body.order_id}`, key);
      expect(maker1.body).toMatchObject({ status: "filled", filled_usdc: sold.filled_usdc });
    } finally {
      if (!stopped) expect(await s.stop()).toBe(0);
    }
  }, 180_000);
}

describe("paper venue across a restart of the real process", () => {
  scenario("pglite", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "brokerage-paper-restart-"));
    dirs.push(dataDir);
    return { DATA_DIR: dataDir };
  });
  scenario("postgres", async () => {
    const databaseUrl = await ownPostgresDatabase("paperrestart");
    if (!databaseUrl) return null;
    const dataDir = mkdtempSync(join(tmpdir(), "brokerage-paper-restart-"));
    dirs.push(dataDir);
    return { DATABASE_URL: databaseUrl, DATA_DIR: dataDir };
  }, !process.env.TEST_DATABASE_URL);
});
