import { and, desc, eq, lt, or } from "drizzle-orm";
import type { AgentView } from "../../../actors/agent-actor.ts";
import { AgentActor } from "../../../actors/agent-actor.ts";
import { ActorRegistry } from "../../../actors/registry.ts";
import type { Db } from "../../db/database.ts";
import { agents } from "../../db/schema.ts";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "../../errors/errors.ts";
import type { Caller } from "../../http/caller.ts";
import { decodeCursor, pageOf } from "../../http/pagination.ts";
import { newId } from "../../ids.ts";
import { unitsToNumber } from "../../money/units.ts";
import { DEFAULT_LIMITS, type LimitsPatch, mergeLimits, validateLimits } from "../../risk/limits.ts";
import { type AgentLimits, DbAgentStore } from "./agent-store.ts";
import type { AgentModel, CreateAgentBody } from "./model.ts";

export type Actor = AgentActor<AgentLimits>;

export class AgentService {
  readonly store: DbAgentStore;
  readonly registry: ActorRegistry<Actor>;

  constructor(
    private readonly db: Db,
    opts: { idleMs: number; defaultLimits?: AgentLimits; onActors?: (n: number) => void },
  ) {
    this.store = new DbAgentStore(db);
    this.registry = new ActorRegistry<Actor>({
      idleMs: opts.idleMs,
      activate: async (id) => {
        const snapshot = await this.store.load(id);
        return snapshot ? new AgentActor(snapshot, this.store) : null;
      },
      onSizeChange: opts.onActors,
    });
    this.defaults = opts.defaultLimits ?? (DEFAULT_LIMITS as AgentLimits);
  }

  private readonly defaults: AgentLimits;

  /** `reservedId`: the agent's id body chosen with the request's Idempotency-Key (see idempotency-recovery.ts). */
  async create(caller: Caller, body: CreateAgentBody, reservedId?: string): Promise<AgentModel> {
    if (caller.agentId) throw new ForbiddenError("an agent-scoped key cannot create agents");
    const limits = this.checkedLimits(mergeLimits(this.defaults, body.limits ?? {}) as AgentLimits);
    const now = new Date();
    const id = reservedId ? `agt_${reservedId}` : newId("agt");
    const wallet = body.wallet_address.toLowerCase();
    await this.db.insert(agents).values({
      id,
      orgId: caller.orgId,
      name: body.name ?? null,
      mode: "payload",
      walletAddress: wallet,
      signerAddress: (body.signer_address ?? body.wallet_address).toLowerCase(),
      signatureType: body.signature_type ?? 0,
      limits: { ...limits },
      createdAt: now,
      updatedAt: now,
    });
    return toAgentModel((await this.actorFor(caller, id)).view());
  }

  /** The actor of an agent the caller may act on: 404 for unknown or other organizations' agents, 403 for another agent's scoped key. */
  async actorFor(caller: Caller, agentId: string): Promise<Actor> {
    if (caller.agentId && caller.agentId !== agentId) {
      const actor = await this.registry.get(agentId);
      if (!actor || actor.view().profile.orgId !== caller.orgId) throw new NotFoundError(`agent ${agentId}`);
      throw new ForbiddenError("this API key is scoped to another agent");
    }
    const actor = await this.registry.get(agentId);
    if (!actor || actor.view().profile.orgId !== caller.orgId) throw new NotFoundError(`agent ${agentId}`);
    return actor;
  }

  async get(caller: Caller, agentId: string): Promise<AgentModel> {
    return toAgentModel((await this.actorFor(caller, agentId)).view());
  }

  async list(caller: Caller, opts: { limit: number; cursor?: string }) {
    const cursor = decodeCursor(opts.cursor);
    const rows = await this.db
      .select({ id: agents.id, createdAt: agents.createdAt })
      .from(agents)
      .where(
        and(
          eq(agents.orgId, caller.orgId),
          caller.agentId ? eq(agents.id, caller.agentId) : undefined,
          cursor ? or(lt(agents.createdAt, cursor.at), and(eq(agents.createdAt, cursor.at), lt(agents.id, cursor.id))) : undefined,
        ),
      )
      .orderBy(desc(agents.createdAt), desc(agents.id))
      .limit(opts.limit + 1);
    const page = pageOf(rows, opts.limit, (r) => r.id);
    const views = await Promise.all(page.data.map((id) => this.registry.get(id)));
    return { data: views.filter((a): a is Actor => a !== null).map((a) => toAgentModel(a.view())), next_cursor: page.next_cursor };
  }

  async patchLimits(caller: Caller, agentId: string, patch: LimitsPatch): Promise<AgentModel> {
    const actor = await this.actorFor(caller, agentId);
    return toAgentModel(await actor.updateLimits((current) => this.checkedLimits(mergeLimits(current, patch) as AgentLimits)));
  }

  async tripBreaker(caller: Caller, agentId: string): Promise<AgentModel> {
    const actor = await this.actorFor(caller, agentId);
    return toAgentModel(await actor.tripBreaker("manual"));
  }

  async resume(caller: Caller, agentId: string): Promise<AgentModel> {
    const actor = await this.actorFor(caller, agentId);
    return toAgentModel(await actor.resume());
  }

  private checkedLimits(limits: AgentLimits): AgentLimits {
    const errors = validateLimits(limits).map((e) => ({ path: `/limits${e.path}`, message: e.message }));
    if (errors.length) throw new InvalidRequestError(`${errors[0].path}: ${errors[0].message}`, errors);
    return limits;
  }

  stop(): void {
    this.registry.stop();
  }

  /** Resolves once no actor has work under way (writes, venue calls, kills), polling every 20 ms. */
  async settled(): Promise<void> {
    while (!this.registry.settled()) await Bun.sleep(20);
  }
}

export function toAgentModel(v: AgentView<AgentLimits>): AgentModel {
  const resets = new Date(`${v.day}T00:00:00.000Z`);
  resets.setUTCDate(resets.getUTCDate() + 1);
  return {
    id: v.profile.id,
    org_id: v.profile.orgId,
    name: v.profile.name,
    mode: v.profile.mode,
    wallet_address: v.profile.walletAddress,
    signer_address: v.profile.signerAddress,
    signature_type: v.profile.signatureType,
    limits: v.limits,
    breaker: { state: v.breaker.state, reason: v.breaker.reason, since: v.breaker.since?.toISOString() ?? null },
    daily_volume: { used_usdc: unitsToNumber(v.dailyUsedUnits), limit_usdc: v.limits.daily_volume_usdc, resets_at: resets.toISOString() },
    open_orders: v.openOrders,
    credentials: v.credentials
      ? { scopes: v.credentials.scopes, key_hint: v.credentials.keyHint, created_at: v.credentials.createdAt.toISOString() }
      : null,
    created_at: v.profile.createdAt.toISOString(),
  };
}
