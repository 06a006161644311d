/**
 * The kill switch (docs/api.md#post-v1agentsidkill): trip the breaker at once, cancel every
 * open order concurrently under one deadline, fail and flag what the venue did
 * not confirm in time, then delete delegated credentials irreversibly.
 */
import type { KillResult } from "../../../actors/agent-actor.ts";
import type { CredentialPort } from "../../../actors/ports.ts";
import type { Clock } from "../../domain/clock.ts";
import { newId } from "../../domain/ids.ts";
import type { VenueCredentials } from "../../domain/venue-credentials.ts";
import type { Db } from "../../db/database.ts";
import { events, kills } from "../../db/schema.ts";
import type { Caller } from "../../http/caller.ts";
import type { Logger } from "../../observability/logger.ts";
import type { ServiceMetrics } from "../../observability/metrics.ts";
import type { Venue, VenueAuth } from "../../venues/venue.ts";
import { type AgentService, toAgentModel } from "../agents/service.ts";
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
      venue?: Pick<Venue, "getOrder" | "cancelAll">;
      /** An order's hash (its venue id before the venue named it). */
      orderHashOf?: (orderId: string) => Promise<string | null>;
    },
  ) {}

  /** `breaker`: the breaker's reason, `kill` for the endpoint, `heartbeat` for a missed heartbeat (same kill otherwise). */
  async kill(caller: Caller, agentId: string, reason: string | null, opts: { breaker?: "kill" | "heartbeat"; venueAuth?: VenueAuth } = {}) {
    const { agents, metrics, logger, clock } = this.deps;
    const startedAt = clock.now();
    const deadlineAt = startedAt + this.deps.deadlineMs;
    const actor = await agents.actorFor(caller, agentId);
    const killId = newId("kil", startedAt);

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

    // 1. The breaker trips here, synchronously, before anything else happens (no venue call, no read).
    const running = actor.kill(ports, { deadlineAt, concurrency: this.deps.concurrency, reason: opts.breaker ?? "kill" });
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
      // The kill record and its `kill` event (the answer) in one transaction.
      await this.deps.db.transaction(async (tx) => {
        await tx.insert(kills).values({
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
        await tx.insert(events).values({ orgId: caller.orgId, agentId, type: "kill", data: { ...answer, reason }, createdAt: new Date(completedAt) });
      });
      this.deps.onEvents?.();
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
      breaker_reason: opts.breaker ?? "kill",
      cancelled: result.cancelled.length,
      failed: result.failed.length,
      credentials_deleted: result.credentialsDeleted,
      ms: completedAt - startedAt,
    });
    return answer;
  }
}
