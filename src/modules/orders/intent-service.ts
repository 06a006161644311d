/**
 * Order intents: the eight risk checks against the agent's actor, the
 * reservation of the approved notional, the durable write, and then either the
 * unsigned EIP-712 order (payload mode) or the placement at the venue
 * (delegated mode).
 */
import type { TrackedOrder } from "../../../actors/ports.ts";
import type { Config } from "../../config.ts";
import { orderHash } from "../../eip712/order-hash.ts";
import { buildUnsignedOrder, randomSalt, ZERO_BYTES32 } from "../../eip712/order-typed-data.ts";
import { ForbiddenError, InvalidRequestError, InvalidStateError, RiskRejectedError } from "../../errors/errors.ts";
import { VenueUnavailableProblem } from "../../errors/venue-unavailable.ts";
import type { Caller } from "../../http/caller.ts";
import { newId } from "../../ids.ts";
import { DecimalError, numberToPlainString, toUnits } from "../../money/units.ts";
import type { ServiceMetrics } from "../../observability/metrics.ts";
import { orderAmounts, type OrderAmounts } from "../../orders/amounts.ts";
import { evaluateRisk } from "../../risk/evaluate-risk.ts";
import type { RiskResult } from "../../risk/types.ts";
import type { Market, OrderBook, OrderMessage, Venue, VenueCredentials } from "../../venues/venue.ts";
import type { AgentService } from "../agents/service.ts";
import type { IntentBody } from "./model.ts";
import type { OrderRepository } from "./order-repository.ts";
import type { VenueSubmission } from "./venue-submission.ts";

export interface CredentialSource {
  /** Runs `fn` with the agent's opened credentials; null (without running it) when it has none. */
  withAgentCredentials<T>(agentId: string, fn: (creds: VenueCredentials) => Promise<T>): Promise<T | null>;
  /** Runs `fn` exactly once, with the agent's credentials or, when it has none, without. */
  withAgentCredentialsOrNone<T>(agentId: string, fn: (creds: VenueCredentials | undefined) => Promise<T>): Promise<T>;
}

export type IntentAnswer = { status: 200 | 201; body: Record<string, unknown> };

export class IntentService {
  constructor(
    private readonly deps: {
      config: Pick<Config, "chainId" | "builderCode" | "signatureTtlS" | "venueTimeoutMs">;
      agents: AgentService;
      venue: Venue;
      repo: OrderRepository;
      submission: VenueSubmission;
      credentials: CredentialSource;
      metrics: ServiceMetrics;
    },
  ) {}

