/**
 * Orders after approval (docs/api.md#submit-signed): submit-signed, read, list, cancel one; and the sweeps
 * that expire unsigned orders and reconcile unsettled ones. Every status change is a message to
 * the order's agent actor; this module reads, checks visibility and translates answers.
 */
import pLimit from "p-limit";
import type { OrderStatus } from "../../domain/order-status.ts";
import type { OrderRepository, OrderRow } from "../../db/order-repository.ts";
import { ForbiddenError, NotFoundError } from "../../errors/errors.ts";
import type { Caller } from "../../http/caller.ts";
import type { Logger } from "../../observability/logger.ts";
import type { AgentService } from "../agents/service.ts";
import { busyAware } from "../intents/service.ts";
import { orderTypes } from "../../eip712/order-typed-data.ts";
import type { CancelBody, DecisionBody, SubmitSignedBody } from "./model.ts";
import { toOrderDetail, toOrderModel } from "./order-view.ts";
import { type FillStore, fillView } from "../../db/fill-store.ts";
import { unitsToNumber } from "../../domain/units.ts";
import { refusalProblem } from "./refusal-problem.ts";

/** Due orders read per page of an expiry pass, of each kind. */
const EXPIRY_PAGE = 2_000;
/** Agents whose due orders an expiry pass expires at once. */
const EXPIRY_AGENTS = 16;
/** An expiry pass stops reading pages after this long (the sweep runs every 5 s; the next pass goes on). */
const EXPIRY_BUDGET_MS = 4_000;

export class OrderService {
  constructor(private readonly deps: { agents: AgentService; repo: OrderRepository; logger: Logger; fills?: Pick<FillStore, "orderWithFills"> }) {}

  /** An order the caller may see: 404 for unknown ids and other organizations, 403 for another agent's scoped key. */
  async visible(caller: Caller, id: string): Promise<OrderRow> {
    const row = await this.deps.repo.get(id);
    if (!row || row.orgId !== caller.orgId) throw new NotFoundError(`order ${id}`);
    if (caller.agentId && row.agentId !== caller.agentId) throw new ForbiddenError("this API key is scoped to another agent");
    return row;
  }

  async get(caller: Caller, id: string) {
    let row = await this.visible(caller, id);
    if (!this.deps.fills) return toOrderDetail(row);
    // The row and its fills from one snapshot: the filled amounts, the status and the fills agree.
    const snapshot = await this.deps.fills.orderWithFills(row.id);
    if (snapshot) row = snapshot.order;
    const view = toOrderDetail(row);
    const fills = snapshot?.fills ?? [];
    const counted = fills.filter((f) => f.status !== "failed");
    const shares = counted.reduce((sum, f) => sum + f.sharesUnits, 0n);
    return { ...view, filled_shares: unitsToNumber(shares), fills: fills.map(fillView) };
  }

  async list(caller: Caller, q: { agent_id?: string; status?: string; limit?: number; cursor?: string }) {
    if (caller.agentId && q.agent_id && q.agent_id !== caller.agentId) {
      // An x402 payer has no organization to share: another agent is simply not found.
      if (caller.kind === "x402") throw new NotFoundError(`agent ${q.agent_id}`);
      throw new ForbiddenError("this API key is scoped to another agent");
    }
    const page = await this.deps.repo.list({
      orgId: caller.orgId,
      agentId: caller.agentId ?? q.agent_id,
      status: q.status as OrderStatus | undefined,
      limit: q.limit ?? 50,
      cursor: q.cursor,
    });
    return { data: page.data.map(toOrderModel), next_cursor: page.next_cursor };
  }

  /** Hands the signature to the agent's actor, which checks it over the exact approved order and forwards it. */
  async submitSigned(caller: Caller, body: SubmitSignedBody) {
    const row = await this.visible(caller, body.order_id);
    const actor = await this.deps.agents.actorFor(caller, row.agentId);
    const placed = await busyAware(() => actor.submitSigned({ order: row, signature: body.signature, venueAuth: body.venue_auth }));
    if (placed.kind !== "ok") throw refusalProblem(placed);
    const settled = placed.order;
    return { order_id: settled.id, status: settled.status, venue_order_id: settled.venueOrderId, order: toOrderModel(settled) };
  }

  /**
   * Cancels one order through its agent's actor; `venue_auth`, when given, is the owner's L2 headers
   * over the venue's DELETE /order for this order, passed through to the venue and kept nowhere.
   */
  async cancel(caller: Caller, id: string, body?: CancelBody) {
    const row = await this.visible(caller, id);
    const actor = await this.deps.agents.actorFor(caller, row.agentId);
    const done = await busyAware(() => actor.cancel(row, body?.venue_auth));
    if (done.kind !== "ok") throw refusalProblem(done);
    return toOrderModel(done.order);
  }

  /**
   * A person's approval of an order pending approval (docs/api.md#approval-above-a-threshold): an
   * organization key not scoped to an agent, so an agent cannot approve its own orders. Payload mode
   * answers the unsigned order to sign; delegated mode places it.
   */
  async approve(caller: Caller, id: string, body: DecisionBody | null | undefined) {
    const row = await this.decidable(caller, id);
    const actor = await this.deps.agents.actorFor(caller, row.agentId);
    const done = await busyAware(() => actor.approve({ order: row, by: deciderOf(caller), reason: body?.reason ?? null }));
    if (done.kind !== "ok") throw refusalProblem(done);
    const o = done.order;
    const base = { order_id: o.id, agent_id: o.agentId, mode: o.mode, status: o.status, order_hash: o.orderHash };
    if (o.status === "awaiting_signature" && o.typedData) {
      return {
        ...base,
        unsigned_order: {
          domain: o.typedData.domain,
          types: orderTypes(),
          primaryType: "Order" as const,
          message: o.typedData.message,
        },
        order_type: o.orderType,
        expiration: o.expiration,
        signature_deadline: o.signatureDeadline?.toISOString() ?? null,
        order: toOrderModel(o),
      };
    }
    return { ...base, venue_order_id: o.venueOrderId, order: toOrderModel(o) };
  }

