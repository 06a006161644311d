/**
 * The kill switch (docs/api.md#post-v1agentsidkill): trip the breaker at once, cancel every
 * open order concurrently under one deadline, fail and flag what the venue did
 * not confirm in time, then delete delegated credentials irreversibly.
 *
 * The kill is durable before the venue is called: its `kills` row is written when it starts
 * (`completed_at` null), concurrently with the breaker's write, and every venue call and order
 * write of the kill waits for it. The row is completed, with the `kill` event, at the end. A row a
 * crash left unfinished is run again at start-up (`resumeUnfinished`, src/jobs.ts), under the same
 * kill id, through the same path (docs/decisions.md "Kills resumed at start-up").
 */
import { and, asc, eq, inArray, isNull } from "drizzle-orm";
import type { KillResult } from "../../../actors/agent-actor.ts";
import type { CredentialPort, KillPorts } from "../../../actors/ports.ts";
import { filledUnitsOf } from "../../domain/venue-status.ts";
import type { Clock } from "../../domain/clock.ts";
import { newId } from "../../domain/ids.ts";
import type { VenueCredentials } from "../../domain/venue-credentials.ts";
import { NotFoundError } from "../../errors/errors.ts";
import type { Db } from "../../db/database.ts";
import { fenceCheck, fenced } from "../../db/lease-fence.ts";
import { LeaseLostError } from "../../../actors/lease-port.ts";
import { agents as agentsTable, events, kills } from "../../db/schema.ts";
import type { Caller } from "../../http/caller.ts";
import type { Logger } from "../../observability/logger.ts";
import type { ServiceMetrics } from "../../observability/metrics.ts";
import type { Venue, VenueAuth } from "../../venues/venue.ts";
import { type Actor, type AgentService, toAgentModel } from "../agents/service.ts";
import { cancelAllPorts } from "./cancel-all-ports.ts";
import { type CancelOne, cancelWithRetry } from "./cancel-with-retry.ts";

export class KillService {
  constructor(
    private readonly deps: {
      db: Db;
      agents: AgentService;
      credentials: CredentialPort;
      clock: Clock;
      metrics: ServiceMetrics;
      logger: Logger;
      deadlineMs: number;
      concurrency: number;
      /** Called after events were committed (the event log's wake-up). */
      onEvents?: () => void;
      /** The venue, for a payload agent's cancel-all with the owner's venue_auth (cancel-all-ports.ts). */
      venue?: Pick<Venue, "getOrder" | "cancelAll" | "cancelOrder">;
      /** An order's hash (its venue id before the venue named it). */
      orderHashOf?: (orderId: string) => Promise<string | null>;
    },
  ) {}

  /**
   * `breaker`: the breaker's reason, `kill` for the endpoint, `heartbeat` for a missed heartbeat (same kill otherwise).
   * `resume`: the unfinished kill row a crash left (resumeUnfinished): the same kill id and start, a new deadline from now.
   */
  async kill(
    caller: Caller,
    agentId: string,
    reason: string | null,
    opts: { breaker?: "kill" | "heartbeat"; venueAuth?: VenueAuth; resume?: { killId: string; startedAt: number } } = {},
  ) {
    const { agents, clock } = this.deps;
    const runStartedAt = clock.now();
    const startedAt = opts.resume?.startedAt ?? runStartedAt;
    const deadlineAt = runStartedAt + this.deps.deadlineMs;
    const actor = await agents.actorFor(caller, agentId, { urgent: true });
    const killId = opts.resume?.killId ?? newId("kil", startedAt);
    this.running.add(killId);
    try {
      return await this.run(caller, agentId, reason, opts, actor, killId, { runStartedAt, startedAt, deadlineAt });
    } finally {
      this.running.delete(killId);
    }
  }

  /** Kills running in this process (a periodic resume leaves them alone). */
  private readonly running = new Set<string>();

