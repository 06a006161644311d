/**
 * The x402 flow (issue 13, docs/x402.md) behind the routes an agent calls:
 *
 * 1. A request to a payable route without X-API-Key and without a payment → 402 with PAYMENT-REQUIRED.
 * 2. With PAYMENT-SIGNATURE (version 2) or X-PAYMENT (version 1): decoded and validated with
 *    @x402/core, matched against our one payment option, its nonce checked against every payment
 *    ever recorded, and verified by the facilitator. Then the wallet's rate limit applies, and the
 *    nonce is reserved durably (a unique row) before the handler runs. A used nonce is refused (402),
 *    except, with that very authorization, on a replay of a stored answer of its payer (same
 *    Idempotency-Key and request): replayCaller. The payer's agent is found
 *    or created (payload mode, the service's default limits) and becomes the request's caller.
 * 3. After the handler (finish): an answer below 500 is settled and carries PAYMENT-RESPONSE. When
 *    settlement fails, what the request created is undone (an unsigned order and its decision are
 *    deleted; an order it forwarded is cancelled; an agent it created is deleted) and the answer is
 *    402 with the reason. A 5xx is not settled: the payment is marked failed and its nonce stays used.
 *    Nor is an answer the Idempotency-Key layer gave without running the request (the payer's retry
 *    under the same key, with a new payment): notCharged.
 */
import { encodePaymentRequiredHeader, encodePaymentResponseHeader, decodePaymentSignatureHeader } from "@x402/core/http";
import { parsePaymentPayload } from "@x402/core/schemas";
import type { PaymentPayload, PaymentPayloadV1, PaymentRequired, SettleResponse } from "@x402/core/types";
import { Value } from "@sinclair/typebox/value";
import { getAddress, isAddressEqual } from "viem";
import { InvalidRequestError, RateLimitedError } from "../../errors/errors.ts";
import type { Caller } from "../../http/caller.ts";
import { requestMeta } from "../../http/request-meta.ts";
import { newId } from "../../domain/ids.ts";
import { unitsToNumber } from "../../domain/units.ts";
import type { Logger } from "../../observability/logger.ts";
import type { AgentService } from "../agents/service.ts";
import type { OrderService } from "../orders/service.ts";
import { type AnyPaymentPayload, type AnyPaymentRequirements, FacilitatorUnavailableError, type PaymentFacilitator } from "./facilitator.ts";
import { REASONS } from "./local-facilitator.ts";
import { type Eip3009Payload, Eip3009PayloadSchema, type PaymentModel } from "./model.ts";
import { FacilitatorUnavailableProblem, PaymentProblem } from "./payment-errors.ts";
import type { PaymentRow, PaymentStore } from "./payment-store.ts";
import { requirementsV1, requirementsV2, type X402Terms } from "./requirements.ts";

/** A payment header longer than this is refused unread (a version 2 payment is about 1.3 kB). */
export const MAX_PAYMENT_HEADER_CHARS = 8192;

export const NONCE_USED = "invalid_exact_evm_nonce_already_used";
export const ASSET_MISMATCH = "invalid_exact_evm_asset_mismatch";
export const VERSION_MISMATCH = "invalid_x402_version";

/** The routes an x402 payer may call (its own agent's): everything else keeps API keys only. */
const PAYABLE: [RegExp, RegExp][] = [
  [/^POST$/, /^\/v1\/orders\/(intent|submit-signed)$/],
  [/^GET$/, /^\/v1\/orders$/],
  [/^(GET|DELETE)$/, /^\/v1\/orders\/[^/]+$/],
  [/^GET$/, /^\/v1\/agents$/],
  [/^GET$/, /^\/v1\/agents\/[^/]+$/],
  [/^PATCH$/, /^\/v1\/agents\/[^/]+\/limits$/],
  [/^POST$/, /^\/v1\/agents\/[^/]+\/(breaker|resume|kill)$/],
  [/^(PUT|POST|DELETE)$/, /^\/v1\/agents\/[^/]+\/heartbeat$/],
];

/** What the auth plugin asks when a request has no X-API-Key. */
export interface PaymentHook {
  /** The paying caller; null when x402 does not cover the route (or is off); throws 402/400/429/503. */
  callerFor(request: Request): Promise<Caller | null>;
}

interface Session {
  paymentId: string;
  version: 1 | 2;
  payload: AnyPaymentPayload;
  requirements: AnyPaymentRequirements;
  payer: `0x${string}`;
  caller: { kind: "x402"; orgId: string; payer: string; agentId: string };
  createdAgent: boolean;
  method: string;
  path: string;
  done: boolean;
}

