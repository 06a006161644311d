/**
 * The organization-wide halt (docs/api.md#post-v1kill): POST /v1/kill kills every agent of the
 * organization through KillService.kill and marks the organization halted; POST /v1/resume undoes it;
 * GET /v1/kill tells whether it is halted. Only an organization API key (not scoped to an agent) may.
 */
import { and, eq, gte, sql } from "drizzle-orm";
import type { Clock } from "../../domain/clock.ts";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "../../errors/errors.ts";
import type { Db } from "../../db/database.ts";
import { agents as agentsTable, orgs } from "../../db/schema.ts";
import type { Caller } from "../../http/caller.ts";
import type { Logger } from "../../observability/logger.ts";
import type { VenueAuth } from "../../venues/venue.ts";
import type { AgentService } from "../agents/service.ts";
import type { KillService } from "./service.ts";

/** Why an agent-scoped key (or an x402 payer) is refused the firm-wide kill, resume and state. */
export const ORG_KEY_NEEDED = "the firm-wide kill and resume need an organization API key (not scoped to an agent)";

export class FirmKillService {
  constructor(private readonly deps: { db: Db; agents: AgentService; clock: Clock; logger: Logger; kill: Pick<KillService, "kill"> }) {}

  /**
   * The firm-wide kill (docs/api.md#post-v1kill): the organization is marked halted first (agents
   * created from then on start halted), then every agent of it is killed concurrently, each under
   * its own deadline, through KillService.kill. The agents it halted (not those already halted by a kill,
   * a heartbeat or a person) are recorded, for POST /v1/resume to resume. A second sweep kills an
   * agent whose creation raced the flag.
   */
  async killAll(caller: Caller, orgId: string, reason: string | null, opts: { venueAuths?: Record<string, VenueAuth> } = {}) {
    requireOrgKey(caller, orgId);
    const { db, agents, clock, logger } = this.deps;
    const startedAt = clock.now();
    const [org] = await db
      .update(orgs)
      .set({ haltedAt: sql`COALESCE(${orgs.haltedAt}, ${new Date(startedAt).toISOString()}::timestamptz)` })
      .where(eq(orgs.id, caller.orgId))
      .returning({ haltedAt: orgs.haltedAt });
    if (!org) throw new NotFoundError("organization");
    const done = new Map<string, FirmKillAgentResult | null>();
    const halted: string[] = [];
    const sweep = async () => {
      const rows = await db.select({ id: agentsTable.id }).from(agentsTable).where(eq(agentsTable.orgId, caller.orgId));
      await Promise.all(
        rows
          .filter((r) => !done.has(r.id))
          .map(async ({ id }) => {
            done.set(id, null);
            try {
              const before = (await agents.actorFor(caller, id)).view().breaker;
              // Halted before by a kill, a heartbeat or a person: not the firm kill's to undo.
              const haltedBefore = before.state === "tripped" && (before.reason === "kill" || before.reason === "heartbeat" || before.reason === "manual");
              if (!haltedBefore) halted.push(id);
              const auth = opts.venueAuths?.[id];
              const k = await this.deps.kill.kill(caller, id, reason, auth ? { venueAuth: auth } : {});
              done.set(id, {
                agent_id: id,
                kill_id: k.kill_id,
                duration_ms: k.duration_ms,
                cancelled: k.cancelled,
                filled: k.filled,
                failed: k.failed,
                credentials_deleted: k.credentials_deleted,
                error: null,
              });
            } catch (error) {
              if (error instanceof NotFoundError) {
                done.delete(id); // removed meanwhile
                return;
              }
              logger.error("firm kill: an agent's kill failed", { agent_id: id, error });
              done.set(id, { agent_id: id, kill_id: null, duration_ms: null, cancelled: [], filled: [], failed: [], credentials_deleted: false, error: error instanceof Error ? error.message.slice(0, 200) : "kill failed" });
            }
          }),
      );
    };
    await sweep();
    await sweep();
    if (halted.length) {
      await db
        .update(orgs)
        .set({ haltKillAgentIds: sql`COALESCE(${orgs.haltKillAgentIds}, '[]'::jsonb) || ${JSON.stringify(halted)}::jsonb` })
        .where(eq(orgs.id, caller.orgId));
    }
    const completedAt = clock.now();
    const results = [...done.values()].filter((r): r is FirmKillAgentResult => r !== null);
    logger.info("firm kill", { org_id: caller.orgId, agents: results.length, ms: completedAt - startedAt });
    return {
      org_id: caller.orgId,
      halted: true as const,
      halted_at: org.haltedAt!.toISOString(),
      started_at: new Date(startedAt).toISOString(),
      completed_at: new Date(completedAt).toISOString(),
      duration_ms: completedAt - startedAt,
      agents: results,
    };
  }

