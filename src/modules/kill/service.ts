/**
 * The kill switch (CONTRACT section 9): trip the breaker at once, cancel every
 * open order concurrently under one deadline, fail and flag what the venue did
 * not confirm in time, then delete delegated credentials irreversibly.
 */
import pLimit from "p-limit";
import type { KillResult } from "../../../actors/agent-actor.ts";
import { ACTIVE_STATUS_LIST, type CancelOutcome, type KillOutcome, type KillPorts, type TrackedOrder } from "../../../actors/ports.ts";
import type { Db } from "../../db/database.ts";
import { kills } from "../../db/schema.ts";
import type { Caller } from "../../http/caller.ts";
import { newId } from "../../ids.ts";
import type { Logger } from "../../observability/logger.ts";
import type { ServiceMetrics } from "../../observability/metrics.ts";
import type { Venue, VenueCredentials } from "../../venues/venue.ts";
import { batchingCancel, type CancelOne, cancelWithRetry } from "./cancel-with-retry.ts";
import { filledUnitsOf } from "../../orders/venue-status.ts";
import { type Actor, type AgentService, toAgentModel } from "../agents/service.ts";
import type { CredentialSource } from "../orders/intent-service.ts";
import type { OrderRepository } from "../orders/order-repository.ts";


export class KillService {
  constructor(
    private readonly deps: {
      db: Db;
      agents: AgentService;
      venue: Venue;
      repo: OrderRepository;
      credentials: CredentialSource;
      metrics: ServiceMetrics;
      logger: Logger;
      deadlineMs: number;
      venueTimeoutMs: number;
      concurrency: number;
    },
  ) {}

