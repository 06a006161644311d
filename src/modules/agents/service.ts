import { and, desc, eq, lt, or, sql } from "drizzle-orm";
import type { AgentView } from "../../../actors/agent-actor.ts";
import { AgentActor } from "../../../actors/agent-actor.ts";
import type { AgentStore, OrderPorts, VenuePort } from "../../../actors/ports.ts";
import { ActorRegistry } from "../../../actors/registry.ts";
import { type AgentLease, type Fence, LeaseLostError, type LeasePort } from "../../../actors/lease-port.ts";
import { type Clock, systemClock } from "../../domain/clock.ts";
import type { OrderRow } from "../../db/order-repository.ts";
import type { Db, QueryStatement } from "../../db/database.ts";
import { agents, orgs } from "../../db/schema.ts";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "../../errors/errors.ts";
import type { Caller } from "../../http/caller.ts";
import { forgetRequestLeases, noteRequestLease } from "../../http/request-lease.ts";
import { decodeCursor, pageOf } from "../../http/pagination.ts";
import { newId } from "../../domain/ids.ts";
import { unitsToNumber } from "../../domain/units.ts";
import { DEFAULT_LIMITS, type LimitsPatch, mergeLimits, validateLimits } from "../../risk/limits.ts";
import { type AgentLimits, DbAgentStore } from "./agent-store.ts";
import type { AgentModel, CreateAgentBody } from "./model.ts";

export type Actor = AgentActor<AgentLimits, OrderRow>;
/** The ports that carry an agent's fence (AgentService.connect). */
export type FencedPorts = Pick<OrderPorts<OrderRow>, "orders" | "fills">;

export class AgentService {
  readonly store: DbAgentStore;
  readonly registry: ActorRegistry<Actor>;

  constructor(
    private readonly db: Db,
    opts: {
      idleMs: number;
      defaultLimits?: AgentLimits;
      onActors?: (n: number) => void;
      clock?: Clock;
      mailboxCapacity?: number;
      onEvents?: () => void;
      /** The database's prepared-statement runner (Database.query): the credential read of every delegated placement. */
      query?: QueryStatement;
      /** Single activation across instances (src/db/agent-leases.ts); absent: this process alone. */
      lease?: {
        port: LeasePort;
        acquireWaitMs: number;
        handoffMaxMs: number;
        log?: (message: string, fields: Record<string, unknown>) => void;
        /**
         * Whether the actors' writes are fenced on their lease's epoch (PostgreSQL). On PGlite the
         * data-directory lock already keeps every other process out: the fence would only cost CPU.
         */
        fenceWrites?: boolean;
      };
    },
  ) {
    this.clock = opts.clock ?? systemClock;
    this.store = new DbAgentStore(db, this.clock, opts.onEvents, opts.query);
    this.instanceId = opts.lease?.port.instanceId ?? null;
    this.registry = new ActorRegistry<Actor>({
      idleMs: opts.idleMs,
      clock: this.clock,
      activate: async (id, lease) => {
        const snapshot = await this.store.load(id);
        if (!snapshot) return null;
        // Under a lease, the actor's writes (its own and its orders') are fenced on the lease's epoch.
        const fence = opts.lease?.fenceWrites !== false ? lease : undefined;
        const store = fence ? this.store.fenced(fence) : this.store;
        const fencedPorts = fence && this.orderPorts && this.fencePorts ? { ...this.orderPorts, ...this.fencePorts(fence) } : this.orderPorts;
        // Nothing is sent to the venue for the agent once its lease is gone (handed over, lapsed):
        // the next owner's kill cancels by its hash an order it cannot know was still to be sent.
        const ports = lease && fencedPorts ? { ...fencedPorts, venue: leasedVenue(fencedPorts.venue, lease) } : fencedPorts;
        const actor = new AgentActor(snapshot, store, this.clock, ports ?? undefined, { mailboxCapacity: opts.mailboxCapacity });
        if (lease) this.leases.set(actor, { lease, fence });
        return actor;
      },
      onSizeChange: opts.onActors,
      lease: opts.lease,
    });
    this.defaults = opts.defaultLimits ?? (DEFAULT_LIMITS as AgentLimits);
  }