  private async run(
    caller: Caller,
    agentId: string,
    reason: string | null,
    opts: { breaker?: "kill" | "heartbeat"; venueAuth?: VenueAuth; resume?: { killId: string; startedAt: number } },
    actor: Actor,
    killId: string,
    times: { runStartedAt: number; startedAt: number; deadlineAt: number },
  ) {
    // The rest of the kill, as it was before its run was tracked (`running`).
    const { agents, metrics, logger, clock } = this.deps;
    void agents;
    const { runStartedAt, startedAt, deadlineAt } = times;
    const breakerReason = opts.breaker ?? "kill";

    // The cancellations wait for the credentials, which are opened only after the breaker tripped.
    let provide!: (c: VenueCredentials | undefined) => void;
    const credentials = new Promise<VenueCredentials | undefined>((resolve) => (provide = resolve));

    // Errors and unanswered cancels are retried until the deadline (cancel-with-retry.ts); cancels
    // issued together go out as one batch where the venue adapter batches them.
    const retry = (venueOrderId: string, once: CancelOne, signal: AbortSignal) => cancelWithRetry(venueOrderId, once, { signal, deadlineAt });
    let ports = actor.killPorts(
      credentials,
      (orderId, r) => {
        const retried = r as { attempts?: number; final?: boolean };
        logger.warn("kill: cancellation not confirmed", {
          kill_id: killId,
          order_id: orderId,
          attempts: retried.attempts,
          final: retried.final,
          venue_error: r.error.slice(0, 200),
        });
      },
      retry,
    );
    // A payload agent whose owner sent venue_auth: one cancel-all at the venue with the owner's headers.
    const cancelAll = this.deps.venue?.cancelAll?.bind(this.deps.venue);
    if (opts.venueAuth && cancelAll && actor.view().profile.mode === "payload") {
      const venue = this.deps.venue!;
      const orderHashOf = this.deps.orderHashOf ?? (async () => null);
      ports = cancelAllPorts(ports, {
        venue: { cancelAll, getOrder: venue.getOrder.bind(venue) },
        venueAuth: { ...opts.venueAuth, address: opts.venueAuth.address ?? actor.view().profile.signerAddress },
        orderHashOf,
        remainingMs: () => deadlineAt - clock.now(),
        onRefused: (venueError) => logger.warn("kill: venue refused the owner's cancel-all", { kill_id: killId, agent_id: agentId, venue_error: venueError }),
      });
    }

    // The kill's row is written before any venue call or order write of the kill: both wait for it.
    let recorded!: () => void;
    const written = new Promise<void>((resolve) => (recorded = resolve));
    const durable = afterWrite(ports, written);
    // The kill's audit rows are the agent's writes like its orders': fenced on the lease the actor runs
    // under (PostgreSQL), in their own transactions. A refused one is logged; the kill goes on (its
    // order writes are refused too, and the agent's new owner resumes the kill under its lease).
    const fence = agents.fenceOf(actor);
    const audit = <T>(write: (tx: Db) => Promise<T>): Promise<T> =>
      fenced(fence, () =>
        this.deps.db.transaction(async (tx) => {
          if (fence) await tx.execute(fenceCheck(fence));
          return write(tx as unknown as Db);
        }),
      );

    // 1. The breaker trips here, synchronously, before anything else happens (no venue call, no read).
    const running = actor.kill(durable, { deadlineAt, concurrency: this.deps.concurrency, reason: breakerReason });
    // 1b. The unfinished kill row, alongside the actor's breaker write (a resumed kill has its row).
    if (opts.resume) recorded();
    else {
      const row = {
        id: killId,
        orgId: caller.orgId,
        agentId,
        reason,
        breakerReason,
        startedAt: new Date(startedAt),
        completedAt: null,
        cancelled: [],
        filled: [],
        failed: [],
        credentialsDeleted: false,
      };
      (fence ? audit((tx) => tx.insert(kills).values(row).onConflictDoNothing()) : this.deps.db.insert(kills).values(row).onConflictDoNothing()).then(
        () => recorded(),
        (error: unknown) => {
          // The kill goes on (cancelling matters more than its record); the end of the kill inserts the row.
          if (error instanceof LeaseLostError) logger.warn("kill: lease lost: the kill record was not stored at the start", { kill_id: killId, agent_id: agentId });
          else logger.error("kill: the kill record was not stored at the start", { kill_id: killId, agent_id: agentId, error });
          recorded();
        },
      );
    }
    // 2. Delegated credentials are opened once for the whole fan-out and wiped when it ends; the
    //    actor deletes the stored ciphertext after the cancellations.
    //    They stay open after the answer only while the fills of the cancelled orders are read.
    let handedOver = false;
    const settle = (r: KillResult, c: VenueCredentials | undefined) =>
      actor.settleLateFills(r.cancelled, c).catch((error: unknown) => logger.warn("kill: settling fills failed", { kill_id: killId, error }));
    const opened = this.deps.credentials
      .withAgentCredentials(agentId, async (c) => {
        handedOver = true;
        provide(c);
        await settle(await running, c);
        return true;
      })
      .then(async (used) => {
        if (used !== null) return;
        provide(undefined); // no credentials: the cancellations go without them
        await settle(await running, undefined);
      })
      .catch((error: unknown) => {
        // Not openable (sealed to another key?): the cancellations go without them and, if the venue
        // refuses them, the orders are failed and flagged. A failure of the kill itself surfaces below.
        if (!handedOver) logger.error("kill: the agent's credentials could not be opened", { kill_id: killId, agent_id: agentId, error });
      })
      .finally(() => provide(undefined));
    void opened;
    const result = await running;
    const completedAt = clock.now();
    const answer = {
      kill_id: killId,
      agent_id: agentId,
      started_at: new Date(startedAt).toISOString(),
      completed_at: new Date(completedAt).toISOString(),
      duration_ms: completedAt - startedAt,
      cancelled: result.cancelled,
      filled: result.filled,
      failed: result.failed,
      credentials_deleted: result.credentialsDeleted,
      agent: toAgentModel(actor.view()),
    };
    try {
      // The kill record completed and its `kill` event (the answer) in one transaction (inserted
      // whole if its start was not stored).
      const outcome = {
        completedAt: new Date(completedAt),
        cancelled: result.cancelled,
        filled: result.filled,
        failed: result.failed,
        credentialsDeleted: result.credentialsDeleted,
      };
      await audit(async (tx) => {
        await tx
          .insert(kills)
          .values({ id: killId, orgId: caller.orgId, agentId, reason, breakerReason, startedAt: new Date(startedAt), ...outcome })
          .onConflictDoUpdate({ target: kills.id, set: outcome });
        await tx.insert(events).values({ orgId: caller.orgId, agentId, type: "kill", data: { ...answer, reason }, createdAt: new Date(completedAt) });
      });
      this.deps.onEvents?.();
    } catch (error) {
      // The kill has happened: a failed audit row must not turn its answer into an error. Refused for a
      // lost lease: the row stays unfinished and the agent's new owner runs the kill again under its
      // lease (resumeUnfinished), which completes it.
      if (error instanceof LeaseLostError) logger.warn("kill: lease lost: the kill record was not completed here; the agent's owner resumes it", { kill_id: killId, agent_id: agentId });
      else logger.error("kill: the kill record was not stored", { kill_id: killId, agent_id: agentId, error });
    }
    metrics.killDurationSeconds.observe((completedAt - runStartedAt) / 1000);
    metrics.killOrdersTotal.inc({ outcome: "cancelled" }, result.cancelled.length);
    metrics.killOrdersTotal.inc({ outcome: "failed" }, result.failed.length);
    metrics.killOrdersTotal.inc({ outcome: "filled" }, result.filled.length);
    logger.info("kill switch", {
      kill_id: killId,
      agent_id: agentId,
      breaker_reason: breakerReason,
      resumed: opts.resume ? true : undefined,
      cancelled: result.cancelled.length,
      failed: result.failed.length,
      credentials_deleted: result.credentialsDeleted,
      ms: completedAt - runStartedAt,
    });
    return answer;
  }

