/**
 * Webhook endpoints of an organization (docs/webhooks.md): registered, listed, tested, re-enabled and
 * deleted through the API. The signing secret (`whsec_` + 32 random bytes in base64, the Standard
 * Webhooks form) is shown once, in the creation answer; the row holds it sealed with the credential
 * vault, because it must be opened to sign each delivery. Delivery itself is the dispatcher's
 * (dispatcher.ts).
 */
import { randomBytes } from "node:crypto";
import { and, desc, eq, lt, or } from "drizzle-orm";
import type { Config } from "../../config.ts";
import type { CredentialVault } from "../../crypto/credential-vault.ts";
import type { Db } from "../../db/database.ts";
import type { EventLog } from "../../db/event-log.ts";
import { agents, type EventType, webhooks } from "../../db/schema.ts";
import type { Clock } from "../../domain/clock.ts";
import { newId } from "../../domain/ids.ts";
import { InvalidRequestError, NotFoundError } from "../../errors/errors.ts";
import { decodeCursor, pageOf } from "../../http/pagination.ts";
import { type DeliveryResult, sendWebhook } from "./sender.ts";
import { checkEndpointUrl, WebhookUrlError } from "./url-guard.ts";

export type WebhookRow = typeof webhooks.$inferSelect;

export interface WebhookView {
  id: string;
  url: string;
  event_types: EventType[] | null;
  agent_id: string | null;
  description: string | null;
  status: "enabled" | "disabled";
  last_event_id: number;
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  last_success_at: string | null;
  disabled_at: string | null;
  created_at: string;
}

export interface WebhookTestResult {
  webhook_id: string;
  message_id: string;
  delivered: boolean;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

export function toWebhookView(r: WebhookRow): WebhookView {
  return {
    id: r.id,
    url: r.url,
    event_types: r.eventTypes ?? null,
    agent_id: r.agentId,
    description: r.description,
    status: r.status,
    last_event_id: r.lastEventId,
    attempts: r.attempts,
    next_attempt_at: r.nextAttemptAt?.toISOString() ?? null,
    last_error: r.lastError,
    last_success_at: r.lastSuccessAt?.toISOString() ?? null,
    disabled_at: r.disabledAt?.toISOString() ?? null,
    created_at: r.createdAt.toISOString(),
  };
}

export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** The vault seals credential-shaped documents: the secret rides as `api_secret`, bound to its endpoint by `api_key`. */
export function sealWebhookSecret(vault: CredentialVault, webhookId: string, secret: string): Uint8Array {
  return vault.seal({ api_key: webhookId, api_secret: secret });
}

export function openWebhookSecret(vault: CredentialVault, row: Pick<WebhookRow, "id" | "secretSealed">): Promise<string> {
  return vault.withOpened(row.secretSealed, async (c) => {
    if (c.api_key !== row.id) throw new Error(`the sealed secret of webhook ${row.id} belongs to another endpoint`);
    return c.api_secret;
  });
}

/** A body of a message to an endpoint: the Standard Webhooks `type`, `timestamp` and `data`, plus the event's id and agent. */
export function messageBody(m: { id: number | null; type: string; timestamp: Date; agentId: string | null; data: Record<string, unknown> }): string {
  return JSON.stringify({ id: m.id, type: m.type, timestamp: m.timestamp.toISOString(), agent_id: m.agentId, data: m.data });
}

export class WebhookService {
  constructor(
    private readonly deps: {
      db: Db;
      vault: CredentialVault;
      clock: Clock;
      eventLog: EventLog;
      settings: Config["webhooks"];
      /** Called after an endpoint is created or re-enabled: the dispatcher looks at once. */
      onChange?: () => void;
    },
  ) {}

  /** `id`: the endpoint's id when the request reserved one with its Idempotency-Key. */
  async create(
    orgId: string,
    input: { url: string; event_types?: EventType[]; agent_id?: string; description?: string },
    id?: string,
  ): Promise<WebhookView & { secret: string }> {
    const { db, clock, vault, eventLog } = this.deps;
    await this.checkUrl(input.url);
    if (input.event_types && new Set(input.event_types).size !== input.event_types.length) {
      throw new InvalidRequestError("event_types lists a type twice", [{ path: "/body/event_types", message: "duplicate type" }]);
    }
    if (input.agent_id) {
      const [agent] = await db.select({ id: agents.id }).from(agents).where(and(eq(agents.id, input.agent_id), eq(agents.orgId, orgId)));
      if (!agent) throw new NotFoundError(`agent ${input.agent_id}`);
    }
    const webhookId = id ?? newId("whk", clock.now());
    const secret = generateWebhookSecret();
    const now = new Date(clock.now());
    // From now on: the cursor starts at the organization's newest event.
    const lastEventId = await eventLog.latestId({ orgId });
    const row = {
      id: webhookId,
      orgId,
      url: input.url,
      eventTypes: input.event_types ?? null,
      agentId: input.agent_id ?? null,
      description: input.description ?? null,
      secretSealed: sealWebhookSecret(vault, webhookId, secret),
      status: "enabled" as const,
      lastEventId,
      attempts: 0,
      createdAt: now,
      updatedAt: now,
    };
    await db.transaction(async (tx) => {
      // A retry of a request whose process died after storing it: that secret was never seen.
      if (id) await tx.delete(webhooks).where(and(eq(webhooks.id, id), eq(webhooks.orgId, orgId)));
      await tx.insert(webhooks).values(row);
    });
    this.deps.onChange?.();
    const [stored] = await db.select().from(webhooks).where(eq(webhooks.id, webhookId));
    return { ...toWebhookView(stored), secret };
  }