export type FinishOutcome = { headers: Record<string, string> } | { response: Response };

export class PaymentService implements PaymentHook {
  private readonly sessions = new WeakMap<Request, Session>();

  constructor(
    private readonly deps: {
      enabled: boolean;
      terms: X402Terms | null;
      store: PaymentStore;
      facilitator: PaymentFacilitator | null;
      rateLimiter: { take(id: string): number };
      agents: AgentService;
      orders: OrderService;
      defaultLimits: Record<string, unknown>;
      logger: Logger;
      /** Whether a request is a replay of a completed one under its Idempotency-Key (src/http/idempotency.ts). */
      replays?: { hasStoredAnswer(request: Request, caller: Caller): Promise<boolean> };
    },
  ) {}

  get enabled(): boolean {
    return this.deps.enabled && this.deps.terms !== null && this.deps.facilitator !== null;
  }

  isPayable(method: string, path: string): boolean {
    return PAYABLE.some(([m, p]) => m.test(method) && p.test(path));
  }

  /** The x402 version 2 answer to a request (`error` says why it is asked for again). */
  paymentRequired(request: Request, error?: string): PaymentRequired {
    return { x402Version: 2, error, resource: { url: request.url, description: "one request to the agent brokerage API", mimeType: "application/json" }, accepts: [requirementsV2(this.deps.terms!)] };
  }

  private refuse(request: Request, code: "payment_required" | "payment_refused", reason: string, detail: string): PaymentProblem {
    const required = this.paymentRequired(request, reason);
    const problem = new PaymentProblem(code, reason, detail, { "payment-required": encodePaymentRequiredHeader(required) });
    // Version 1 clients read the requirements from the body.
    Object.assign(problem.extra, { x402Version: 1, error: reason, accepts: [requirementsV1(this.deps.terms!, request.url)] });
    return problem;
  }