  async kill(caller: Caller, agentId: string, reason: string | null) {
    const { agents, venue, repo, metrics, logger } = this.deps;
    const startedAt = Date.now();
    const deadlineAt = startedAt + this.deps.deadlineMs;
    const actor = await agents.actorFor(caller, agentId);
    const killId = newId("kil");

    // The cancellations wait for the credentials, which are opened only after the breaker tripped.
    let provide!: (c: VenueCredentials | undefined) => void;
    const credentials = new Promise<VenueCredentials | undefined>((resolve) => (provide = resolve));

    // Errors and timeouts are retried until the deadline; cancels issued together go out as one
    // batch where the venue has DELETE /orders.
    const deadline = AbortSignal.timeout(Math.max(0, deadlineAt - Date.now()));
    let batch: CancelOne | null = null;
    const cancelPort = (c: VenueCredentials | undefined) => {
      const single: CancelOne = (id, s) => venue.cancelOrder({ venue_order_id: id, credentials: c }, { signal: s });
      batch ??= venue.cancelOrders
        ? batchingCancel((ids, s) => venue.cancelOrders!({ venue_order_ids: ids, credentials: c }, { signal: s }), { signal: deadline })
        : single;
      return { first: batch, single };
    };

    const ports: KillPorts = {
      cancelAtVenue: async (order: TrackedOrder, signal: AbortSignal): Promise<CancelOutcome> => {
        try {
          const c = await credentials;
          // Unknown after a timeout, or submitting from an earlier process: the venue id is the order hash.
          const venueOrderId = order.venueOrderId ?? (await repo.get(order.id))?.orderHash ?? null;
          if (!venueOrderId) return { status: "failed" };
          const port = cancelPort(c);
          const r = await cancelWithRetry(venueOrderId, port.first, { signal, deadlineAt, retryWith: port.single });
          if (!r.ok) {
            logger.warn("kill: cancellation not confirmed", { kill_id: killId, order_id: order.id, attempts: r.attempts, final: r.final, venue_error: r.error.slice(0, 200) });
            return { status: "failed" };
          }
          if (!r.already) return { status: "cancelled" };
          // Nothing left to cancel: it was cancelled or it matched before the kill reached it.
          const state = await venue.getOrder({ venue_order_id: venueOrderId, credentials: c }, { signal }).catch(() => null);
          if (!state) return { status: "cancelled" };
          const filledUnits = filledUnitsOf(state.filled_usdc);
          return state.status === "matched" ? { status: "filled", filledUnits: filledUnits || order.notionalUnits } : { status: "cancelled", filledUnits };
        } catch {
          return { status: "failed" };
        }
      },
      saveOutcomes: async (outcomes) => {
        const plain = (status: KillOutcome["status"]) => outcomes.filter((o) => o.status === status && o.filledUnits === undefined).map((o) => o.orderId);
        await Promise.all([
          repo.transitionMany(plain("cancelled"), [...ACTIVE_STATUS_LIST], "cancelled", "kill switch"),
          repo.transitionMany(plain("failed"), [...ACTIVE_STATUS_LIST], "failed", "kill switch: cancellation not confirmed before the deadline", { flaggedForReview: true }),
          ...outcomes
            .filter((o) => o.filledUnits !== undefined)
            .map((o) => repo.transition(o.orderId, [...ACTIVE_STATUS_LIST], o.status, o.reason, { filledUnits: o.filledUnits })),
        ]);
      },
    };

    // 1. The breaker trips here, synchronously, before anything else happens (no venue call, no read).
    const running = actor.kill(ports, { deadlineAt, concurrency: this.deps.concurrency });
    // 2. Delegated credentials are opened once for the whole fan-out and wiped when it ends; the
    //    actor deletes the stored ciphertext after the cancellations.
    //    They stay open after the answer only while the fills of the cancelled orders are read.
    let handedOver = false;
    const settle = (r: KillResult, c: VenueCredentials | undefined) =>
      this.settleFills(actor, r.cancelled, c).catch((error: unknown) => logger.warn("kill: settling fills failed", { kill_id: killId, error }));
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
    const completedAt = Date.now();
    try {
      await this.deps.db.insert(kills).values({
        id: killId,
        orgId: caller.orgId,
        agentId,
        reason,
        startedAt: new Date(startedAt),
        completedAt: new Date(completedAt),
        cancelled: result.cancelled,
        filled: result.filled,
        failed: result.failed,
        credentialsDeleted: result.credentialsDeleted,
      });
    } catch (error) {
      // The kill has happened: a failed audit row must not turn its answer into an error.
      logger.error("kill: the kill record was not stored", { kill_id: killId, agent_id: agentId, error });
    }
    metrics.killDurationSeconds.observe((completedAt - startedAt) / 1000);
    metrics.killOrdersTotal.inc({ outcome: "cancelled" }, result.cancelled.length);
    metrics.killOrdersTotal.inc({ outcome: "failed" }, result.failed.length);
    metrics.killOrdersTotal.inc({ outcome: "filled" }, result.filled.length);
    logger.info("kill switch", {
      kill_id: killId,
      agent_id: agentId,
      cancelled: result.cancelled.length,
      failed: result.failed.length,
      credentials_deleted: result.credentialsDeleted,
      ms: completedAt - startedAt,
    });
    return {
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
  }

  /**
   * After the answer: reads each cancelled order at the venue and records
   * what had filled before the cancellation, so that part keeps counting
   * against the agent's limits. Bounded concurrency; unreadable orders are skipped.
   */
  private async settleFills(actor: Actor, orderIds: string[], credentials: VenueCredentials | undefined): Promise<void> {
    const { repo, venue } = this.deps;
    if (!orderIds.length) return;
    const rows = await repo.getMany(orderIds);
    const limit = pLimit(8);
    await Promise.all(
      rows.map((row) =>
        limit(async () => {
          const venueOrderId = row.venueOrderId ?? row.orderHash;
          if (!venueOrderId || row.status !== "cancelled") return;
          const state = await venue
            .getOrder({ venue_order_id: venueOrderId, credentials }, { signal: AbortSignal.timeout(this.deps.venueTimeoutMs) })
            .catch(() => null);
          const filled = state ? filledUnitsOf(state.filled_usdc) : 0n;
          if (filled <= row.filledUnits) return;
          if (await repo.setFilled(row.id, "cancelled", filled)) {
            await actor.addLateFill({ tradingDay: row.tradingDay, conditionId: row.conditionId, side: row.side }, filled - row.filledUnits);
          }
        }),
      ),
    );
  }
}
