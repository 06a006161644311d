/**
 * The venue simulator's command line (docs/architecture.md#venues):
 *
 *   bun run venue-sim [--port N] [--host 127.0.0.1] [--markets FILE] [--chain-id 137] [--order-version 2|3]
 *                     [--heartbeat-timeout-ms 10000] [--chain http://127.0.0.1:8545]
 *
 * With --chain, every match is settled on that chain (Anvil) by an OrderFilled log from the exchange's
 * address (sim-chain.ts); GET /_sim/chain names the addresses.
 *
 * Prints the base URL on stdout (one line) and serves until SIGINT/SIGTERM.
 */

import { parseArgs } from "node:util";
import { SimChain } from "./sim-chain.ts";
import { DEFAULT_MARKETS_FILE, startVenueSim } from "./sim-server.ts";

const USAGE =
  "usage: bun run venue-sim [--port N] [--host HOST] [--markets FILE] [--chain-id N] [--order-version 2|3] [--heartbeat-timeout-ms N] [--chain URL]";

function fail(msg: string): never {
  console.error(`venue-sim: ${msg}`);
  console.error(USAGE);
  process.exit(2);
}

let values: {
  port?: string;
  host?: string;
  markets?: string;
  "chain-id"?: string;
  "order-version"?: string;
  "heartbeat-timeout-ms"?: string;
  chain?: string;
  help?: boolean;
};
try {
  ({ values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      port: { type: "string", short: "p" },
      host: { type: "string" },
      markets: { type: "string", short: "m" },
      "chain-id": { type: "string" },
      "order-version": { type: "string" },
      "heartbeat-timeout-ms": { type: "string" },
      chain: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: false,
  }));
} catch (err) {
  fail((err as Error).message);
}

if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const port = values.port === undefined ? 8090 : Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be an integer 0..65535, got ${values.port}`);
const chainId = values["chain-id"] === undefined ? 137 : Number(values["chain-id"]);
if (!Number.isInteger(chainId) || chainId <= 0) fail(`--chain-id must be a positive integer, got ${values["chain-id"]}`);

const orderVersion = values["order-version"] === undefined ? 2 : Number(values["order-version"]);
if (orderVersion !== 2 && orderVersion !== 3) fail(`--order-version must be 2 or 3, got ${values["order-version"]}`);
const heartbeatTimeoutMs = values["heartbeat-timeout-ms"] === undefined ? 10_000 : Number(values["heartbeat-timeout-ms"]);
if (!Number.isInteger(heartbeatTimeoutMs) || heartbeatTimeoutMs <= 0) fail(`--heartbeat-timeout-ms must be a positive integer, got ${values["heartbeat-timeout-ms"]}`);

if (values.chain !== undefined && !/^https?:\/\/\S+$/.test(values.chain)) fail(`--chain must be an http(s) URL, got ${values.chain}`);
let chain: SimChain | undefined;
if (values.chain !== undefined) {
  try {
    chain = await SimChain.connect(values.chain, chainId);
  } catch (err) {
    fail(`--chain ${values.chain}: ${(err as Error).message.split("\n")[0]}`);
  }
}

let sim: ReturnType<typeof startVenueSim>;
try {
  sim = startVenueSim({
    port,
    hostname: values.host ?? "127.0.0.1",
    marketsFile: values.markets ?? DEFAULT_MARKETS_FILE,
    paper: { chainId },
    orderVersion,
    heartbeatTimeoutMs,
    chain,
  });
} catch (err) {
  fail((err as Error).message);
}

console.log(sim.url);

const shutdown = async () => {
  await sim.stop();
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