  private readonly defaults: AgentLimits;
  private readonly clock: Clock;
  private orderPorts: OrderPorts<OrderRow> | null = null;
  /** The order and fill stores fenced on an agent's lease (OrderRepository.fenced, FillStore.fenced). */
  private fencePorts: ((fence: Fence) => FencedPorts) | null = null;
  /** The lease each actor was activated under, and the fence its writes carry (none on PGlite). */
  private readonly leases = new WeakMap<Actor, { lease: AgentLease; fence: Fence | undefined }>();
  /** This process's INSTANCE_ID when agents are leased (shown as `owner_instance`). */
  readonly instanceId: string | null;

  /**
   * Gives the actors their order path (store, venue, credentials). Set once at start-up, before any
   * request: the credentials service depends on this service, so it cannot be passed in the constructor.
   * `fencePorts`: the order and fill stores for one lease (every write fenced on its epoch).
   */
  connect(ports: OrderPorts<OrderRow>, fencePorts?: (fence: Fence) => FencedPorts): void {
    this.orderPorts = ports;
    this.fencePorts = fencePorts ?? null;
  }

  /** The lease the agent's actor runs under here, if any. */
  leaseOf(agentId: string): AgentLease | undefined {
    return this.registry.leaseOf(agentId);
  }

  /**
   * The fence `actor`'s writes carry (its lease, on PostgreSQL): writes made for the agent beside the
   * actor (the kill's audit rows, an x402 undo) carry it too. None on PGlite, or without leases.
   */
  fenceOf(actor: Actor): Fence | undefined {
    return this.leases.get(actor)?.fence;
  }

  /** The fence of the agent's live actor here, if any (never activates it). */
  fenceFor(agentId: string): Fence | undefined {
    const live = this.registry.peek(agentId);
    return live ? this.fenceOf(live) : undefined;
  }

  /** `reservedId`: the agent's id body chosen with the request's Idempotency-Key (see idempotency-recovery.ts). */
  async create(caller: Caller, body: CreateAgentBody, reservedId?: string): Promise<AgentModel> {
    if (caller.agentId) throw new ForbiddenError("an agent-scoped key cannot create agents");
    const limits = this.checkedLimits(mergeLimits(this.defaults, body.limits ?? {}) as AgentLimits);
    const now = new Date(this.clock.now());
    const id = reservedId ? `agt_${reservedId}` : newId("agt", now.getTime());
    const wallet = body.wallet_address.toLowerCase();
    const signatureType = body.signature_type ?? 0;
    const signer = (body.signer_address ?? body.wallet_address).toLowerCase();
    const owner = body.owner_address?.toLowerCase() ?? null;
    checkSigningAddresses({ wallet, signer, owner, signatureType });
    await this.db.insert(agents).values({
      id,
      orgId: caller.orgId,
      name: body.name ?? null,
      mode: "payload",
      walletAddress: wallet,
      signerAddress: signer,
      signatureType,
      ownerAddress: owner,
      limits: { ...limits },
      // While the organization is halted by the firm-wide kill (POST /v1/kill), a new agent starts
      // halted (reason kill) until POST /v1/resume; read in the insert itself, so no separate read races it.
      breakerState: sql`CASE WHEN (SELECT ${orgs.haltedAt} FROM ${orgs} WHERE ${orgs.id} = ${caller.orgId}) IS NULL THEN 'closed' ELSE 'tripped' END`,
      breakerReason: sql`CASE WHEN (SELECT ${orgs.haltedAt} FROM ${orgs} WHERE ${orgs.id} = ${caller.orgId}) IS NULL THEN NULL ELSE 'kill' END`,
      breakerSince: sql`CASE WHEN (SELECT ${orgs.haltedAt} FROM ${orgs} WHERE ${orgs.id} = ${caller.orgId}) IS NULL THEN NULL ELSE ${now.toISOString()}::timestamptz END`,
      createdAt: now,
      updatedAt: now,
    });
    const actor = await this.actorFor(caller, id);
    const view = toAgentModel(actor.view());
    // The new agent's lease goes back at once: its first request about it (behind the proxy, at the
    // instance its id hashes to) takes it free, with no hand-over from the instance that created it.
    if (this.instanceId) {
      await this.registry.forget(id, actor);
      forgetRequestLeases(caller);
    }
    return view;
  }

