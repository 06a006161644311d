/**
 * In-process CPU per intent through app.handle (no HTTP server), for profiling and A/B of the
 * service's own work: `bun run bench/inproc.ts [--db-noop] [--passes N] [--n N]`.
 * PGlite in a temp dir; --db-noop replaces the hot statement by a no-op (measures the service alone).
 * The app is composed as src/main.ts does (configuration, venue, vault, services), without its server.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Elysia } from "elysia";
import { createApp, createServices } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { CredentialVault } from "../src/crypto/credential-vault.ts";
import { loadOrCreateSealKeyPair } from "../src/crypto/seal-key-pair.ts";
import { openDatabase } from "../src/db/database.ts";
import { systemClock } from "../src/domain/clock.ts";
import { IntentBody } from "../src/modules/intents/model.ts";
import { createLogger } from "../src/observability/logger.ts";
import { createVenue } from "../src/venues/create-venue.ts";
import { ADMIN_TOKEN, BENCH_LIMITS, pickIntent } from "./support.ts";

const args = process.argv.slice(2);
const noop = args.includes("--db-noop");
const passes = Number(args[args.indexOf("--passes") + 1] || 0) || 8;
const perPass = Number(args[args.indexOf("--n") + 1] || 0) || 4000;
const conc = 32;

const dir = mkdtempSync(join(tmpdir(), "inproc-"));
const database = await openDatabase({ kind: "pglite", dataDir: dir });
if (noop) (database as any).run = process.env.INPROC_DELAY ? () => new Promise((r) => setTimeout(r, Number(process.env.INPROC_DELAY))) : async () => {};
const config = loadConfig({ ADMIN_TOKEN, LOG_LEVEL: "warn", DATA_DIR: dir });
const logger = createLogger({ level: config.logLevel });
const venue = await createVenue(config, systemClock);
const vault = new CredentialVault(await loadOrCreateSealKeyPair({ dataDir: config.dataDir, keyFile: config.sealKeyFile, secretKeyB64: config.sealSecretKey }));
const app = createApp(createServices({ config, logger, database, venue, vault, clock: systemClock }));

/** A request through app.handle; the body as JSON. */
async function call(method: string, path: string, headers: Record<string, string>, body: unknown) {
  const res = await app.handle(new Request(`http://localhost${path}`, { method, headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) }));
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text);
}
const org = await call("POST", "/v1/orgs", { authorization: `Bearer ${ADMIN_TOKEN}` }, { name: "b" });
const key = org.api_key.key;
const intent = pickIntent();
const bodies: string[] = [];
for (let i = 0; i < conc; i++) {
  const a = await call("POST", "/v1/agents", { "x-api-key": key }, { name: `a${i}`, wallet_address: `0x${(i + 1).toString(16).padStart(40, "0")}` });
  await call("PATCH", `/v1/agents/${a.id}/limits`, { "x-api-key": key }, BENCH_LIMITS);
  bodies.push(JSON.stringify({ market_id: intent.market_id, side: intent.side, size_usdc: intent.size_usdc, price: intent.price, agent_id: a.id }));
}
const bare = new Elysia({ normalize: false }).post("/v1/orders/intent", ({ body, set }) => { set.status = 201; return { ok: true, market_id: body.market_id, side: body.side }; }, { body: IntentBody });

async function pass(handle: (r: Request) => Promise<Response> | Response, n: number): Promise<number> {
  let done = 0;
  let bad = 0;
  const c0 = process.cpuUsage();
  await Promise.all(
    bodies.map(async (body) => {
      while (done < n) {
        done++;
        const res = await handle(new Request("http://localhost/v1/orders/intent", { method: "POST", headers: { "content-type": "application/json", "x-api-key": key, "content-length": String(body.length) }, body }));
        await res.text();
        if (res.status !== 201) bad++;
      }
    }),
  );
  const c = process.cpuUsage(c0);
  if (bad) console.log(`non-201: ${bad}`);
  return (c.user + c.system) / done;
}
const agentIds = bodies.map((b) => JSON.parse(b).agent_id as string);
const found = await app.services.apiKeys.authenticate(key);
const caller = { kind: "api_key" as const, orgId: found!.orgId, keyId: found!.keyId, agentId: found!.agentId };
async function direct(n: number): Promise<number> {
  let done = 0;
  const c0 = process.cpuUsage();
  await Promise.all(bodies.map(async (b) => { while (done < n) { done++; const r = await app.services.intents.submit(caller as any, JSON.parse(b), false); JSON.stringify(r.body); } }));
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / done;
}
const dir_: number[] = [];
const svc: number[] = [];
const bar: number[] = [];
const only = args.includes("--direct-only");
for (let p = 0; p < passes; p++) {
  if (only) { dir_.push(await direct(perPass)); svc.push(0); bar.push(0); continue; }
  svc.push(await pass(app.handle, perPass));
  bar.push(await pass(bare.handle, perPass * 4));
  dir_.push(await direct(perPass));
}
const fmt = (a: number[]) => { const s = [...a].sort((x, y) => x - y); return `min ${s[0].toFixed(1)} med ${s[s.length >> 1].toFixed(1)}`; };
console.log(`service${noop ? " (db no-op)" : " (pglite)"} µs/intent ${fmt(svc.slice(1))}; bare app.handle ${fmt(bar.slice(1))}; intents.submit direct ${fmt(dir_.slice(1))}`);
await database.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