  /**
   * Cancel-all (docs/api.md#post-v1agentsidcancel-all): the kill's fan-out (same deadline, retries,
   * concurrency, failed-and-flagged rule) over the agent's active orders, or one outcome token's, with
   * the breaker left as it is and the credentials kept. `venueAuth` (payload mode, whole agent): the
   * owner's headers over DELETE /cancel-all, as the kill takes them; `venueAuths`: the owner's headers
   * over each order's DELETE /order, by venue order id.
   */
  async cancelAll(caller: Caller, agentId: string, opts: { marketId?: string; venueAuth?: VenueAuth; venueAuths?: Record<string, VenueAuth> } = {}) {
    const { agents, logger, clock } = this.deps;
    const actor = await agents.actorFor(caller, agentId);
    const startedAt = clock.now();
    const deadlineAt = startedAt + this.deps.deadlineMs;
    let provide!: (c: VenueCredentials | undefined) => void;
    const credentials = new Promise<VenueCredentials | undefined>((resolve) => (provide = resolve));
    const retry = (venueOrderId: string, once: CancelOne, signal: AbortSignal) => cancelWithRetry(venueOrderId, once, { signal, deadlineAt });
    let ports = actor.killPorts(
      credentials,
      (orderId, r) => logger.warn("cancel-all: cancellation not confirmed", { agent_id: agentId, order_id: orderId, venue_error: r.error.slice(0, 200) }),
      retry,
      "cancel-all",
    );
    const venue = this.deps.venue;
    const orderHashOf = this.deps.orderHashOf ?? (async () => null);
    const signer = actor.view().profile.signerAddress;
    if (opts.venueAuths && venue) ports = perOrderAuthPorts(ports, { venue, venueAuths: opts.venueAuths, signer, orderHashOf, retry });
    const cancelAll = venue?.cancelAll?.bind(venue);
    if (opts.venueAuth && cancelAll && venue && opts.marketId === undefined && actor.view().profile.mode === "payload") {
      ports = cancelAllPorts(ports, {
        venue: { cancelAll, getOrder: venue.getOrder.bind(venue) },
        venueAuth: { ...opts.venueAuth, address: opts.venueAuth.address ?? signer },
        orderHashOf,
        remainingMs: () => deadlineAt - clock.now(),
        onRefused: (venueError) => logger.warn("cancel-all: venue refused the owner's cancel-all", { agent_id: agentId, venue_error: venueError }),
      });
    }
    const running = actor.cancelAll(ports, { deadlineAt, concurrency: this.deps.concurrency, marketId: opts.marketId });
    // Delegated credentials opened once for the fan-out (and the late-fill reads after it); nothing is deleted.
    const settle = (cancelled: string[], c: VenueCredentials | undefined) =>
      actor.settleLateFills(cancelled, c).catch((error: unknown) => logger.warn("cancel-all: settling fills failed", { agent_id: agentId, error }));
    let handedOver = false;
    void this.deps.credentials
      .withAgentCredentials(agentId, async (c) => {
        handedOver = true;
        provide(c);
        await settle((await running).cancelled, c);
        return true;
      })
      .then(async (used) => {
        if (used !== null) return;
        provide(undefined);
        await settle((await running).cancelled, undefined);
      })
      .catch((error: unknown) => {
        if (!handedOver) logger.error("cancel-all: the agent's credentials could not be opened", { agent_id: agentId, error });
      })
      .finally(() => provide(undefined));
    const result = await running;
    const completedAt = clock.now();
    logger.info("cancel-all", { agent_id: agentId, market_id: opts.marketId, cancelled: result.cancelled.length, failed: result.failed.length, ms: completedAt - startedAt });
    return {
      agent_id: agentId,
      market_id: opts.marketId ?? null,
      started_at: new Date(startedAt).toISOString(),
      completed_at: new Date(completedAt).toISOString(),
      duration_ms: completedAt - startedAt,
      cancelled: result.cancelled,
      filled: result.filled,
      failed: result.failed,
      agent: toAgentModel(actor.view()),
    };
  }