  /** The actor of an agent the caller may act on: 404 for unknown or other organizations' agents, 403 for another agent's scoped key. */
  async actorFor(caller: Caller, agentId: string, opts?: { urgent?: boolean }): Promise<Actor> {
    if (caller.agentId && caller.agentId !== agentId) {
      const actor = await this.registry.get(agentId);
      if (!actor || actor.orgId !== caller.orgId) throw new NotFoundError(`agent ${agentId}`);
      throw new ForbiddenError("this API key is scoped to another agent");
    }
    // `urgent` (a kill): another instance that owns the agent hands it over after a short wait.
    const actor = await this.registry.get(agentId, opts);
    if (!actor || actor.orgId !== caller.orgId) throw new NotFoundError(`agent ${agentId}`);
    // The request runs under the actor's lease: if it is taken from this process before the request is
    // answered, its Idempotency-Key record is left interrupted, not released (src/http/idempotency.ts).
    const held = this.leases.get(actor);
    if (held) noteRequestLease(caller, held.lease);
    return actor;
  }

  /**
   * Removes an agent's rows through its actor (AgentActor.retire: after the order writes it started,
   * and refusing intents from then on), then drops the actor. `remove` answers whether it removed them.
   */
  async retire(agentId: string, remove: (fence?: Fence) => Promise<boolean>): Promise<boolean> {
    const actor = await this.registry.get(agentId);
    if (!actor) return remove();
    const fence = this.fenceOf(actor);
    const removed = await actor.retire(() => remove(fence));
    if (removed) this.registry.forget(agentId, actor);
    return removed;
  }

  async get(caller: Caller, agentId: string): Promise<AgentModel> {
    return { ...toAgentModel((await this.actorFor(caller, agentId)).view()), owner_instance: this.instanceId };
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
    const views = await Promise.all(page.data.map((id) => this.readView(id)));
    return { data: views.filter((v): v is AgentView<AgentLimits> => v !== null).map((v) => toAgentModel(v)), next_cursor: page.next_cursor };
  }

  /**
   * The agent's signer address, for opening its credentials (CredentialsService.withAgentCredentials):
   * from its live actor, else as stored. Never activates the actor nor takes the lease: the callers
   * (a placement, a kill) run inside the actor, and taking the lease from there would wait for a
   * hand-over under way, which itself waits for that very placement or kill to end. Null when the
   * agent does not exist.
   */
  async signerAddressOf(id: string): Promise<string | null> {
    const live = this.registry.peek(id);
    if (live) return live.view().profile.signerAddress;
    if (!this.instanceId) return (await this.registry.get(id))?.view().profile.signerAddress ?? null;
    const [row] = await this.db.select({ signer: agents.signerAddress }).from(agents).where(eq(agents.id, id));
    return row?.signer ?? null;
  }