  async list(orgId: string, opts: { limit: number; cursor?: string }): Promise<{ data: WebhookView[]; next_cursor: string | null }> {
    const cursor = decodeCursor(opts.cursor);
    const rows = await this.deps.db
      .select()
      .from(webhooks)
      .where(
        and(
          eq(webhooks.orgId, orgId),
          cursor ? or(lt(webhooks.createdAt, cursor.at), and(eq(webhooks.createdAt, cursor.at), lt(webhooks.id, cursor.id))) : undefined,
        ),
      )
      .orderBy(desc(webhooks.createdAt), desc(webhooks.id))
      .limit(opts.limit + 1);
    return pageOf(rows, opts.limit, toWebhookView);
  }

  async get(orgId: string, id: string): Promise<WebhookView> {
    return toWebhookView(await this.row(orgId, id));
  }

  async remove(orgId: string, id: string): Promise<void> {
    const gone = await this.deps.db
      .delete(webhooks)
      .where(and(eq(webhooks.id, id), eq(webhooks.orgId, orgId)))
      .returning({ id: webhooks.id });
    if (!gone.length) throw new NotFoundError(`webhook ${id}`);
  }

  /** Enables the endpoint again with fresh retries; delivery resumes after its cursor (the event that failed). */
  async enable(orgId: string, id: string): Promise<WebhookView> {
    const now = new Date(this.deps.clock.now());
    const rows = await this.deps.db
      .update(webhooks)
      .set({ status: "enabled", attempts: 0, nextAttemptAt: null, disabledAt: null, lastError: null, updatedAt: now })
      .where(and(eq(webhooks.id, id), eq(webhooks.orgId, orgId)))
      .returning();
    if (!rows.length) throw new NotFoundError(`webhook ${id}`);
    this.deps.onChange?.();
    return toWebhookView(rows[0]);
  }

  /**
   * Sends a `webhook_test` message to the endpoint now (enabled or not), signed like every delivery,
   * and answers what the endpoint did. Not in the event log; the cursor does not move.
   */
  async test(orgId: string, id: string): Promise<WebhookTestResult> {
    const { clock, settings, vault } = this.deps;
    const row = await this.row(orgId, id);
    const now = new Date(clock.now());
    const messageId = `msg_test_${randomBytes(12).toString("hex")}`;
    let result: DeliveryResult;
    try {
      await checkEndpointUrl(row.url, settings.allowPrivate);
      const secret = await openWebhookSecret(vault, row);
      const body = messageBody({ id: null, type: "webhook_test", timestamp: now, agentId: null, data: { webhook_id: row.id, message: "a test message from the agent brokerage" } });
      result = await sendWebhook(row.url, secret, { id: messageId, body }, { now, timeoutMs: settings.timeoutMs, allowPrivate: settings.allowPrivate });
    } catch (error) {
      if (!(error instanceof WebhookUrlError)) throw error;
      result = { ok: false, status: null, error: error.message, durationMs: 0 };
    }
    return { webhook_id: row.id, message_id: messageId, delivered: result.ok, status: result.status, error: result.error, duration_ms: result.durationMs };
  }

  private async row(orgId: string, id: string): Promise<WebhookRow> {
    const [row] = await this.deps.db
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.id, id), eq(webhooks.orgId, orgId)));
    if (!row) throw new NotFoundError(`webhook ${id}`);
    return row;
  }

  private async checkUrl(url: string): Promise<void> {
    try {
      await checkEndpointUrl(url, this.deps.settings.allowPrivate);
    } catch (error) {
      if (error instanceof WebhookUrlError) throw new InvalidRequestError(`url: ${error.message}`, [{ path: "/body/url", message: error.message }]);
      throw error;
    }
  }
}
