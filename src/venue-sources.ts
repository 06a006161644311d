/**
 * Composition of the venue's truth sources this branch adds (issue 22 items 3 and 10), for the
 * composition root: the user channel for delegated agents (one connection per agent's credential set,
 * credentials opened per use through the CredentialsService) and the GTD expiry of payload orders.
 * Both hand VenueReports to `sink`; neither writes an order.
 *
 * The caller (main.ts, after the sink exists) starts it once the service is up, tells it when an agent's
 * credentials are stored (`followAgent`) or deleted (`unfollowAgent`), and stops it before the database
 * closes.
 */
import { and, eq, isNotNull } from "drizzle-orm";
import type { Config } from "./config.ts";
import type { Db } from "./db/database.ts";
import { dueGtdPayloadOrders } from "./db/due-gtd-orders.ts";
import { credentials, orders } from "./db/schema.ts";
import type { Clock } from "./domain/clock.ts";
import type { VenueCredentials } from "./domain/venue-credentials.ts";
import type { VenueReportSink } from "./domain/venue-report.ts";
import { UserChannel } from "./venues/clob/user-channel.ts";
import { GtdExpiry } from "./venues/gtd-expiry.ts";

export interface VenueSourcesDeps {
  config: Pick<Config, "venue" | "venueUrl" | "venueWsUrl" | "venueTimeoutMs">;
  db: Db;
  /** CredentialsService.withAgentCredentials: the agent's credentials opened for one use, or null without any. */
  withAgentCredentials<T>(agentId: string, fn: (c: VenueCredentials) => Promise<T>): Promise<T | null>;
  sink: VenueReportSink;
  clock: Clock;
  logger: { info(msg: string, fields?: Record<string, unknown>): void; warn(msg: string, fields?: Record<string, unknown>): void; error(msg: string, fields?: Record<string, unknown>): void };
  /** How often the GTD expiry runs (default 1000 ms). */
  gtdEveryMs?: number;
  /** Whether this process follows the user channel now (several instances: the singleton's holder; default: always). */
  active?: () => boolean;
  /** How often the agents with credentials are read again (default 2000 ms). */
  syncEveryMs?: number;
  /** Options of the user channel beyond its URLs (tests: backoff, catch-up interval). */
  userChannel?: { backoffMinMs?: number; backoffMaxMs?: number; catchUpEveryMs?: number; pingIntervalMs?: number };
}

export interface VenueSources {
  /** Null unless VENUE=clob with a WebSocket URL (VENUE_WS_URL not off). */
  readonly userChannel: UserChannel | null;
  readonly gtdExpiry: GtdExpiry;
  /** Follows the agent's credential set on the user channel (its catch-up runs once subscribed). */
  followAgent(agentId: string): void;
  unfollowAgent(agentId: string): void;
  stop(): Promise<void>;
}

/** Starts the GTD expiry job, and the user channel for every agent with stored credentials. */
export async function startVenueSources(deps: VenueSourcesDeps): Promise<VenueSources> {
  const { config, db, sink, clock, logger } = deps;
  const gtdExpiry = new GtdExpiry({ listDue: (nowSec) => dueGtdPayloadOrders(db, nowSec), sink, clock });
  gtdExpiry.start(deps.gtdEveryMs ?? 1000, (error) => logger.error("GTD expiry failed", { error }));

  const wsBase = config.venue === "clob" ? config.venueWsUrl : null;
  const userChannel =
    wsBase && config.venueUrl
      ? new UserChannel({ url: `${wsBase}/ws/user`, restUrl: config.venueUrl, sink, clock, timeoutMs: config.venueTimeoutMs, logger, ...deps.userChannel })
      : null;

  const followAgent = (agentId: string) => {
    if (!userChannel) return;
    userChannel.follow(
      agentId,
      async (use) => {
        const r = await deps.withAgentCredentials(agentId, async (c) => ({ value: await use(c) }));
        if (r === null) throw new Error("the agent has no stored credentials");
        return r.value;
      },
      {
        openOrders: async () =>
          (
            await db
              .select({ id: orders.venueOrderId })
              .from(orders)
              .where(and(eq(orders.agentId, agentId), eq(orders.status, "open"), isNotNull(orders.venueOrderId)))
          ).map((r) => r.id!),
      },
    );
  };

  // The agents followed are those with stored credentials while `active` (default: always), read
  // again every `syncEveryMs`: credentials stored or deleted (a kill deletes them), by this process or
  // another, are followed or dropped within that time; the subscription's catch-up covers the gap.
  const followed = new Set<string>();
  const sync = async () => {
    // Not this instance's to follow: nothing is read, and what it followed is dropped.
    const rows = !deps.active || deps.active() ? await db.select({ agentId: credentials.agentId }).from(credentials) : [];
    const want = new Set(rows.map((r) => r.agentId));
    for (const id of want) if (!followed.has(id)) (followed.add(id), followAgent(id));
    for (const id of [...followed]) if (!want.has(id)) (followed.delete(id), userChannel?.unfollow(id));
  };
  let syncTimer: ReturnType<typeof setInterval> | null = null;
  if (userChannel) {
    await sync();
    logger.info("venue user channel: following delegated agents", { agents: followed.size, url: `${wsBase}/ws/user` });
    let syncing = false;
    syncTimer = setInterval(() => {
      if (syncing) return;
      syncing = true;
      sync()
        .catch((error: unknown) => logger.warn("venue user channel: the agents to follow could not be read", { error: String(error) }))
        .finally(() => (syncing = false));
    }, deps.syncEveryMs ?? 2000);
  } else logger.info("venue user channel: off (VENUE=clob with VENUE_WS_URL)");

  return {
    userChannel,
    gtdExpiry,
    followAgent: (agentId) => {
      if (followed.has(agentId)) return;
      followed.add(agentId);
      followAgent(agentId);
    },
    unfollowAgent: (agentId) => {
      followed.delete(agentId);
      userChannel?.unfollow(agentId);
    },
    async stop() {
      if (syncTimer) clearInterval(syncTimer);
      await gtdExpiry.stop();
      await userChannel?.close();
    },
  };
}
