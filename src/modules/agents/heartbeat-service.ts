/**
 * The dead-man switch (docs/api.md#heartbeat-dead-man-switch): an agent turns heartbeats on with an
 * interval; a beat that arrives after the deadline (by even a millisecond), or the sweep finding the
 * deadline passed, kills the agent exactly as POST /v1/agents/{id}/kill does, with reason
 * `heartbeat`. The deadline lives in the agent's actor and its row, so a restart keeps it and the
 * start-up sweep kills an agent that became overdue while the service was down.
 */
import type { Clock } from "../../domain/clock.ts";
import { AgentHaltedError, InvalidStateError } from "../../errors/errors.ts";
import type { Caller } from "../../http/caller.ts";
import type { Logger } from "../../observability/logger.ts";
import type { KillService } from "../kill/service.ts";
import { type Actor, type AgentService, toAgentModel } from "./service.ts";
import type { AgentModel } from "./model.ts";

export class HeartbeatService {
  constructor(private readonly deps: { agents: AgentService; kill: KillService; clock: Clock; logger: Logger }) {}

  /** PUT: turns the switch on (or changes the interval); the deadline is now + interval. */
  async turnOn(caller: Caller, agentId: string, intervalS: number): Promise<AgentModel> {
    const actor = await this.deps.agents.actorFor(caller, agentId);
    return toAgentModel(await actor.setHeartbeat(intervalS));
  }

  /** DELETE: turns the switch off. */
  async turnOff(caller: Caller, agentId: string): Promise<AgentModel> {
    const actor = await this.deps.agents.actorFor(caller, agentId);
    return toAgentModel(await actor.clearHeartbeat());
  }

  /** POST: a beat. On time it moves the deadline; late, the agent is killed and the beat is 409 agent_halted. */
  async beat(caller: Caller, agentId: string): Promise<AgentModel> {
    const actor = await this.deps.agents.actorFor(caller, agentId);
    const r = await actor.beat();
    if (r.kind === "ok") return toAgentModel(r.view);
    if (r.kind === "off") throw new InvalidStateError(`the heartbeat of agent ${agentId} is off; turn it on with PUT /v1/agents/${agentId}/heartbeat`);
    if (r.claimed) await this.killMissed(actor);
    throw new AgentHaltedError(
      agentId,
      `the beat came after the heartbeat deadline ${r.deadlineAt.toISOString()}: agent ${agentId} is killed (reason heartbeat); resume it, then turn the heartbeat on again`,
    );
  }

  /** Kills every agent whose heartbeat deadline has passed; runs at start-up and then every second. */
  async sweep(now = this.deps.clock.now()): Promise<{ killed: number }> {
    const { agents } = this.deps;
    const due = await agents.store.overdueHeartbeats(new Date(now));
    let killed = 0;
    for (const id of due) {
      // Only agents this instance owns or can take without asking (a live owner sweeps its own).
      const actor = await agents.registry.getIfFree(id);
      if (actor && (await actor.claimHeartbeatKill()) && (await this.killMissed(actor))) killed++;
    }
    return { killed };
  }

  /** The kill of a missed heartbeat: the kill endpoint's, with a kill row whose reason is `heartbeat`. */
  private async killMissed(actor: Actor): Promise<boolean> {
    const { kill, logger } = this.deps;
    const profile = actor.view().profile;
    const system: Caller = { kind: "api_key", orgId: profile.orgId, keyId: "heartbeat", agentId: null };
    try {
      const result = await kill.kill(system, profile.id, "heartbeat", { breaker: "heartbeat" });
      await actor.heartbeatKillEnded(true);
      logger.warn("heartbeat missed: agent killed", { agent_id: profile.id, kill_id: result.kill_id });
      return true;
    } catch (error) {
      // The switch stays on with its passed deadline: the next sweep tries again.
      await actor.heartbeatKillEnded(false);
      logger.error("heartbeat missed: the kill failed", { agent_id: profile.id, error });
      return false;
    }
  }
}
