/**
 * Webhook delivery (docs/webhooks.md#delivery): a loop of its own beside the request path, woken by the
 * event log's commits (EventLog.wake) and polling besides. Each enabled endpoint has a cursor in the
 * database (`last_event_id`); the loop sends the matching events after it, one at a time and in id order,
 * and moves the cursor after each 2xx answer, so delivery is at least once, in order, and resumes after
 * a restart where it stopped. A failed delivery waits the next step of the retry schedule (seconds at
 * first, hours at the end) before the same event is sent again; when the schedule is used up the
 * endpoint is disabled and a `webhook_disabled` event is written. Endpoints are served concurrently,
 * at most WEBHOOK_CONCURRENCY at once (p-limit), and every request has a deadline (WEBHOOK_TIMEOUT_MS).
 *
 * The horizon: on PostgreSQL two transactions can commit out of id order, so an endpoint's cursor must
 * not pass an id that may still commit. The loop delivers only up to the horizon, the highest id below
 * which every id is committed or is a gap older than `gapWaitMs` (a rolled-back or removed event); PGlite
 * commits in id order and needs no wait.
 */
import { and, asc, eq, gt, isNull, lt, lte, min, or } from "drizzle-orm";
import pLimit from "p-limit";
import { Counter, Histogram, type Registry } from "prom-client";
import type { Config } from "../../config.ts";
import type { CredentialVault } from "../../crypto/credential-vault.ts";
import type { Db } from "../../db/database.ts";
import type { EventLog, EventRow } from "../../db/event-log.ts";
import { events, webhooks } from "../../db/schema.ts";
import type { Clock } from "../../domain/clock.ts";
import type { Logger } from "../../observability/logger.ts";
import { sendWebhook } from "./sender.ts";
import { messageBody, openWebhookSecret, type WebhookRow } from "./service.ts";

const POLL_MS = 500;
/** The shortest time between two passes, so a burst of commits does not run the loop flat out. */
const MIN_PASS_MS = 50;
const BATCH = 100;

export interface WebhookMetrics {
  deliveries: Counter<"outcome">;
  duration: Histogram;
  disabled: Counter;
}

