/**
 * The venue simulator's CPU per delegated placement, in isolation: `bun bench/sim-placements.ts`.
 *
 * Starts the simulator (`src/venues/sim/main.ts`, its own process; --sim DIR runs another checkout's),
 * registers --connections (16) API keys, follows each on /ws/user and the market's token on /ws/market
 * (as the service does), then posts --count (4000) delegated orders (signature "", L2 headers as
 * ClobVenue signs them) --connections at a time, each key's one after another: a resting buy one tick
 * under the best bid, as bench/venue.ts's delegated phase; --rate N spaces them to N/s in all (as the
 * service's pace in that bench, where one tick of the simulator rarely sees two placements);
 * --follow user|market|none opens only those channels' sockets; --variant unauth|refused posts requests
 * refused before the engine (the HTTP floor); --warmup N (500) placements are not measured; --env
 * NAME=VALUE sets the simulator's environment. Prints the simulator's CPU µs per placement (user and
 * system, from /proc, and by thread) and the frames the sockets received. --rounds N repeats in new
 * processes; --cpu-prof DIR profiles the simulator (DIR/venue-sim.cpuprofile).
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { serializePostOrderBody } from "../src/venues/clob/clob-venue.ts";
import { l2Headers } from "../src/venues/clob/l2-auth.ts";
import type { OrderMessage } from "../src/venues/venue.ts";
import { freePort, median, pickIntent } from "./support.ts";

const args = Bun.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const connections = Number(opt("--connections", "16"));
const count = Number(opt("--count", "4000"));
const rounds = Number(opt("--rounds", "3"));
/** Placements per second in all (0: as fast as the simulator answers). */
const rate = Number(opt("--rate", "0"));
/** Which channels to follow: all (default), user, market or none. */
const follow = opt("--follow", "all");
/** What each request is: place (default), unauth (a wrong API key: 401), refused (authenticated, another owner: 400). */
const variant = opt("--variant", "place");
const simDir = resolve(opt("--sim", resolve(import.meta.dir, "..")));
const cpuProf = opt("--cpu-prof", "");
/** --env NAME=VALUE (repeatable): the simulator's environment. */
const simEnv = Object.fromEntries(args.flatMap((a, i) => (a === "--env" ? [args[i + 1].split(/=(.*)/s).slice(0, 2)] : [])));
const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const ZERO32 = `0x${"00".repeat(32)}` as `0x${string}`;

const TICK = 100; // USER_HZ: /proc times are in 1/100 s
function cpuTicks(pid: number): { user: number; sys: number } {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8");
  const rest = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return { user: Number(rest[11]), sys: Number(rest[12]) };
}

/** CPU ticks (user + system) per thread name. */
function threadTicks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      const f = readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8");
      const name = f.slice(f.indexOf("(") + 1, f.lastIndexOf(")"));
      const rest = f.slice(f.lastIndexOf(")") + 2).split(" ");
      out.set(name, (out.get(name) ?? 0) + Number(rest[11]) + Number(rest[12]));
    } catch {}
  }
  return out;
}