  async callerFor(request: Request): Promise<Caller | null> {
    if (!this.enabled) return null;
    const url = new URL(request.url);
    if (!this.isPayable(request.method, url.pathname)) return null;
    const known = this.sessions.get(request);
    if (known) return known.caller;
    const terms = this.deps.terms!;

    const v2Header = request.headers.get("payment-signature");
    const header = v2Header ?? request.headers.get("x-payment");
    const headerVersion: 1 | 2 = v2Header !== null ? 2 : 1;
    const headerName = headerVersion === 2 ? "payment-signature" : "x-payment";
    if (header === null || header === "") {
      throw this.refuse(request, "payment_required", "payment_required", `pay ${unitsToNumber(terms.amountUnits)} USDC on ${terms.network} with x402: send PAYMENT-SIGNATURE, or an X-API-Key`);
    }
    const malformed = (message: string) => new InvalidRequestError(`the ${headerName} header is not a valid x402 payment: ${message}`, [{ path: `/headers/${headerName}`, message }]);
    if (header.length > MAX_PAYMENT_HEADER_CHARS) throw malformed(`longer than ${MAX_PAYMENT_HEADER_CHARS} characters`);
    let decoded: unknown;
    try {
      decoded = decodePaymentSignatureHeader(header);
    } catch {
      throw malformed("not base64-encoded JSON");
    }
    const version = (decoded as { x402Version?: unknown } | null)?.x402Version;
    if (version !== headerVersion) {
      throw this.refuse(request, "payment_refused", VERSION_MISMATCH, `${headerName} carries x402 version ${headerVersion}, this payment says ${JSON.stringify(version ?? null).slice(0, 20)}`);
    }
    const parsed = parsePaymentPayload(decoded);
    if (!parsed.success) throw malformed("does not match the x402 payment payload schema");
    const payload = parsed.data as AnyPaymentPayload;
    const refused = (reason: string, detail: string) => this.refuse(request, "payment_refused", reason, detail);

    // Our one option: exact, USDC on the configured network, the price, to X402_PAY_TO.
    let requirements: AnyPaymentRequirements;
    if (headerVersion === 2) {
      const accepted = (payload as PaymentPayload).accepted;
      if (accepted.scheme !== "exact") throw refused(REASONS.scheme, `scheme ${accepted.scheme} is not accepted; pay with exact`);
      if (accepted.network !== terms.network) throw refused(REASONS.network, `the payment is for ${accepted.network}; this service takes ${terms.network}`);
      if (!sameAddress(accepted.asset, terms.asset)) throw refused(ASSET_MISMATCH, `the payment is in ${accepted.asset}; this service takes USDC ${terms.asset}`);
      if (!sameAddress(accepted.payTo, terms.payTo)) throw refused(REASONS.recipient, "the payment is addressed to another payee");
      if (accepted.amount !== terms.amountUnits.toString()) throw refused(REASONS.value, `the payment is for ${accepted.amount} units; the price is ${terms.amountUnits}`);
      requirements = requirementsV2(terms);
    } else {
      const p = payload as PaymentPayloadV1;
      if (p.scheme !== "exact") throw refused(REASONS.scheme, `scheme ${p.scheme} is not accepted; pay with exact`);
      if (p.network !== terms.networkV1) throw refused(REASONS.network, `the payment is for ${p.network}; this service takes ${terms.networkV1}`);
      requirements = requirementsV1(terms, request.url);
    }
    const inner = payload.payload as Record<string, unknown>;
    if ("permit2Authorization" in inner) throw refused("unsupported_payload_type", "only EIP-3009 transferWithAuthorization payments are accepted");
    if (!Value.Check(Eip3009PayloadSchema, inner)) throw malformed("the payload is not an EIP-3009 authorization with a signature");
    const auth = (inner as Eip3009Payload).authorization;
    const payer = getAddress(auth.from);
    const nonceKey = { network: terms.network, asset: terms.asset.toLowerCase(), payer: payer.toLowerCase(), nonce: auth.nonce.toLowerCase() };
    const recorded = await this.deps.store.paymentWithNonce(nonceKey);
    if (recorded) {
      const used = refused(NONCE_USED, "this authorization's nonce was already used");
      // The payer is proven only by the very authorization that was verified when it was recorded:
      // another signature over the payer's nonce proves nothing, and replays nothing.
      const replaying = sameAuthorization(recorded, inner as Eip3009Payload) ? await this.replayCaller(request, nonceKey.payer, used) : null;
      if (replaying) return replaying;
      throw used;
    }

    let verdict;
    try {
      verdict = await this.deps.facilitator!.verify(payload, requirements);
    } catch (error) {
      if (error instanceof FacilitatorUnavailableError) {
        this.deps.logger.warn("x402 facilitator unavailable for verify", { error: error.message });
        throw new FacilitatorUnavailableProblem();
      }
      throw error;
    }
    if (!verdict.isValid) throw refused(verdict.invalidReason ?? "invalid_payment", verdict.invalidMessage ?? `the facilitator refused the payment (${verdict.invalidReason ?? "no reason given"})`);
    if (verdict.payer && !sameAddress(verdict.payer, payer)) throw refused(REASONS.signature, "the facilitator names another payer");

    const wait = this.deps.rateLimiter.take(`x402:${payer.toLowerCase()}`);
    if (wait > 0) throw new RateLimitedError(wait);

    const now = new Date();
    const paymentId = newId("pay");
    const reserved = await this.deps.store.reserve({
      id: paymentId,
      payer: nonceKey.payer,
      x402Version: headerVersion,
      network: terms.network,
      asset: nonceKey.asset,
      payTo: terms.payTo.toLowerCase(),
      amountUnits: BigInt(auth.value),
      nonce: nonceKey.nonce,
      validAfter: auth.validAfter,
      validBefore: auth.validBefore,
      payload: payload as unknown as Record<string, unknown>,
      status: "verified",
      method: request.method,
      path: url.pathname,
      createdAt: now,
      updatedAt: now,
    });
    if (!reserved) throw refused(NONCE_USED, "this authorization's nonce was already used");

    let wallet;
    try {
      wallet = await this.deps.store.walletAgent(nonceKey.payer, this.deps.defaultLimits, paymentId);
    } catch (error) {
      await this.deps.store.finish(paymentId, { status: "failed", failureReason: "the payer's agent could not be set up" }).catch(() => undefined);
      throw error;
    }
    const caller = { kind: "x402" as const, orgId: wallet.orgId, payer: nonceKey.payer, agentId: wallet.agentId };
    this.sessions.set(request, {
      paymentId,
      version: headerVersion,
      payload,
      requirements,
      payer,
      caller,
      createdAgent: wallet.created,
      method: request.method,
      path: url.pathname,
      done: false,
    });
    return caller;
  }

