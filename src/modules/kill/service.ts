/**
 * The kill switch (CONTRACT section 9): trip the breaker at once, cancel every
 * open order concurrently under one deadline, fail and flag what the venue did
 * not confirm in time, then delete delegated credentials irreversibly.
 */
import type { CancelOutcome, TrackedOrder } from "../../../actors/ports.ts";
import type { Db } from "../../db/database.ts";
import { kills } from "../../db/schema.ts";
import type { Caller } from "../../http/caller.ts";
import { newId } from "../../ids.ts";
import type { Logger } from "../../observability/logger.ts";
import type { ServiceMetrics } from "../../observability/metrics.ts";
import type { Venue, VenueCredentials } from "../../venues/venue.ts";
import { type AgentService, toAgentModel } from "../agents/service.ts";
import type { CredentialSource } from "../orders/intent-service.ts";
import type { OrderRepository } from "../orders/order-repository.ts";

const ACTIVE = ["awaiting_signature", "submitting", "open", "unknown"] as const;

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
      concurrency: number;
    },
  ) {}

  async kill(caller: Caller, agentId: string, reason: string | null) {
    const { agents, venue, repo, metrics, logger } = this.deps;
    const startedAt = Date.now();
    const deadlineAt = startedAt + this.deps.deadlineMs;
    const actor = await agents.actorFor(caller, agentId);
    const killId = newId("kil");

    const run = (credentials: VenueCredentials | undefined) =>
      actor.kill(
        {
          cancelAtVenue: async (order: TrackedOrder, signal: AbortSignal): Promise<CancelOutcome> => {
            try {
              const r = await venue.cancelOrder({ venue_order_id: order.venueOrderId!, credentials }, { signal });
              if (!r.ok) logger.warn("kill: venue refused a cancellation", { kill_id: killId, order_id: order.id, venue_error: r.error.slice(0, 200) });
              return r.ok ? "cancelled" : "failed";
            } catch {
              return "failed";
            }
          },
          saveOutcomes: async (outcomes) => {
            const cancelled = outcomes.filter((o) => o.status === "cancelled").map((o) => o.orderId);
            const failed = outcomes.filter((o) => o.status === "failed").map((o) => o.orderId);
            await Promise.all([
              repo.transitionMany(cancelled, [...ACTIVE], "cancelled", "kill switch"),
              repo.transitionMany(failed, [...ACTIVE], "failed", "kill switch: cancellation not confirmed before the deadline", { flaggedForReview: true }),
            ]);
          },
        },
        { deadlineAt, concurrency: this.deps.concurrency },
      );

    // Delegated credentials are opened once for the whole fan-out and wiped when it ends.
    const result = (await this.deps.credentials.withAgentCredentials(agentId, (c) => run(c))) ?? (await run(undefined));
    const completedAt = Date.now();
    await this.deps.db.insert(kills).values({
      id: killId,
      orgId: caller.orgId,
      agentId,
      reason,
      startedAt: new Date(startedAt),
      completedAt: new Date(completedAt),
      cancelled: result.cancelled,
      failed: result.failed,
      credentialsDeleted: result.credentialsDeleted,
    });
    metrics.killDurationSeconds.observe((completedAt - startedAt) / 1000);
    metrics.killOrdersTotal.inc({ outcome: "cancelled" }, result.cancelled.length);
    metrics.killOrdersTotal.inc({ outcome: "failed" }, result.failed.length);
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
      failed: result.failed,
      credentials_deleted: result.credentialsDeleted,
      agent: toAgentModel(actor.view()),
    };
  }
}
