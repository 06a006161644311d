import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { AgentHaltedError, InvalidRequestError, InvalidStateError, NotFoundError } from "../../errors/errors.ts";
import { problemResponses } from "../../errors/problem-model.ts";
import type { HeartbeatService } from "./heartbeat-service.ts";
import { AgentIdParam, AgentModel } from "./model.ts";

// TypeBox's own Integer: a JSON integer only (Elysia's t.Integer also takes a numeric string such as "30").
export const HeartbeatBody = t.Object(
  { interval_s: Type.Integer({ minimum: 5, maximum: 3600, description: "seconds a beat may take at most; the agent is killed when none arrives in time" }) },
  { additionalProperties: false, examples: [{ interval_s: 30 }] },
);

const noAgent = new NotFoundError("agent");

/** The dead-man switch routes (docs/api.md#heartbeat-dead-man-switch). */
export function heartbeatModule(deps: { heartbeats: HeartbeatService; auth: ReturnType<typeof authPlugin> }) {
  const { heartbeats } = deps;
  return new Elysia({ name: "heartbeat", prefix: "/v1/agents" })
    .use(deps.auth)
    .put("/:id/heartbeat", ({ caller, params, body }) => heartbeats.turnOn(caller, params.id, body.interval_s), {
      auth: true,
      params: AgentIdParam,
      body: HeartbeatBody,
      response: { 200: AgentModel },
      detail: {
        summary: "Turn the dead-man switch on: without a beat every interval_s the agent is killed (reason heartbeat)",
        tags: ["agents"],
        responses: problemResponses(new InvalidRequestError("/interval_s: Expected integer to be greater or equal to 5", [{ path: "/interval_s", message: "Expected integer to be greater or equal to 5" }]), noAgent),
      },
    })
    .delete("/:id/heartbeat", ({ caller, params }) => heartbeats.turnOff(caller, params.id), {
      auth: true,
      params: AgentIdParam,
      response: { 200: AgentModel },
      detail: { summary: "Turn the dead-man switch off", tags: ["agents"], responses: problemResponses(noAgent) },
    })
    .post("/:id/heartbeat", ({ caller, params }) => heartbeats.beat(caller, params.id), {
      auth: true,
      params: AgentIdParam,
      response: { 200: AgentModel },
      detail: {
        summary: "A heartbeat; no body. Late (after deadline_at) it kills the agent and answers 409 agent_halted",
        tags: ["agents"],
        responses: problemResponses(
          new InvalidStateError("the heartbeat of agent agt_20ew38ygo3k92ke1kcen is off"),
          new AgentHaltedError("agt_20ew38ygo3k92ke1kcen", "the beat came after the heartbeat deadline: the agent is killed (reason heartbeat)"),
          noAgent,
        ),
      },
    });
}
