/**
 * Helpers of the guard suites: a test app on the service's real default limits (DEFAULT_LIMITS,
 * runaway guards included), a fake clock that the service, its actors and the paper venue's book
 * timestamps all read, and small request helpers.
 */
import { resolve } from "node:path";
import type { Database } from "../../src/db/database.ts";
import type { Clock } from "../../src/domain/clock.ts";
import { DEFAULT_LIMITS } from "../../src/risk/limits.ts";
import { PaperVenue } from "../../src/venues/paper/paper-venue.ts";
import type { Config } from "../../src/config.ts";
import { createTestApp, type TestApp } from "../support/app.ts";

export class FakeClock implements Clock {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

/** A fresh fake clock a little after the real time (milliseconds cut to .000 for readable deadlines). */
export const fakeClock = () => new FakeClock(Math.floor(Date.now() / 1000) * 1000 + 1000);

export async function guardApp(database: Database, clock: FakeClock, config: Partial<Config> = {}): Promise<{ t: TestApp; venue: PaperVenue }> {
  const venue = PaperVenue.fromFile(resolve(import.meta.dir, "../../fixtures/markets.json"), { chainId: 137, now: () => clock.now() });
  const t = await createTestApp(database, { venue, clock, defaultLimits: DEFAULT_LIMITS, config });
  return { t, venue };
}

/** An agent-scoped key for `agentId`, issued with the organization's key. */
export async function scopedKey(t: TestApp, orgKey: string, agentId: string): Promise<string> {
  const res = await t.call("POST", "/v1/api-keys", { key: orgKey, body: { name: "agent's own", agent_id: agentId } });
  if (res.status !== 201) throw new Error(`key issue failed: ${res.status} ${res.text}`);
  return res.body.key;
}
