/**
 * The venue the configuration names: the embedded paper venue, or the CLOB V2 HTTP adapter.
 *
 * The default markets of the paper venue are `fixtures/markets.json`, imported here so that
 * `bun build --compile` embeds them in the binary: the service needs no file beside it.
 * `PAPER_MARKETS` names another markets file instead.
 */
import embeddedMarkets from "../../fixtures/markets.json" with { type: "json" };
import type { Config } from "../config.ts";
import { type Clock, systemClock } from "../domain/clock.ts";
import { ClobVenue } from "./clob/clob-venue.ts";
import { PaperVenue } from "./paper/paper-venue.ts";
import type { Venue } from "./venue.ts";

/** Names the embedded fixture in markets-file errors. */
export const EMBEDDED_MARKETS_SOURCE = "(embedded fixtures/markets.json)";

/** `clock`: the service's clock (cache expiry, timestamps), the one every part reads "now" from. */
export async function createVenue(
  config: Pick<Config, "venue" | "venueUrl" | "paperMarkets" | "venueTimeoutMs" | "chainId"> & Partial<Pick<Config, "venueReadCredentials" | "venueWsUrl">>,
  clock: Clock = systemClock,
): Promise<Venue> {
  if (config.venue === "clob") {
    const read = config.venueReadCredentials;
    return new ClobVenue({
      baseUrl: config.venueUrl!,
      timeoutMs: config.venueTimeoutMs,
      coalesceCancels: true,
      clock,
      ...(read ? { readCredentials: read } : {}),
      ...(config.venueWsUrl ? { marketWsUrl: `${config.venueWsUrl}/ws/market` } : {}),
    });
  }
  return createPaperVenue(config, clock);
}

/**
 * The paper venue on the configured markets file, or on the embedded fixture when none is set.
 * Its order ids are EIP-712 order hashes over the configured chain, equal to the service's order_hash.
 */
export function createPaperVenue(config: Pick<Config, "paperMarkets" | "chainId">, clock: Clock = systemClock): PaperVenue {
  const opts = { chainId: config.chainId, now: () => clock.now() };
  if (config.paperMarkets) return PaperVenue.fromFile(config.paperMarkets, opts);
  return PaperVenue.fromEntries(embeddedMarkets, opts, EMBEDDED_MARKETS_SOURCE);
}