  /**
   * An agent's view for a listing. With leases, an agent this instance does not own is read from the
   * database as it stands (a snapshot, no actor activated, nothing written): a listing does not take
   * every listed agent over from the instances that own them.
   */
  private async readView(id: string): Promise<AgentView<AgentLimits> | null> {
    const live = this.registry.peek(id);
    if (live) return live.view();
    if (!this.instanceId) return (await this.registry.get(id))?.view() ?? null;
    const snapshot = await this.store.load(id);
    return snapshot ? new AgentActor(snapshot, READ_ONLY_STORE, this.clock).view() : null;
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

/** The store of a snapshot read for a listing: it writes nothing (a view may close a cooled breaker in memory only). */
const READ_ONLY_STORE: AgentStore<AgentLimits> = {
  saveLimits: async () => {},
  saveBreaker: async () => {},
  saveCredentials: async () => {},
  deleteCredentials: async () => false,
  saveHeartbeat: async () => {},
};

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
    owner_address: v.profile.ownerAddress ?? null,
    limits: v.limits,
    breaker: { state: v.breaker.state, reason: v.breaker.reason, since: v.breaker.since?.toISOString() ?? null },
    heartbeat: v.heartbeat
      ? { interval_s: v.heartbeat.intervalS, last_at: v.heartbeat.lastAt.toISOString(), deadline_at: v.heartbeat.deadlineAt.toISOString() }
      : null,
    daily_volume: { used_usdc: unitsToNumber(v.dailyUsedUnits), limit_usdc: v.limits.daily_volume_usdc, resets_at: resets.toISOString() },
    open_orders: v.openOrders,
    credentials: v.credentials
      ? { scopes: v.credentials.scopes, key_hint: v.credentials.keyHint, created_at: v.credentials.createdAt.toISOString() }
      : null,
    created_at: v.profile.createdAt.toISOString(),
  };
}

const ZERO_ADDRESS = `0x${"0".repeat(40)}`;

/**
 * docs/api.md#agents: the zero address is never accepted; signature type 3 (deposit wallet) needs
 * `owner_address` (the EOA that signs) and has the wallet as both maker and signer; the other
 * types refuse `owner_address`. Addresses arrive lowercased.
 */
function checkSigningAddresses(a: { wallet: string; signer: string; owner: string | null; signatureType: number }): void {
  const errors: { path: string; message: string }[] = [];
  if (a.wallet === ZERO_ADDRESS) errors.push({ path: "/wallet_address", message: "the zero address is not accepted" });
  if (a.signer === ZERO_ADDRESS) errors.push({ path: "/signer_address", message: "the zero address is not accepted" });
  if (a.owner === ZERO_ADDRESS) errors.push({ path: "/owner_address", message: "the zero address is not accepted" });
  if (a.signatureType === 3) {
    if (a.owner === null) errors.push({ path: "/owner_address", message: "required for signature_type 3 (deposit wallet): the EOA that signs for it" });
    if (a.signer !== a.wallet) errors.push({ path: "/signer_address", message: "for signature_type 3 the signer is the deposit wallet itself (wallet_address)" });
    if (a.owner !== null && a.owner === a.wallet) errors.push({ path: "/owner_address", message: "the owner must be the EOA that signs, not the deposit wallet" });
  } else if (a.owner !== null) {
    errors.push({ path: "/owner_address", message: "only accepted with signature_type 3 (deposit wallet)" });
  }
  if (errors.length) throw new InvalidRequestError(`${errors[0].path}: ${errors[0].message}`, errors);
}

/** `venue`, placing nothing once `lease` is lost (the placement fails as a lost lease: nothing was sent). */
function leasedVenue(venue: VenuePort, lease: AgentLease): VenuePort {
  const gate = () => {
    if (lease.lost) throw new LeaseLostError(lease.agentId, lease.epoch);
  };
  return {
    getMarketByToken: (t, o) => venue.getMarketByToken(t, o),
    getBook: (t, o) => venue.getBook(t, o),
    postSignedOrder: async (req, o) => {
      gate();
      return venue.postSignedOrder(req, o);
    },
    placeDelegatedOrder: async (req, o) => {
      gate();
      return venue.placeDelegatedOrder(req, o);
    },
    cancelOrder: (req, o) => venue.cancelOrder(req, o),
    getOrder: (req, o) => venue.getOrder(req, o),
  };
}