  /**
   * At start-up: every kill a crash left unfinished (its row without `completed_at`) is run again for
   * its agent, under its own kill id: the orders still active are cancelled (an order the venue
   * already cancelled is answered "already cancelled" and ends `cancelled`), the rows are moved
   * through the actor, the row is completed and its `kill` event written. Agents in parallel; an
   * agent's kills one after another (its actor chains them).
   */
  async resumeUnfinished(): Promise<{ resumed: number; failed: number }> {
    const { db, agents, logger, clock } = this.deps;
    const all = await db.select().from(kills).where(isNull(kills.completedAt)).orderBy(asc(kills.startedAt));
    // Not the kills running here; and only for agents this instance owns or can take without asking
    // (a kill under way at a live owner is that owner's; a dead owner's lease has lapsed).
    const rows: typeof all = [];
    for (const row of all) {
      if (this.running.has(row.id)) continue;
      if (agents.registry.peek(row.agentId) || (await agents.registry.getIfFree(row.agentId).catch(() => null))) rows.push(row);
      else if (!(await agentExists(db, row.agentId))) rows.push(row);
    }
    // Read again now that the leases are ours: a kill that another instance was still running when
    // the rows were read has completed meanwhile (that instance then let the agent go). Run again it
    // would overwrite the completed record with an empty outcome.
    if (rows.length) {
      const open = new Set(
        (await db.select({ id: kills.id }).from(kills).where(and(isNull(kills.completedAt), inArray(kills.id, rows.map((r) => r.id))))).map((r) => r.id),
      );
      for (let i = rows.length - 1; i >= 0; i--) if (!open.has(rows[i].id)) rows.splice(i, 1);
    }
    const outcomes = await Promise.all(
      rows.map(async (row) => {
        const system: Caller = { kind: "api_key", orgId: row.orgId, keyId: "kill-resume", agentId: null };
        const breaker = row.breakerReason === "heartbeat" ? "heartbeat" : "kill";
        logger.warn("kill: resuming a kill a restart interrupted", { kill_id: row.id, agent_id: row.agentId, breaker_reason: breaker });
        let actor: Actor;
        try {
          actor = await agents.actorFor(system, row.agentId);
        } catch (error) {
          if (!(error instanceof NotFoundError)) throw error;
          // The agent is gone: nothing to cancel; the row is closed so it is not tried again.
          await db.update(kills).set({ completedAt: new Date(clock.now()) }).where(eq(kills.id, row.id));
          logger.warn("kill: the agent of an interrupted kill no longer exists", { kill_id: row.id, agent_id: row.agentId });
          return false;
        }
        // A heartbeat kill ends the dead-man switch as the sweep's own does, and keeps the sweep from killing twice.
        const claimed = breaker === "heartbeat" && (await actor.claimHeartbeatKill());
        try {
          await this.kill(system, row.agentId, row.reason, { breaker, resume: { killId: row.id, startedAt: row.startedAt.getTime() } });
          if (claimed) await actor.heartbeatKillEnded(true);
          return true;
        } catch (error) {
          if (claimed) await actor.heartbeatKillEnded(false);
          throw error;
        }
      }).map((p, i) =>
        p.catch((error: unknown) => {
          logger.error("kill: resuming an interrupted kill failed", { kill_id: rows[i].id, agent_id: rows[i].agentId, error });
          return null;
        }),
      ),
    );
    return { resumed: outcomes.filter((o) => o === true).length, failed: outcomes.filter((o) => o === null).length };
  }
}

