import { and, desc, eq, isNull, lt, or } from "drizzle-orm";
import { type Clock, systemClock } from "../../domain/clock.ts";
import type { Db } from "../../db/database.ts";
import { agents, apiKeys } from "../../db/schema.ts";
import { NotFoundError } from "../../errors/errors.ts";
import { newId } from "../../domain/ids.ts";
import { generateApiKey, hashApiKey, keyHint } from "./secret.ts";
import { decodeCursor, encodeCursor } from "../../http/pagination.ts";

export interface ApiKeyView {
  id: string;
  name: string | null;
  agent_id: string | null;
  hint: string;
  created_at: string;
  /** When the key last authenticated a request (recorded at most once a minute), or null. */
  last_used_at: string | null;
}

export interface AuthenticatedKey {
  keyId: string;
  orgId: string;
  agentId: string | null;
}

const CACHE_TTL_MS = 30_000;
/** A key's last use is written at most this often, off the request's path. */
const TOUCH_EVERY_MS = 60_000;

export class ApiKeyService {
  /** key hash → lookup result, so the hot path does not query the database per request. */
  private readonly cache = new Map<string, { at: number; key: AuthenticatedKey | null }>();
  /** key id → when its last use was last written. */
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
  ) {}

  /** `id`: the key's id when the request reserved one with its Idempotency-Key (see interrupted-requests.ts). */
  async issue(orgId: string, input: { name?: string | null; agentId?: string | null }, tx: Db = this.db, id?: string) {
    if (input.agentId) {
      const [agent] = await tx.select({ id: agents.id }).from(agents).where(and(eq(agents.id, input.agentId), eq(agents.orgId, orgId)));
      if (!agent) throw new NotFoundError(`agent ${input.agentId}`);
    }
    const key = generateApiKey();
    const row = {
      id: id ?? newId("key", this.clock.now()),
      orgId,
      name: input.name ?? null,
      agentId: input.agentId ?? null,
      keyHash: hashApiKey(key),
      hint: keyHint(key),
      createdAt: new Date(this.clock.now()),
    };
    await tx.insert(apiKeys).values(row);
    return { id: row.id, key, name: row.name, agent_id: row.agentId, created_at: row.createdAt.toISOString() };
  }

  async list(orgId: string, opts: { limit: number; cursor?: string }): Promise<{ data: ApiKeyView[]; next_cursor: string | null }> {
    const cursor = decodeCursor(opts.cursor);
    const rows = await this.db
      .select()
      .from(apiKeys)
      .where(
        and(
          eq(apiKeys.orgId, orgId),
          isNull(apiKeys.revokedAt),
          cursor ? or(lt(apiKeys.createdAt, cursor.at), and(eq(apiKeys.createdAt, cursor.at), lt(apiKeys.id, cursor.id))) : undefined,
        ),
      )
      .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
      .limit(opts.limit + 1);
    const page = rows.slice(0, opts.limit);
    const last = page[page.length - 1];
    return {
      data: page.map((r) => ({
        id: r.id,
        name: r.name,
        agent_id: r.agentId,
        hint: r.hint,
        created_at: r.createdAt.toISOString(),
        last_used_at: r.lastUsedAt?.toISOString() ?? null,
      })),
      next_cursor: rows.length > opts.limit && last ? encodeCursor(last.createdAt, last.id) : null,
    };
  }

  /**
   * Revokes the key `keyId` of `orgId` if it exists and was never revoked; true if it did. For a key
   * whose answer was lost with a crashed process: nobody has seen its secret.
   */
  async revokeUnseen(orgId: string, keyId: string): Promise<boolean> {
    const rows = await this.db
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.orgId, orgId), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id });
    if (rows.length) this.cache.clear();
    return rows.length > 0;
  }

  async revoke(orgId: string, keyId: string): Promise<void> {
    const rows = await this.db
      .update(apiKeys)
      .set({ revokedAt: new Date(this.clock.now()) })
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.orgId, orgId), isNull(apiKeys.revokedAt)))
      .returning({ hash: apiKeys.keyHash });
    if (!rows.length) throw new NotFoundError(`api key ${keyId}`);
    this.cache.delete(rows[0].hash);
  }

  /** The key's organization and agent scope, or null when unknown or revoked. */
  async authenticate(key: string): Promise<AuthenticatedKey | null> {
    const hash = hashApiKey(key);
    const now = this.clock.now();
    const hit = this.cache.get(hash);
    if (hit && now - hit.at < CACHE_TTL_MS) {
      if (hit.key) this.touch(hit.key.keyId, now);
      return hit.key;
    }
    const [row] = await this.db
      .select({ id: apiKeys.id, orgId: apiKeys.orgId, agentId: apiKeys.agentId })
      .from(apiKeys)
      .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)));
    const found = row ? { keyId: row.id, orgId: row.orgId, agentId: row.agentId } : null;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(hash, { at: now, key: found });
    if (found) this.touch(found.keyId, now);
    return found;
  }

  /**
   * Records the key's last use, at most once a minute per key and without holding up the request:
   * the write is not awaited, and a failed one is only retried on a later use.
   */
  private touch(keyId: string, now: number): void {
    const last = this.touched.get(keyId);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return;
    if (this.touched.size > 10_000) this.touched.clear();
    this.touched.set(keyId, now);
    this.db
      .update(apiKeys)
      .set({ lastUsedAt: new Date(now) })
      .where(eq(apiKeys.id, keyId))
      .then(
        () => undefined,
        () => this.touched.delete(keyId),
      );
  }
}