  /**
   * A used payment is taken once more only to replay a stored answer of its payer (same
   * Idempotency-Key and request; records belong to the payer, src/http/idempotency.ts): no session,
   * so nothing is verified, settled or charged again. The wallet's rate limit applies, as to an API
   * key's replay. The idempotency plugin then answers from the record, or refuses with `used` when
   * there is none left to replay (RequestMeta.replayOnly), so the request never runs.
   */
  private async replayCaller(request: Request, payer: string, used: PaymentProblem): Promise<Caller | null> {
    const meta = requestMeta(request);
    if (!meta || !this.deps.replays) return null;
    const wallet = await this.deps.store.walletOf(payer);
    if (!wallet) return null;
    const caller: Caller = { kind: "x402", orgId: wallet.orgId, payer, agentId: wallet.agentId };
    if (!(await this.deps.replays.hasStoredAnswer(request, caller))) return null;
    const wait = this.deps.rateLimiter.take(`x402:${payer}`);
    if (wait > 0) throw new RateLimitedError(wait);
    meta.replayOnly = used;
    return caller;
  }

  hasSession(request: Request): boolean {
    const s = this.sessions.get(request);
    return !!s && !s.done;
  }

  /**
   * After the handler answered `status` with `body`: settles below 500 and says which header to add,
   * or, when settlement fails, undoes the request's effects and answers the 402 to send instead.
   */
  async finish(request: Request, status: number, body: unknown): Promise<FinishOutcome | null> {
    const s = this.sessions.get(request);
    if (!s || s.done) return null;
    s.done = true;
    const { store, logger } = this.deps;
    if (await this.notCharged(request, s, status)) return null;
    if (status >= 500) {
      await store.finish(s.paymentId, { status: "failed", failureReason: `not settled: the request answered ${status}`, responseStatus: status });
      return null;
    }
    let settled: SettleResponse;
    try {
      settled = await this.deps.facilitator!.settle(s.payload, s.requirements);
    } catch (error) {
      logger.warn("x402 facilitator unavailable for settle", { payment_id: s.paymentId, error: error instanceof Error ? error.message : String(error) });
      settled = { success: false, errorReason: "facilitator_unavailable", errorMessage: "the payment facilitator could not be reached", transaction: "", network: s.requirements.network };
    }
    const responseHeader = s.version === 2 ? "payment-response" : "x-payment-response";
    if (settled.success) {
      // Settled is settled: a failure to record it is logged, the answer still goes out.
      await store.finish(s.paymentId, { status: "settled", transaction: settled.transaction || null, responseStatus: status }).catch((error) => {
        logger.error("x402: a settled payment could not be recorded", { payment_id: s.paymentId, error: error instanceof Error ? error.message : String(error) });
      });
      return { headers: { [responseHeader]: encodePaymentResponseHeader({ ...settled, payer: settled.payer ?? s.payer }) } };
    }
    const reason = (settled.errorReason ?? "settlement_failed").slice(0, 200);
    logger.warn("x402 settlement failed; undoing the request", { payment_id: s.paymentId, reason, status });
    await this.undo(s, status, body);
    // The handler's status is kept: what the request would have been answered, had it been paid.
    await store.finish(s.paymentId, { status: "failed", failureReason: `settlement failed: ${reason}`, responseStatus: status });
    const problem = this.refuse(request, "payment_refused", reason, `the payment could not be settled (${reason}); the request was not carried out and nothing it created remains`);
    const failed = new PaymentProblem("payment_failed", reason, problem.message, {
      ...problem.headers,
      [responseHeader]: encodePaymentResponseHeader({ ...settled, errorReason: reason, payer: settled.payer ?? s.payer }),
    });
    Object.assign(failed.extra, { payment_id: s.paymentId });
    const headers = new Headers({ "content-type": "application/problem+json", ...failed.headers });
    return { response: new Response(JSON.stringify(failed.toProblem()), { status: 402, headers }) };
  }

  /** A paid request whose answer never reached finish (it should not happen): its payment is failed, not settled. */
  async abandon(request: Request): Promise<void> {
    const s = this.sessions.get(request);
    if (!s || s.done) return;
    s.done = true;
    if (await this.notCharged(request, s, null)) return;
    await this.deps.store.finish(s.paymentId, { status: "failed", failureReason: "not settled: the request ended without an answer" }).catch(() => undefined);
  }

  /**
   * A payment that came with a request the Idempotency-Key layer answered without running it (the
   * stored answer of the payer's earlier request, or a 409) is not charged: not settled, marked
   * failed with the reason, its nonce used up like any other recorded one, and no PAYMENT-RESPONSE.
   * An agent its reservation created (none, in practice: a payer with records has one) is removed.
   */
  private async notCharged(request: Request, s: Session, status: number | null): Promise<boolean> {
    const answered = requestMeta(request)?.answeredFromRecord;
    if (!answered) return false;
    const { store, logger } = this.deps;
    const why = answered === "replay" ? "its stored answer was replayed" : answered === "conflict" ? "409, another request under the key" : "409, the first request is still running";
    await store
      .finish(s.paymentId, { status: "failed", failureReason: `not charged: answered from the Idempotency-Key record (${why})`, responseStatus: status })
      .catch((error) => logger.error("x402: an uncharged payment could not be recorded", { payment_id: s.paymentId, error: error instanceof Error ? error.message : String(error) }));
    if (s.createdAgent) await this.removeCreatedAgent(s, "x402: removing the agent of an uncharged request failed");
    return true;
  }

