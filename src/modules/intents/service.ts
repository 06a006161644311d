/**
 * Order intents (docs/api.md#risk-checks): turns the request into an intent message for the agent's actor, and
 * the actor's answer into the HTTP answer. The checks, the reservation, the order and its
 * placement all happen in the actor (actors/agent-actor.ts).
 */
import { AgentRetiredError } from "../../../actors/agent-retired-error.ts";
import { MailboxFullError } from "../../../actors/mailbox.ts";
import { ForbiddenError, InvalidRequestError, NotFoundError, RiskRejectedError } from "../../errors/errors.ts";
import { AgentBusyError } from "../../errors/agent-busy.ts";
import type { Caller } from "../../http/caller.ts";
import type { Clock } from "../../domain/clock.ts";
import { DecimalError, numberToPlainString, toUnits } from "../../domain/units.ts";
import type { RiskResult } from "../../risk/types.ts";
import type { AgentService } from "../agents/service.ts";
import { refusalProblem } from "../orders/refusal-problem.ts";
import type { IntentBody } from "./model.ts";

export type IntentAnswer = { status: 200 | 201 | 202; body: Record<string, unknown> };

export class IntentService {
  constructor(private readonly deps: { agents: AgentService; clock: Clock }) {}

  /** `reservedId`: the order's id body chosen with the request's Idempotency-Key (see interrupted-requests.ts). */
  async submit(caller: Caller, body: IntentBody, dryRun: boolean, reservedId?: string): Promise<IntentAnswer> {
    const agentId = resolveAgentId(caller, body.agent_id);
    const actor = await this.deps.agents.actorFor(caller, agentId);
    const orderType = body.order_type ?? "GTC";
    const answer = await busyAware(() =>
      actor.intent({
        orgId: caller.orgId,
        marketId: body.market_id,
        side: body.side,
        sizeUsdc: body.size_usdc,
        sizeUnits: parseSize(body.size_usdc),
        price: body.price,
        priceText: numberToPlainString(body.price),
        probability: body.probability,
        orderType,
        expiration: parseExpiration(orderType, body.expires_at, this.deps.clock.now()),
        clientOrderId: body.client_order_id ?? null,
        record: { ...body, agent_id: agentId },
        dryRun,
        ...(reservedId && !dryRun ? { reservedId } : {}),
      }),
    );
    switch (answer.kind) {
      case "dry_run":
        return { status: 200, body: { risk: riskView(answer.verdict) } };
      case "rejected":
        throw new RiskRejectedError({ decision_id: answer.decisionId, failures: answer.verdict.failures, checks: answer.verdict.checks });
      case "payload":
        return {
          status: 201,
          body: {
            order_id: answer.orderId,
            agent_id: agentId,
            mode: "payload",
            status: "awaiting_signature",
            unsigned_order: answer.unsignedOrder,
            order_hash: answer.orderHash,
            order_type: answer.orderType,
            expiration: answer.expiration,
            signature_deadline: answer.signatureDeadline.toISOString(),
            decision_id: answer.decisionId,
            risk: riskView(answer.verdict),
          },
        };
      case "pending_approval":
        // 202: accepted and reserved, not yet executed; a person decides (docs/api.md#approval-above-a-threshold).
        return {
          status: 202,
          body: {
            order_id: answer.orderId,
            agent_id: agentId,
            mode: answer.mode,
            status: "pending_approval",
            order_hash: answer.orderHash,
            approval_deadline: answer.approvalDeadline.toISOString(),
            decision_id: answer.decisionId,
            risk: riskView(answer.verdict),
          },
        };
      case "delegated": {
        if (answer.placed.kind !== "ok") throw refusalProblem(answer.placed);
        const row = answer.placed.order;
        return {
          status: 201,
          body: {
            order_id: answer.orderId,
            agent_id: agentId,
            mode: "delegated",
            status: row.status,
            venue_order_id: row.venueOrderId,
            order_hash: answer.orderHash,
            decision_id: answer.decisionId,
            risk: riskView(answer.verdict),
          },
        };
      }
      default:
        throw refusalProblem(answer);
    }
  }
}

/** Runs a message to an actor; a full mailbox is 503 with Retry-After, a removed agent 404. */
export async function busyAware<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof MailboxFullError) throw new AgentBusyError();
    if (error instanceof AgentRetiredError) throw new NotFoundError(`agent ${error.agentId}`);
    throw error;
  }
}

export function riskView(v: RiskResult) {
  return v.approved ? { approved: true, checks: v.checks } : { approved: false, checks: v.checks, failures: v.failures };
}

function resolveAgentId(caller: Caller, given: string | undefined): string {
  if (caller.agentId) {
    if (given && given !== caller.agentId) {
      // An x402 payer has no organization to share: another agent is simply not found.
      if (caller.kind === "x402") throw new NotFoundError(`agent ${given}`);
      throw new ForbiddenError("this API key is scoped to another agent");
    }
    return caller.agentId;
  }
  if (!given) throw new InvalidRequestError("agent_id is required unless the API key is scoped to one agent", [{ path: "/agent_id", message: "required" }]);
  return given;
}

function parseSize(size: number): bigint {
  try {
    return toUnits(size);
  } catch (error) {
    if (error instanceof DecimalError) {
      throw new InvalidRequestError("size_usdc has more than 6 decimal places", [{ path: "/size_usdc", message: "at most 6 decimal places" }]);
    }
    throw error;
  }
}

/** Unix seconds for GTD orders (expires_at required, in the future); "0" otherwise. */
function parseExpiration(orderType: string, expiresAt: string | undefined, now: number): string {
  if (orderType !== "GTD") {
    if (expiresAt) throw new InvalidRequestError("expires_at is only for GTD orders", [{ path: "/expires_at", message: "only with order_type GTD" }]);
    return "0";
  }
  if (!expiresAt) throw new InvalidRequestError("GTD orders need expires_at", [{ path: "/expires_at", message: "required for GTD" }]);
  const ms = Date.parse(expiresAt);
  if (Number.isNaN(ms) || ms <= now + 60_000) {
    throw new InvalidRequestError("expires_at must be at least a minute in the future", [{ path: "/expires_at", message: "must be in the future" }]);
  }
  return String(Math.floor(ms / 1000));
}