  /** `reservedId`: the order's id body chosen with the request's Idempotency-Key (see idempotency-recovery.ts). */
  async submit(caller: Caller, body: IntentBody, dryRun: boolean, reservedId?: string): Promise<IntentAnswer> {
    const { agents, venue, repo, metrics, config } = this.deps;
    const agentId = resolveAgentId(caller, body.agent_id);
    const actor = await agents.actorFor(caller, agentId);
    const sizeUnits = parseSize(body.size_usdc);
    const priceText = numberToPlainString(body.price);
    const orderType = body.order_type ?? "GTC";
    const expiration = parseExpiration(orderType, body.expires_at);

    let market: Market | null;
    let book: OrderBook | null;
    try {
      [market, book] = await Promise.all([venue.getMarketByToken(body.market_id), venue.getBook(body.market_id)]);
    } catch {
      throw new VenueUnavailableProblem("the venue could not be reached for the market and its book; nothing was created, try again");
    }

    let amounts: OrderAmounts | null = null;
    try {
      amounts = orderAmounts({ side: body.side, sizeUnits, price: priceText });
    } catch {
      amounts = null; // price or size the venue cannot express: the checks below reject it
    }
    const intent = { market_id: body.market_id, side: body.side, size_usdc: body.size_usdc, price: body.price, probability: body.probability };
    const evaluate = (state: Parameters<typeof evaluateRisk>[0]["state"]): RiskResult => {
      const verdict = evaluateRisk({ intent, limits: actor.currentLimits(), state, market, book, now_ms: Date.now() });
      if (verdict.approved && !amounts) {
        // Defensive: an order the venue cannot express is never approved.
        return {
          approved: false,
          checks: verdict.checks.map((c) => (c.check === "order_size" ? { ...c, passed: false } : c)),
          failures: [{ check: "order_size", code: "order_too_small", message: "the order rounds to no shares at this price", limit: null, actual: 0 }],
        };
      }
      return verdict;
    };
    const conditionId = market?.condition_id ?? "";

    if (dryRun) {
      const verdict = await actor.evaluateOnly(conditionId, evaluate);
      this.count(verdict);
      return { status: 200, body: { risk: riskView(verdict) } };
    }

    const view = actor.view();
    const mode = view.profile.mode;
    if (mode === "delegated" && !view.credentials?.scopes.includes("order:place")) {
      throw new InvalidStateError("the agent's venue credentials lack the order:place scope; submit credentials with it, or delete them to use payload mode");
    }
    const orderId = reservedId ? `ord_${reservedId}` : newId("ord");
    const decisionId = newId("dec");
    const signatureDeadline = mode === "payload" ? new Date(Date.now() + config.signatureTtlS * 1000) : null;
    let built: { message: OrderMessage; hash: `0x${string}`; typedData: ReturnType<typeof buildUnsignedOrder> } | null = null;
    const negRisk = market?.neg_risk ?? false;

    const result = await actor.reserve({
      order: {
        id: orderId,
        mode,
        marketId: body.market_id,
        conditionId,
        side: body.side,
        notionalUnits: amounts?.notionalUnits ?? sizeUnits,
        status: mode === "payload" ? "awaiting_signature" : "submitting",
        venueOrderId: null,
        signatureDeadline,
      },
      evaluate,
      persist: (order: TrackedOrder, timestampMs: number) => {
        const a = amounts!;
        const message: OrderMessage = {
          salt: randomSalt(),
          maker: view.profile.walletAddress as `0x${string}`,
          signer: view.profile.signerAddress as `0x${string}`,
          tokenId: body.market_id,
          makerAmount: a.makerAmount.toString(),
          takerAmount: a.takerAmount.toString(),
          side: body.side === "buy" ? 0 : 1,
          signatureType: view.profile.signatureType,
          timestamp: String(timestampMs),
          metadata: ZERO_BYTES32,
          builder: config.builderCode,
        };
        const typedData = buildUnsignedOrder({ chainId: config.chainId, negRisk, message });
        const hash = orderHash({ chainId: config.chainId, negRisk, message });
        built = { message, hash, typedData };
        const at = new Date(timestampMs);
        return repo.insert(
          {
            id: order.id,
            orgId: caller.orgId,
            agentId,
            mode,
            marketId: body.market_id,
            conditionId,
            side: body.side,
            sizeUnits,
            price: priceText,
            notionalUnits: order.notionalUnits,
            orderType,
            expiration,
            status: order.status,
            orderHash: hash,
            // Stored without its `types`: they are always ORDER_TYPES (see the column in schema.ts).
            typedData: { domain: typedData.domain, primaryType: typedData.primaryType, message: typedData.message },
            signatureDeadline,
            clientOrderId: body.client_order_id ?? null,
            decisionId,
            tradingDay: order.tradingDay,
            history: [{ status: order.status, at: at.toISOString(), reason: "approved by the risk engine" }],
            createdAt: at,
            updatedAt: at,
          },
          { id: decisionId, orgId: caller.orgId, agentId, approved: true, intent: { ...body, agent_id: agentId }, failures: [], checks: [], orderId, createdAt: at },
        );
      },
    });
    this.count(result.verdict);

    if (!result.approved) {
      const verdict = result.verdict;
      await repo.insertDecision({
        id: decisionId,
        orgId: caller.orgId,
        agentId,
        approved: false,
        intent: { ...body, agent_id: agentId },
        failures: verdict.failures,
        checks: verdict.checks,
        orderId: null,
        createdAt: new Date(),
      });
      throw new RiskRejectedError({ decision_id: decisionId, failures: verdict.failures, checks: verdict.checks });
    }

    await result.written;
    const b = built!;
    const risk = riskView(result.verdict);
    if (mode === "payload") {
      return {
        status: 201,
        body: {
          order_id: orderId,
          agent_id: agentId,
          mode,
          status: "awaiting_signature",
          unsigned_order: b.typedData,
          order_hash: b.hash,
          order_type: orderType,
          expiration,
          signature_deadline: signatureDeadline!.toISOString(),
          decision_id: decisionId,
          risk,
        },
      };
    }

    const finish = actor.finishPlacement(orderId)!;
    const row = await this.deps.submission.send(actor, { id: orderId, notionalUnits: result.order.notionalUnits }, finish, () =>
      this.deps.credentials.withAgentCredentials(agentId, (credentials) =>
        venue.placeDelegatedOrder(
          { credentials, client_order_id: orderId, order: b.message, order_type: orderType, expiration },
          { signal: AbortSignal.timeout(config.venueTimeoutMs) },
        ),
      ),
      (venueOrderId) =>
        this.deps.credentials.withAgentCredentialsOrNone(agentId, (credentials) =>
          venue.cancelOrder({ venue_order_id: venueOrderId, credentials }, { signal: AbortSignal.timeout(config.venueTimeoutMs) }),
        ),
    );
    return {
      status: 201,
      body: { order_id: orderId, agent_id: agentId, mode, status: row.status, venue_order_id: row.venueOrderId, order_hash: b.hash, decision_id: decisionId, risk },
    };
  }

  private count(verdict: RiskResult): void {
    const m = this.deps.metrics;
    m.riskDecisionsTotal.inc({ outcome: verdict.approved ? "approved" : "rejected" });
    for (const f of verdict.failures) m.riskFailuresTotal.inc({ check: f.check, code: f.code });
  }
}

export function riskView(v: RiskResult) {
  return v.approved ? { approved: true, checks: v.checks } : { approved: false, checks: v.checks, failures: v.failures };
}

function resolveAgentId(caller: Caller, given: string | undefined): string {
  if (caller.agentId) {
    if (given && given !== caller.agentId) throw new ForbiddenError("this API key is scoped to another agent");
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
function parseExpiration(orderType: string, expiresAt: string | undefined): string {
  if (orderType !== "GTD") {
    if (expiresAt) throw new InvalidRequestError("expires_at is only for GTD orders", [{ path: "/expires_at", message: "only with order_type GTD" }]);
    return "0";
  }
  if (!expiresAt) throw new InvalidRequestError("GTD orders need expires_at", [{ path: "/expires_at", message: "required for GTD" }]);
  const ms = Date.parse(expiresAt);
  if (Number.isNaN(ms) || ms <= Date.now() + 60_000) {
    throw new InvalidRequestError("expires_at must be at least a minute in the future", [{ path: "/expires_at", message: "must be in the future" }]);
  }
  return String(Math.floor(ms / 1000));
}