  /** A person's rejection of an order pending approval: `rejected`, its reservation released. */
  async reject(caller: Caller, id: string, body: DecisionBody | null | undefined) {
    const row = await this.decidable(caller, id);
    const actor = await this.deps.agents.actorFor(caller, row.agentId);
    const done = await busyAware(() => actor.reject({ order: row, by: deciderOf(caller), reason: body?.reason ?? null }));
    if (done.kind !== "ok") throw refusalProblem(done);
    return toOrderModel(done.order);
  }

  /** An order a person of its organization may decide on: 404 for others' orders, 403 for any agent-scoped caller. */
  private async decidable(caller: Caller, id: string): Promise<OrderRow> {
    const row = await this.visible(caller, id);
    if (caller.agentId) throw new ForbiddenError("approving or rejecting an order needs an organization key that is not scoped to an agent");
    return row;
  }

  /**
   * Expires unsigned orders past their signature deadline, and orders pending approval whose
   * approval deadline has come, through their actors, releasing their reservations.
   *
   * A pass drains what is due, page after page (`page` rows of each kind), until a page comes
   * back short, a page holds nothing not tried already this pass, or `budgetMs` has gone by; each
   * agent's due orders of a page are one message to its actor and one statement (expireMany), and
   * EXPIRY_AGENTS agents are served at once. Before, a pass took one page of 500 and expired it order
   * by order, one transaction each: under a sustained stream of intents nobody signed (2,000/s in the
   * bench, signature deadline 30 s) about 45 expiries/s kept up, and orders stayed
   * `awaiting_signature`, holding their reservations and the actors' memory, long past their deadline
   * (docs/decisions.md, "The expiry sweep keeps up").
   */
  async expireDue(now = new Date(), o: { budgetMs?: number; page?: number } = {}): Promise<number> {
    const { budgetMs = EXPIRY_BUDGET_MS, page = EXPIRY_PAGE } = o;
    const started = performance.now();
    const limit = pLimit(EXPIRY_AGENTS);
    /** Agents another live instance owns: its own sweep expires their orders. */
    const elsewhere = new Set<string>();
    const tried = new Set<string>();
    let n = 0;
    for (;;) {
      const [unsigned, unapproved] = await Promise.all([
        this.deps.repo.dueForExpiry(now, page, elsewhere),
        this.deps.repo.dueForApprovalExpiry(now, page, elsewhere),
      ]);
      const due = [
        ...unsigned.map((o) => ({ ...o, phase: "awaiting_signature" as const })),
        ...unapproved.map((o) => ({ ...o, phase: "pending_approval" as const })),
      ].filter((o) => !tried.has(o.id));
      if (due.length === 0) break;
      const byAgent = new Map<string, typeof due>();
      for (const o of due) {
        tried.add(o.id);
        const list = byAgent.get(o.agentId);
        if (list) list.push(o);
        else byAgent.set(o.agentId, [o]);
      }
      await Promise.all(
        [...byAgent].map(([agentId, list]) =>
          limit(async () => {
            // Through the agent's actor (activating it if need be), so a snapshot being loaded cannot
            // keep a reservation the database has released; a submission in progress wins.
            // Only agents this instance owns or can take without asking (their owner died): another live
            // instance expires its own agents' orders.
            const actor = await this.deps.agents.registry.getIfFree(agentId);
            if (!actor) {
              elsewhere.add(agentId);
              return;
            }
            for (const phase of ["awaiting_signature", "pending_approval"] as const) {
              const ids = list.filter((o) => o.phase === phase).map((o) => o.id);
              if (ids.length === 0) continue;
              const moved = await actor.expireMany(ids, phase); // (not `n += await …`: it would add to a stale n)
              n += moved;
            }
          }),
        ),
      );
      if (unsigned.length < page && unapproved.length < page) break;
      if (performance.now() - started >= budgetMs) break;
    }
    return n;
  }

  /**
   * Settles `submitting` and `unknown` orders against the venue, each through its agent's actor, and
   * `open` ones whose client cancel was sent to the venue and not settled (cancelled or filled there,
   * or still live: the marker is cleared). Orders whose venue call (or client cancel) is still in
   * flight in this process are left alone.
   */
  async reconcile(): Promise<{ settled: number; pending: number }> {
    const { repo, agents, logger } = this.deps;
    const rows = await repo.unsettled();
    let settled = 0;
    let pending = 0;
    for (const row of rows) {
      // Only agents this instance owns or can take without asking: another live instance's in-flight
      // orders are its own to settle.
      const actor = await agents.registry.getIfFree(row.agentId);
      if (!actor) continue;
      const result = await actor.reconcile(row);
      if (result === "settled") settled++;
      else if (result === "pending") pending++;
      else if (result === "venue_down") {
        // The venue is not answering: the rest of this pass would only wait for time-outs too.
        pending += rows.length - settled - pending;
        logger.warn("reconciliation: venue unreachable, pass ended", { order_id: row.id });
        break;
      }
    }
    return { settled, pending };
  }
}

/** Who decided, as recorded in the order's history: the API key's id. */
function deciderOf(caller: Caller): string {
  return caller.kind === "api_key" ? caller.keyId : `x402:${caller.payer}`;
}