export function createWebhookMetrics(registry: Registry): WebhookMetrics {
  const registers = [registry];
  const deliveries = new Counter({
    name: "webhook_deliveries_total",
    help: "Webhook delivery attempts, by outcome (delivered: a 2xx answer; failed: anything else).",
    labelNames: ["outcome"],
    registers,
  });
  deliveries.inc({ outcome: "delivered" }, 0);
  deliveries.inc({ outcome: "failed" }, 0);
  return {
    deliveries,
    duration: new Histogram({
      name: "webhook_delivery_duration_seconds",
      help: "Duration of webhook delivery attempts, request to answer.",
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    disabled: new Counter({ name: "webhook_endpoints_disabled_total", help: "Webhook endpoints disabled after their retries were used up.", registers }),
  };
}

export class WebhookDispatcher {
  private loop: Promise<void> | null = null;
  private stopped = false;
  private readonly stopping = new AbortController();
  private kicked = new AbortController();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly limit: ReturnType<typeof pLimit>;
  /** Every event id at or below is committed or a gap given up on; -1 until first computed. */
  private stable = -1;
  /** A missing id above `stable` → when it was first seen missing. */
  private readonly gaps = new Map<number, number>();

  constructor(
    private readonly deps: {
      db: Db;
      eventLog: EventLog;
      vault: CredentialVault;
      clock: Clock;
      logger: Logger;
      metrics: WebhookMetrics;
      settings: Config["webhooks"];
      /** How long a gap in event ids may be a commit still under way (0 on PGlite). */
      gapWaitMs: number;
      /**
       * Whether this process delivers now (several instances on one database: the one holding the
       * cluster-wide singleton lease); absent, always.
       */
      active?: () => Promise<boolean>;
    },
  ) {
    this.limit = pLimit(deps.settings.concurrency);
  }

  /** Starts the loop (once). */
  start(): void {
    if (this.loop || this.stopped) return;
    this.loop = this.run();
  }

  /** Looks for work now instead of at the next poll. */
  kick(): void {
    this.kicked.abort();
  }

  /** No new deliveries; resolves when those under way have finished (each within its timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.kick();
    await this.loop;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  private async run(): Promise<void> {
    const { eventLog, clock, logger } = this.deps;
    while (!this.stopped) {
      const wakes = eventLog.wakeCount;
      const started = clock.now();
      if (this.kicked.signal.aborted) this.kicked = new AbortController();
      let idle = false;
      try {
        idle = !(await this.pass());
      } catch (error) {
        logger.error("webhook delivery pass failed", { error });
      }
      if (this.stopped) break;
      const wakeUp = AbortSignal.any([this.stopping.signal, this.kicked.signal]);
      // Without an enabled endpoint commits do not wake the loop: a poll (or a new endpoint's kick) does.
      if (idle) await sleep(POLL_MS, wakeUp);
      else await eventLog.waitForMore(POLL_MS, wakeUp, wakes);
      const spent = clock.now() - started;
      if (spent < MIN_PASS_MS && !this.stopped) await new Promise((r) => setTimeout(r, MIN_PASS_MS - spent));
    }
  }

  /** One pass: the horizon, then a drain of every enabled endpoint that is due and behind it. False without enabled endpoints. */
  private async pass(): Promise<boolean> {
    const { db, clock } = this.deps;
    if (this.deps.active && !(await this.deps.active())) {
      // Another instance delivers: the horizon is computed afresh if this one takes over.
      this.stable = -1;
      this.gaps.clear();
      return false;
    }
    const horizon = await this.horizon();
    if (horizon < 0) return false;
    const due = await db
      .select()
      .from(webhooks)
      .where(
        and(
          eq(webhooks.status, "enabled"),
          lt(webhooks.lastEventId, horizon),
          or(isNull(webhooks.nextAttemptAt), lte(webhooks.nextAttemptAt, new Date(clock.now()))),
        ),
      );
    if (due.length === 0 && this.inFlight.size === 0) {
      const [any] = await db.select({ id: webhooks.id }).from(webhooks).where(eq(webhooks.status, "enabled")).limit(1);
      if (!any) {
        // No enabled endpoint left: idle; the horizon starts again from the cursors of the next ones.
        this.stable = -1;
        this.gaps.clear();
        return false;
      }
    }
    for (const row of due) {
      if (this.inFlight.has(row.id)) continue;
      const run = this.limit(() => (this.stopped ? Promise.resolve() : this.drain(row, horizon)))
        .catch((error: unknown) => this.deps.logger.error("webhook delivery failed", { webhook_id: row.id, error }))
        .finally(() => {
          this.inFlight.delete(row.id);
          // Events may have come while this endpoint was busy: look again.
          this.kick();
        });
      this.inFlight.set(row.id, run);
    }
    return true;
  }

  /** The highest event id below which nothing can still commit (see the file comment); -1 without enabled endpoints. */
  private async horizon(): Promise<number> {
    const { db, clock, gapWaitMs } = this.deps;
    if (this.stable < 0) {
      const [row] = await db.select({ id: min(webhooks.lastEventId) }).from(webhooks).where(eq(webhooks.status, "enabled"));
      if (row?.id === null || row?.id === undefined) return -1;
      this.stable = Number(row.id);
    }
    const ids = await db.select({ id: events.id }).from(events).where(gt(events.id, this.stable)).orderBy(asc(events.id)).limit(1000);
    const now = clock.now();
    // Every gap of this read is noted at once (keyed by its first missing id), so a run of old gaps (ids
    // of transactions rolled back long ago) is waited out once, not one gapWaitMs after another.
    if (gapWaitMs > 0) {
      let prev = this.stable;
      for (const { id } of ids) {
        if (id !== prev + 1 && !this.gaps.has(prev + 1)) this.gaps.set(prev + 1, now);
        prev = id;
      }
    }
    for (const { id } of ids) {
      if (id !== this.stable + 1 && gapWaitMs > 0) {
        const seen = this.gaps.get(this.stable + 1);
        if (seen === undefined || now - seen < gapWaitMs) break;
      }
      this.stable = id;
    }
    for (const missing of this.gaps.keys()) if (missing <= this.stable) this.gaps.delete(missing);
    // More ids than one read: look again at once (not while a gap holds the horizon back).
    if (ids.length === 1000 && this.stable === ids[ids.length - 1].id) this.kick();
    return this.stable;
  }

  /**
   * Sends the endpoint's matching events after its cursor up to `horizon`, in order, stopping at the
   * first failure (its retry is scheduled). The cursor moves after each delivery, and over events that
   * do not match.
   */
  private async drain(seen: WebhookRow, horizon: number): Promise<void> {
    const { db, eventLog, vault, clock, settings, metrics } = this.deps;
    // Read again: a drain of this endpoint that ended after the pass read it may have moved its cursor.
    const [endpoint] = await db
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.id, seen.id), eq(webhooks.status, "enabled")));
    if (!endpoint || endpoint.lastEventId >= horizon || (endpoint.nextAttemptAt && endpoint.nextAttemptAt.getTime() > clock.now())) return;
    const secret = await openWebhookSecret(vault, endpoint);
    const scope = { orgId: endpoint.orgId, agentId: endpoint.agentId ?? undefined };
    const types = endpoint.eventTypes ? new Set<string>(endpoint.eventTypes) : null;
    let cursor = endpoint.lastEventId;
    let stored = cursor;
    const save = async (fields: Partial<typeof webhooks.$inferInsert>): Promise<boolean> => {
      const rows = await db
        .update(webhooks)
        .set({ ...fields, lastEventId: cursor, updatedAt: new Date(clock.now()) })
        .where(and(eq(webhooks.id, endpoint.id), eq(webhooks.status, "enabled"), eq(webhooks.lastEventId, stored)))
        .returning({ id: webhooks.id });
      stored = cursor;
      // Deleted, disabled or moved by someone else: this drain stops.
      return rows.length > 0;
    };
    for (;;) {
      if (this.stopped) break;
      const batch = await eventLog.after(scope, cursor, BATCH);
      // Read until nothing is left below the horizon (a short batch does not prove it: the log leaves
      // out the events of removed orders).
      let reachedHorizon = batch.length === 0;
      for (const event of batch) {
        if (event.id > horizon) {
          reachedHorizon = true;
          break;
        }
        if (this.stopped) break;
        if (types && !types.has(event.type)) {
          cursor = event.id;
          continue;
        }
        const now = new Date(clock.now());
        const result = await sendWebhook(endpoint.url, secret, message(event), { now, timeoutMs: settings.timeoutMs, allowPrivate: settings.allowPrivate });
        metrics.deliveries.inc({ outcome: result.ok ? "delivered" : "failed" });
        metrics.duration.observe(result.durationMs / 1000);
        if (!result.ok) return this.failed(endpoint, cursor, stored, result.error ?? "failed");
        cursor = event.id;
        if (!(await save({ attempts: 0, nextAttemptAt: null, lastError: null, lastSuccessAt: now }))) return;
      }
      if (reachedHorizon || this.stopped) break;
    }
    // Every event up to the horizon was looked at: the cursor passes the ones that did not match.
    if (!this.stopped && horizon > cursor) cursor = horizon;
    if (cursor !== stored) await save({});
  }

  /** A failed delivery: the next retry, or the endpoint disabled (with its event) when the schedule is used up. */
  private async failed(endpoint: WebhookRow, cursor: number, stored: number, error: string): Promise<void> {
    const { db, clock, settings, logger, metrics, eventLog } = this.deps;
    const schedule = settings.retryScheduleMs;
    const attempts = endpoint.attempts + 1;
    const now = new Date(clock.now());
    const current = and(eq(webhooks.id, endpoint.id), eq(webhooks.status, "enabled"), eq(webhooks.lastEventId, stored));
    if (attempts <= schedule.length) {
      const nextAttemptAt = new Date(now.getTime() + schedule[attempts - 1]);
      await db.update(webhooks).set({ attempts, nextAttemptAt, lastError: error, lastEventId: cursor, updatedAt: now }).where(current);
      logger.info("webhook delivery failed; retrying", { webhook_id: endpoint.id, attempts, next_attempt_at: nextAttemptAt.toISOString(), error });
      return;
    }
    const disabled = await db.transaction(async (tx) => {
      const rows = await tx
        .update(webhooks)
        .set({ status: "disabled", attempts, nextAttemptAt: null, lastError: error, disabledAt: now, lastEventId: cursor, updatedAt: now })
        .where(current)
        .returning({ id: webhooks.id });
      if (!rows.length) return false;
      await tx.insert(events).values({
        orgId: endpoint.orgId,
        agentId: null,
        type: "webhook_disabled",
        data: { webhook_id: endpoint.id, url: endpoint.url, attempts, last_error: error, last_event_id: cursor, disabled_at: now.toISOString() },
        createdAt: now,
      });
      return true;
    });
    if (!disabled) return;
    metrics.disabled.inc();
    eventLog.wake();
    logger.warn("webhook endpoint disabled after its retries", { webhook_id: endpoint.id, org_id: endpoint.orgId, attempts, error });
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** The message of one event: `webhook-id` `evt_<event id>`, the same on every attempt. */
function message(event: EventRow) {
  return {
    id: `evt_${event.id}`,
    body: messageBody({ id: event.id, type: event.type, timestamp: event.createdAt, agentId: event.agentId, data: event.data }),
  };
}
