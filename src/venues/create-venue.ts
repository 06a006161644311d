/** The venue the configuration names: the embedded paper venue, or the CLOB V2 HTTP adapter. */
import type { Config } from "../config.ts";
import { ClobVenue } from "./clob/clob-venue.ts";
import { PaperVenue } from "./paper/paper-venue.ts";
import type { Venue } from "./venue.ts";

export async function createVenue(config: Pick<Config, "venue" | "venueUrl" | "paperMarkets" | "venueTimeoutMs">): Promise<Venue> {
  if (config.venue === "clob") return new ClobVenue({ baseUrl: config.venueUrl!, timeoutMs: config.venueTimeoutMs });
  return PaperVenue.fromFile(config.paperMarkets);
}