async function round(): Promise<{ user: number; sys: number; frames: number; rps: number; threads: string }> {
  const port = await freePort();
  const child = Bun.spawn(["bun", ...(cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${cpuProf}`, "--cpu-prof-name=venue-sim.cpuprofile"] : []), resolve(simDir, "src/venues/sim/main.ts"), "--port", String(port)], { cwd: simDir, stdout: "pipe", stderr: "inherit", env: { ...process.env, ...simEnv } });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/ok`)).ok) break;
    } catch {}
    if (i > 200) throw new Error("the simulator did not start");
    await Bun.sleep(50);
  }
  const intent = pickIntent();
  const price = Math.round(intent.price * 100);
  const shares = 10_000_000n; // 10 shares
  const usdc = (shares * BigInt(price)) / 100n;
  const keys = Array.from({ length: connections }, (_, i) => ({
    api_key: crypto.randomUUID(),
    api_secret: randomBytes(32).toString("base64url"),
    passphrase: randomBytes(16).toString("hex"),
    address: WALLET,
    n: i,
  }));
  for (const k of keys) {
    await fetch(`${url}/_sim/credentials`, { method: "POST", body: JSON.stringify({ ...k, scopes: ["order:place", "order:cancel"] }) });
  }
  let frames = 0;
  const sockets: WebSocket[] = [];
  const openWs = (path: string, first: unknown) =>
    new Promise<void>((ok, fail) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
      ws.onopen = () => {
        ws.send(JSON.stringify(first));
        ok();
      };
      ws.onerror = () => fail(new Error(`ws ${path}`));
      ws.onmessage = () => frames++;
      sockets.push(ws);
    });
  if (follow === "all" || follow === "market") await openWs("/ws/market", { assets_ids: [intent.market_id], type: "market" });
  if (follow === "all" || follow === "user") for (const k of keys) await openWs("/ws/user", { auth: { apiKey: k.api_key, secret: k.api_secret, passphrase: k.passphrase }, type: "user" });
  await Bun.sleep(200);

  const post = async (k: (typeof keys)[number]) => {
    const order: OrderMessage = {
      salt: String(BigInt(`0x${randomBytes(6).toString("hex")}`)),
      maker: WALLET,
      signer: WALLET,
      tokenId: intent.market_id,
      makerAmount: usdc.toString(),
      takerAmount: shares.toString(),
      side: 0,
      signatureType: 0,
      timestamp: String(Date.now()),
      metadata: ZERO32,
      builder: ZERO32,
    };
    const body = serializePostOrderBody({ order, signature: "", order_type: "GTC", expiration: "0", owner: variant === "refused" ? "someone-else" : k.api_key });
    const headers = l2Headers(variant === "unauth" ? { ...k, api_key: "nobody" } : k, { method: "POST", path: "/order", body });
    const r = await fetch(`${url}/order`, { method: "POST", body, headers: { ...headers, "Content-Type": "application/json" } });
    const j = (await r.json()) as { success?: boolean; errorMsg?: string; error?: string };
    if (variant === "place" && !j.success && !simEnv.SIM_SKIP) throw new Error(`placement refused: ${JSON.stringify(j)}`);
  };
  // Warm-up, then the measured placements.
  const run = async (n: number) => {
    let left = n;
    await Promise.all(
      keys.map(async (k) => {
        const every = rate > 0 ? (1000 * connections) / rate : 0;
        let next = performance.now() + Math.random() * every;
        while (left > 0) {
          left--;
          if (every > 0) {
            const wait = next - performance.now();
            if (wait > 0) await Bun.sleep(wait);
            next += every;
          }
          await post(k);
        }
      }),
    );
  };
  await run(Number(opt("--warmup", "500")));
  await Bun.sleep(200);
  const f0 = frames;
  const c0 = cpuTicks(child.pid);
  const th0 = threadTicks(child.pid);
  const t0 = performance.now();
  await run(count);
  const secs = (performance.now() - t0) / 1000;
  await Bun.sleep(300);
  const c1 = cpuTicks(child.pid);
  const th1 = threadTicks(child.pid);
  const threads = [...th1].map(([name, t]) => `${name} ${(((t - (th0.get(name) ?? 0)) * 1_000_000) / TICK / count).toFixed(0)}`).join(", ");
  const got = frames - f0;
  for (const ws of sockets) ws.close();
  child.kill("SIGINT");
  await child.exited;
  const us = (ticks: number) => (ticks * (1_000_000 / TICK)) / count;
  return { user: us(c1.user - c0.user), sys: us(c1.sys - c0.sys), frames: got / count, rps: count / secs, threads };
}

const out: Awaited<ReturnType<typeof round>>[] = [];
for (let i = 0; i < rounds; i++) {
  const r = await round();
  out.push(r);
  console.log(
    `round ${i + 1}: simulator ${(r.user + r.sys).toFixed(0)} µs per placement (user ${r.user.toFixed(0)}, system ${r.sys.toFixed(0)}); ${r.frames.toFixed(2)} frames received per placement; ${r.rps.toFixed(0)} placements/s; µs by thread: ${r.threads}`,
  );
}
console.log(
  `median of ${rounds} (${simDir}): simulator ${median(out.map((r) => r.user + r.sys)).toFixed(0)} µs per placement (user ${median(out.map((r) => r.user)).toFixed(0)}, system ${median(out.map((r) => r.sys)).toFixed(0)})`,
);
