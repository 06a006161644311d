/**
 * The venue simulator (src/venues/sim/sim-server.ts) for suites that drive it over the wire: the
 * markets file they start it with, credentials registered with it, and raw WebSockets to its channels.
 */
import { expect } from "bun:test";
import { resolve } from "node:path";
import type { VenueSim } from "../../src/venues/sim/sim-server.ts";
import type { VenueCredentials } from "../../src/venues/venue.ts";

export const SIM_MARKETS_FILE = resolve(import.meta.dir, "../../fixtures/markets.json");

/** Registers `creds` with the simulator for `scopes`; it must answer 201. */
export async function registerSimCredentials(sim: VenueSim, creds: VenueCredentials, scopes: string[] = ["order:place", "order:cancel"]): Promise<void> {
  const { api_key, api_secret, passphrase, address } = creds;
  const res = await fetch(`${sim.url}/_sim/credentials`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ api_key, api_secret, passphrase, address, scopes }),
  });
  expect(res.status).toBe(201);
}

/**
 * A WebSocket to the simulator's channel at `path` (/ws/market, /ws/user), once open: each frame it
 * receives goes into `into` as `read` makes it of the frame's text (JSON.parse unless given), and
 * `first`, when given, has been sent as JSON (a subscription).
 */
export async function openSimSocket<T = unknown>(sim: VenueSim, path: string, into: T[], opts: { read?: (text: string) => T; first?: unknown } = {}): Promise<WebSocket> {
  const read = opts.read ?? JSON.parse;
  const ws = new WebSocket(`${sim.wsUrl}${path}`);
  ws.onmessage = (e) => into.push(read(String(e.data)));
  await new Promise<void>((ok, fail) => {
    ws.onopen = () => ok();
    ws.onerror = () => fail(new Error(`${path} did not open`));
  });
  if (opts.first !== undefined) ws.send(JSON.stringify(opts.first));
  return ws;
}