  /**
   * Removes the agent a request of the session created, through its actor (AgentService.retire: after
   * the order writes under way, and no order after); a failure is logged with `failed`, never thrown.
   */
  private async removeCreatedAgent(s: Session, failed: string): Promise<void> {
    const { store, agents, logger } = this.deps;
    const agentId = s.caller.agentId;
    try {
      await agents.retire(agentId, (fence) => store.removeWalletAgent(s.paymentId, { payer: s.caller.payer, orgId: s.caller.orgId, agentId }, fence));
    } catch (error) {
      logger.error(failed, { payment_id: s.paymentId, error: error instanceof Error ? error.message : String(error) });
    }
  }

  /** Undoes what an unpaid request created: see the module comment. Failures are logged, never thrown. */
  private async undo(s: Session, status: number, body: unknown): Promise<void> {
    const { store, agents, orders, logger } = this.deps;
    const b = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
    const agentId = s.caller.agentId;
    try {
      if (s.method === "POST" && s.path === "/v1/orders/intent" && status === 201 && typeof b.order_id === "string") {
        const actor = await agents.actorFor(s.caller, agentId);
        if (await actor.transitionIf(b.order_id, ["awaiting_signature"], { status: "cancelled" })) await store.removeOrder(agentId, b.order_id, agents.fenceOf(actor));
        else await orders.cancel(s.caller, b.order_id);
      } else if (s.method === "POST" && s.path === "/v1/orders/intent" && typeof b.decision_id === "string") {
        await store.removeDecision(agentId, b.decision_id, agents.fenceFor(agentId));
      } else if (s.method === "POST" && s.path === "/v1/orders/submit-signed" && status === 200 && typeof b.order_id === "string") {
        await orders.cancel(s.caller, b.order_id);
      }
    } catch (error) {
      logger.error("x402: undoing an unpaid request failed", { payment_id: s.paymentId, error: error instanceof Error ? error.message : String(error) });
    }
    if (s.createdAgent) await this.removeCreatedAgent(s, "x402: removing the agent of an unpaid first request failed");
  }

  async list(q: { agent_id?: string; payer?: string; status?: "verified" | "settled" | "failed"; limit?: number; cursor?: string }) {
    const page = await this.deps.store.list({ agentId: q.agent_id, payer: q.payer, status: q.status, limit: q.limit ?? 50, cursor: q.cursor });
    return { data: page.data.map(toPaymentModel), next_cursor: page.next_cursor };
  }
}

export function toPaymentModel(r: PaymentRow): PaymentModel {
  return {
    id: r.id,
    agent_id: r.agentId,
    payer: r.payer,
    amount_usdc: unitsToNumber(r.amountUnits),
    amount_units: r.amountUnits.toString(),
    asset: r.asset,
    network: r.network,
    pay_to: r.payTo,
    nonce: r.nonce,
    x402_version: r.x402Version,
    status: r.status,
    failure_reason: r.failureReason,
    transaction: r.transaction,
    request: { method: r.method, path: r.path, status: r.responseStatus },
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

/** Whether a presented EIP-3009 authorization is exactly the one recorded (`payments.payload`, a PaymentPayload). */
function sameAuthorization(recorded: Record<string, unknown>, presented: Eip3009Payload): boolean {
  const r = recorded.payload as Partial<Eip3009Payload> | undefined;
  const a = r?.authorization;
  const p = presented.authorization;
  if (!a || typeof r?.signature !== "string") return false;
  return (
    r.signature.toLowerCase() === presented.signature.toLowerCase() &&
    sameAddress(a.from, p.from) &&
    sameAddress(a.to, p.to) &&
    a.value === p.value &&
    a.validAfter === p.validAfter &&
    a.validBefore === p.validBefore &&
    a.nonce.toLowerCase() === p.nonce.toLowerCase()
  );
}

function sameAddress(a: string, b: string): boolean {
  try {
    return isAddressEqual(getAddress(a), getAddress(b));
  } catch {
    return false;
  }
}