  /**
   * POST /v1/resume: undoes the firm-wide kill in one call (docs/decisions.md "Firm-wide kill and
   * resume"): resumes the agents it halted and those created while the organization was halted, as
   * long as their breaker is still tripped by a kill, then clears the organization's flag. Agents a
   * kill, a heartbeat or a person had halted before the firm kill stay halted. Idempotent.
   */
  async resumeAll(caller: Caller, orgId: string) {
    requireOrgKey(caller, orgId);
    const { db, agents, logger } = this.deps;
    const [org] = await db.select({ haltedAt: orgs.haltedAt, ids: orgs.haltKillAgentIds }).from(orgs).where(eq(orgs.id, caller.orgId));
    if (!org) throw new NotFoundError("organization");
    if (!org.haltedAt) return { org_id: caller.orgId, halted: false as const, resumed: [] as string[] };
    const resumed: string[] = [];
    const resumeSome = async (ids: Iterable<string>) => {
      await Promise.all(
        [...new Set(ids)].filter((id) => !resumed.includes(id)).map(async (id) => {
          try {
            const actor = await agents.actorFor(caller, id);
            const b = actor.view().breaker;
            if (b.state !== "tripped" || b.reason !== "kill") return;
            await actor.resume();
            resumed.push(id);
          } catch (error) {
            if (!(error instanceof NotFoundError)) throw error;
          }
        }),
      );
    };
    const createdWhileHalted = async (since: Date) =>
      (await db.select({ id: agentsTable.id }).from(agentsTable).where(and(eq(agentsTable.orgId, caller.orgId), gte(agentsTable.createdAt, since)))).map((r) => r.id);
    await resumeSome([...(org.ids ?? []), ...(await createdWhileHalted(org.haltedAt))]);
    await db.update(orgs).set({ haltedAt: null, haltKillAgentIds: null }).where(eq(orgs.id, caller.orgId));
    // An agent created between the reads above and the flag's clearing started halted: resumed too.
    await resumeSome(await createdWhileHalted(org.haltedAt));
    logger.info("firm resume", { org_id: caller.orgId, resumed: resumed.length });
    return { org_id: caller.orgId, halted: false as const, resumed };
  }

  /** GET /v1/kill: whether the organization is halted by the firm-wide kill. */
  async firmState(caller: Caller) {
    requireOrgKey(caller);
    const [org] = await this.deps.db.select({ haltedAt: orgs.haltedAt, ids: orgs.haltKillAgentIds }).from(orgs).where(eq(orgs.id, caller.orgId));
    if (!org) throw new NotFoundError("organization");
    return { org_id: caller.orgId, halted: org.haltedAt !== null, halted_at: org.haltedAt?.toISOString() ?? null, agent_ids: org.ids ?? [] };
  }
}

export interface FirmKillAgentResult {
  agent_id: string;
  kill_id: string | null;
  duration_ms: number | null;
  cancelled: string[];
  filled: string[];
  failed: string[];
  credentials_deleted: boolean;
  /** Why this agent's kill did not run (its orders may still be open), or null. */
  error: string | null;
}

/** The firm-wide kill and its resume are an organization's: an agent-scoped key (or an x402 payer) is refused. */
function requireOrgKey(caller: Caller, orgId?: string): void {
  if (caller.kind !== "api_key" || caller.agentId) throw new ForbiddenError(ORG_KEY_NEEDED);
  if (orgId !== undefined && orgId !== caller.orgId) {
    throw new InvalidRequestError("org_id is not the organization of this API key", [{ path: "/org_id", message: "must be the caller's own organization id" }]);
  }
}
