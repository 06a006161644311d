/** Review helpers: a paper venue whose methods a test can override one at a time. */
import { createPaperVenue } from "../../src/venues/create-venue.ts";
import type { PaperVenue } from "../../src/venues/paper/paper-venue.ts";
import type { Venue } from "../../src/venues/venue.ts";

export type Overrides = Partial<Record<keyof Venue, (...args: any[]) => any>>;

export function hookedVenue() {
  const paper = createPaperVenue({ chainId: 137, paperMarkets: null });
  const overrides: Overrides = {};
  const calls: { method: string; at: number; info?: unknown }[] = [];
  const venue = new Proxy(paper, {
    get(target, prop) {
      const o = overrides[prop as keyof Venue];
      if (o) return o;
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  }) as PaperVenue & Venue;
  return { venue, paper, overrides, calls };
}

export const caller = (orgId: string) => ({ kind: "api_key" as const, orgId, keyId: "key_review", agentId: null });
