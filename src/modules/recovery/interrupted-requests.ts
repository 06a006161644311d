/**
 * Answers the retry of a request whose process died while it ran (issue 15.1): its
 * Idempotency-Key record was still "in progress" and start-up marked it interrupted.
 *
 * A request that creates something takes the id reserved with its key (`ord_<reservedId>`,
 * `agt_<reservedId>`), so whether it got as far as storing it is a lookup:
 * - POST /v1/orders/intent: the stored order → the intent's answer, rebuilt from the row (201;
 *   its status as it is now: reconciliation settles a `submitting` one against the venue); an order
 *   a kill halted before it was sent (`rejected`) → the 409 invalid_state the intent answered.
 * - POST /v1/orders/submit-signed: the order no longer awaiting a signature → 200
 *   {order_id, status, venue_order_id, order}, what the route answers.
 * - POST /v1/agents: the stored agent → 201 Agent.
 * - POST /v1/orgs: the stored organization → 201 with it and a new first key (the lost one, never
 *   seen, is revoked).
 * - POST /v1/api-keys: the stored key was never seen: it is revoked and the request runs again
 *   under a fresh id ("run_fresh"), so the caller gets a key it can use.
 * Anything else, or nothing stored: null, and the request runs again, exactly once (with the same
 * reserved id). Routes without a resource of their own (kill, resume, creds, ...) are safe to run
 * again by their own rules.
 */
import { eq } from "drizzle-orm";
import type { Database } from "../../db/database.ts";
import type { OrderRepository, OrderRow } from "../../db/order-repository.ts";
import { riskDecisions } from "../../db/schema.ts";
import { orderTypes } from "../../eip712/order-typed-data.ts";
import type { Caller } from "../../http/caller.ts";
import type { InterruptedAnswer } from "../../http/idempotency.ts";
import { CHECK_NAMES } from "../../risk/types.ts";
import type { AgentService } from "../agents/service.ts";
import { toAgentModel } from "../agents/service.ts";
import type { ApiKeyService } from "../api-keys/service.ts";
import type { OrgService } from "../orgs/service.ts";
import { toOrderModel } from "../orders/order-view.ts";
import { refusalProblem } from "../orders/refusal-problem.ts";

export interface InterruptedRequestDeps {
  apiKeys: ApiKeyService;
  orgs: OrgService;
  orderRepo: OrderRepository;
  agents: AgentService;
  database: Database;
}

const json = (status: number, body: unknown): InterruptedAnswer => ({ status, body: JSON.stringify(body), contentType: "application/json" });

export function interruptedRequestResolver(deps: InterruptedRequestDeps) {
  return async (request: Request, body: string, reservedId: string | null): Promise<InterruptedAnswer | null | "run_fresh"> => {
    const path = new URL(request.url).pathname;
    // The admin bearer token was checked before the record was looked up (the route's admin hook runs first).
    if (path === "/v1/orgs" && reservedId && !request.headers.get("x-api-key")) {
      const again = await deps.orgs.reissueFirstKey(`org_${reservedId}`);
      return again ? json(201, again) : null;
    }
    const url = new URL(request.url);
    if (url.pathname === "/v1/orders/intent" && url.searchParams.get("dry_run") !== "true" && reservedId) {
      // The reserved id is this record's own, and the record is scoped to the request's credential
      // (API key or x402 payment): an order under it is this request's, whoever the caller is.
      const row = await deps.orderRepo.get(`ord_${reservedId}`);
      if (!row) return null;
      if (row.status === "rejected") {
        // Approved, then halted by a kill before it was sent: the intent's answer was this refusal.
        const problem = refusalProblem({ kind: "invalid_state", detail: "the agent's breaker tripped before the order was sent; nothing was placed", orderId: row.id });
        return { status: problem.status, body: JSON.stringify(problem.toProblem()), contentType: "application/problem+json" };
      }
      const [decision] = row.decisionId
        ? await deps.database.db.select({ checks: riskDecisions.checks }).from(riskDecisions).where(eq(riskDecisions.id, row.decisionId))
        : [];
      return json(201, intentAnswer(row, decision?.checks));
    }
    const key = request.headers.get("x-api-key");
    const found = key === null ? null : await deps.apiKeys.authenticate(key);
    if (!found) return null; // runs again, by the route's own rules
    const caller: Caller = { kind: "api_key", orgId: found.orgId, keyId: found.keyId, agentId: found.agentId };
    const mine = (row: OrderRow | null) => row !== null && row.orgId === caller.orgId && (!caller.agentId || row.agentId === caller.agentId);

    if (url.pathname === "/v1/orders/submit-signed") {
      const orderId = parseOrderId(body);
      const row = orderId ? await deps.orderRepo.get(orderId) : null;
      if (!mine(row) || row!.status === "awaiting_signature" || row!.status === "expired") return null;
      return json(200, { order_id: row!.id, status: row!.status, venue_order_id: row!.venueOrderId, order: toOrderModel(row!) });
    }
    if (url.pathname === "/v1/api-keys" && reservedId) {
      return (await deps.apiKeys.revokeUnseen(caller.orgId, `key_${reservedId}`)) ? "run_fresh" : null;
    }
    if (url.pathname === "/v1/agents" && reservedId) {
      const actor = await deps.agents.actorFor(caller, `agt_${reservedId}`).catch(() => null);
      return actor ? json(201, toAgentModel(actor.view())) : null;
    }
    return null;
  };
}

/** The intent route's 201 answer for a stored order (payload: the unsigned order again; delegated: its venue id). */
export function intentAnswer(row: OrderRow, checks?: unknown[]) {
  // An order exists only when all eight checks passed: its decision's checks, or all eight passed.
  const risk = { approved: true, checks: checks?.length ? checks : CHECK_NAMES.map((check) => ({ check, passed: true })) };
  if (row.mode === "payload" && row.typedData) {
    const td = row.typedData as { domain: unknown; primaryType: string; message: unknown };
    return {
      order_id: row.id,
      agent_id: row.agentId,
      mode: row.mode,
      status: row.status,
      unsigned_order: {
        domain: td.domain,
        types: orderTypes(),
        primaryType: td.primaryType,
        message: td.message,
      },
      order_hash: row.orderHash,
      order_type: row.orderType,
      expiration: row.expiration,
      signature_deadline: row.signatureDeadline?.toISOString() ?? null,
      decision_id: row.decisionId,
      risk,
    };
  }
  return {
    order_id: row.id,
    agent_id: row.agentId,
    mode: row.mode,
    status: row.status,
    venue_order_id: row.venueOrderId,
    order_hash: row.orderHash,
    decision_id: row.decisionId,
    risk,
  };
}

function parseOrderId(body: string): string | null {
  try {
    const j = JSON.parse(body) as { order_id?: unknown };
    return typeof j?.order_id === "string" ? j.order_id : null;
  } catch {
    return null;
  }
}