async function agentExists(db: Db, agentId: string): Promise<boolean> {
  const [row] = await db.select({ id: agentsTable.id }).from(agentsTable).where(eq(agentsTable.id, agentId));
  return !!row;
}

/** `ports`, with every venue cancellation and every order write waiting for `written` (the kill's row). */
function afterWrite(ports: KillPorts, written: Promise<void>): KillPorts {
  return {
    cancelAtVenue: async (order, signal) => {
      // Bounded by the kill's deadline: a database that does not answer cannot hold the cancels past it.
      await Promise.race([written, new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })))]);
      if (signal.aborted) return { status: "failed" };
      return ports.cancelAtVenue(order, signal);
    },
    saveOutcomes: async (outcomes) => {
      await written;
      return ports.saveOutcomes(outcomes);
    },
  };
}

/**
 * `base`, with the orders whose owner sent headers over their own DELETE /order (`venueAuths`, by
 * venue order id) cancelled with those headers, retried under the deadline like every cancel; the
 * others go the ordinary way.
 */
function perOrderAuthPorts(
  base: KillPorts,
  deps: {
    venue: Pick<Venue, "getOrder" | "cancelOrder">;
    venueAuths: Record<string, VenueAuth>;
    signer: string;
    orderHashOf: (orderId: string) => Promise<string | null>;
    retry: (venueOrderId: string, once: CancelOne, signal: AbortSignal) => ReturnType<typeof cancelWithRetry>;
  },
): KillPorts {
  return {
    saveOutcomes: (outcomes) => base.saveOutcomes(outcomes),
    cancelAtVenue: async (order, signal) => {
      const venueOrderId = order.venueOrderId ?? (await deps.orderHashOf(order.id).catch(() => null));
      const auth = venueOrderId ? deps.venueAuths[venueOrderId] : undefined;
      if (!venueOrderId || !auth) return base.cancelAtVenue(order, signal);
      const once: CancelOne = (id, s) => deps.venue.cancelOrder({ venue_order_id: id, venue_auth: { ...auth, address: auth.address ?? deps.signer } }, { signal: s });
      const r = await deps.retry(venueOrderId, once, signal);
      if (!r.ok) return { status: "failed" };
      if (!r.already) return { status: "cancelled" };
      const state = await deps.venue.getOrder({ venue_order_id: venueOrderId }, { signal }).catch(() => null);
      if (!state) return { status: "cancelled" };
      const filledUnits = filledUnitsOf(state.filled_usdc);
      return state.status === "matched" ? { status: "filled", filledUnits: filledUnits || order.notionalUnits } : { status: "cancelled", filledUnits };
    },
  };
}
