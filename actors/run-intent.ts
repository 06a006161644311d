/** The intent message: the checks, the reservation, the order, its durable write and, in delegated mode, its placement. */
import { type OrderAmounts, orderAmounts } from "../src/domain/amounts.ts";
import { newId } from "../src/domain/ids.ts";
import type { Market, OrderBook } from "../src/domain/market.ts";
import { evaluateRisk } from "../src/risk/evaluate-risk.ts";
import type { Limits } from "../src/risk/limits.ts";
import type { RiskResult, RiskState } from "../src/risk/types.ts";
import { aboveThreshold } from "./above-threshold.ts";
import type { ActorCore } from "./actor-core.ts";
import { buildOrder, type BuiltOrder } from "./build-order.ts";
import type { IntentAnswer, IntentMessage } from "./messages.ts";
import { placeOrder } from "./place-order.ts";
import type { ActorLimits, StoredOrder, TrackedOrder } from "./ports.ts";
import { venueDeadline } from "../src/domain/venue-deadline.ts";

export async function runIntent<L extends ActorLimits, R extends StoredOrder>(actor: ActorCore<L, R>, msg: IntentMessage): Promise<IntentAnswer<R>> {
  const p = actor.requirePorts();
  let market: Market | null;
  let book: OrderBook | null;
  // A sell may hand over the wallet's on-chain shares when they are more than the fills say.
  const onChain =
    msg.side === "sell" && p.balances
      ? p.balances.heldShares(actor.profile.walletAddress, msg.marketId, { signal: venueDeadline(p.config.venueTimeoutMs) }).catch(() => null)
      : Promise.resolve(null);
  let chainHeld: bigint | null = null;
  try {
    [market, book, chainHeld] = await Promise.all([p.venue.getMarketByToken(msg.marketId), p.venue.getBook(msg.marketId), onChain]);
  } catch {
    return { kind: "venue_unavailable", detail: "the venue could not be reached for the market and its book; nothing was created, try again" };
  }
  let amounts: OrderAmounts | null = null;
  try {
    amounts = orderAmounts({ side: msg.side, sizeUnits: msg.sizeUnits, price: msg.priceText });
  } catch {
    amounts = null; // price or size the venue cannot express: the checks reject it
  }
  const intent = { market_id: msg.marketId, side: msg.side, size_usdc: msg.sizeUsdc, price: msg.price, probability: msg.probability };
  const evaluate = (state: RiskState): RiskResult => {
    if (state.position && chainHeld !== null && chainHeld > state.position.held_shares_units) state = { ...state, position: { ...state.position, held_shares_units: chainHeld } };
    const verdict = evaluateRisk({ intent, limits: actor.limits as unknown as Limits, state, market, book, now_ms: actor.clock.now() });
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
  // The duplicate guard's key: the same market, side, size and price (exact units and decimal text).
  const fingerprint = `${msg.marketId}|${msg.side}|${msg.sizeUnits}|${msg.priceText}`;
  if (msg.dryRun) {
    const verdict = await actor.evaluateOnly(conditionId, evaluate, fingerprint, msg.side === "sell" ? msg.marketId : undefined);
    p.observer.verdict(verdict);
    return { kind: "dry_run", verdict };
  }

  const profile = actor.profile;
  const mode = profile.mode;
  if (mode === "delegated" && !actor.credentials?.scopes.includes("order:place")) {
    return {
      kind: "invalid_state",
      detail: "the agent's venue credentials lack the order:place scope; submit credentials with it, or delete them to use payload mode",
    };
  }
  const now = actor.clock.now();
  const orderId = msg.reservedId ? `ord_${msg.reservedId}` : newId("ord", now);
  const decisionId = newId("dec", now);
  const signatureDeadline = mode === "payload" ? new Date(now + p.config.signatureTtlS * 1000) : null;
  const negRisk = market?.neg_risk ?? false;
  // The market's protocol version picks the exchange domain (docs/api.md#the-unsigned-order); none means v1.
  const version = market?.version === "v2" ? "v2" : "v1";
  const agentId = profile.id;
  let built: BuiltOrder | null = null;

  const result = await actor.reserve({
    order: {
      id: orderId,
      mode,
      marketId: msg.marketId,
      conditionId,
      side: msg.side,
      notionalUnits: amounts?.notionalUnits ?? msg.sizeUnits,
      status: mode === "payload" ? "awaiting_signature" : "submitting",
      venueOrderId: null,
      signatureDeadline,
      tokenId: msg.marketId,
      sharesUnits: amounts ? (msg.side === "buy" ? amounts.takerAmount : amounts.makerAmount) : undefined,
    },
    evaluate,
    fingerprint,
    hold: (limits) => aboveThreshold(msg.sizeUnits, limits.approval_threshold_usdc),
    persist: (order: TrackedOrder, timestampMs: number) => {
      const b = buildOrder({
        profile,
        chainId: p.config.chainId,
        builderCode: p.config.builderCode,
        negRisk,
        version,
        tokenId: msg.marketId,
        side: msg.side,
        amounts: amounts!,
        timestampMs,
      });
      built = b;
      const at = new Date(timestampMs);
      return p.orders.insert(
        {
          id: order.id,
          orgId: msg.orgId,
          agentId,
          mode,
          marketId: msg.marketId,
          conditionId,
          side: msg.side,
          sizeUnits: msg.sizeUnits,
          price: msg.priceText,
          notionalUnits: order.notionalUnits,
          orderType: msg.orderType,
          expiration: msg.expiration,
          status: order.status,
          orderHash: b.hash,
          // Stored without its `types`: they are always ORDER_TYPES (see the column in schema.ts).
          typedData: { domain: b.typedData.domain, primaryType: b.typedData.primaryType, message: b.typedData.message },
          signatureDeadline: order.signatureDeadline,
          approvalDeadline: order.approvalDeadline ?? null,
          clientOrderId: msg.clientOrderId,
          decisionId,
          tradingDay: order.tradingDay,
          history: [
            {
              status: order.status,
              at: at.toISOString(),
              reason: order.status === "pending_approval" ? "approved by the risk engine; above approval_threshold_usdc, waiting for a person" : "approved by the risk engine",
            },
          ],
          createdAt: at,
          updatedAt: at,
        },
        { id: decisionId, orgId: msg.orgId, agentId, approved: true, intent: msg.record, failures: [], checks: [], orderId, createdAt: at },
      );
    },
  });
  p.observer.verdict(result.verdict);

  if (!result.approved) {
    const verdict = result.verdict;
    await p.orders.insertDecision({
      id: decisionId,
      orgId: msg.orgId,
      agentId,
      approved: false,
      intent: msg.record,
      failures: verdict.failures,
      checks: verdict.checks,
      orderId: null,
      createdAt: new Date(actor.clock.now()),
    });
    return { kind: "rejected", decisionId, verdict };
  }

  // A placement's sealed credentials are read while its order is written: the venue call waits for
  // that write (the order is stored before it is sent), not for the read after it.
  const sealed = mode === "delegated" && result.order.status === "submitting" ? p.credentials.readSealed?.(agentId) : undefined;
  void sealed?.catch(() => undefined); // awaited by the placement; unread when the write fails
  await result.written;
  const b = built! as BuiltOrder;
  if (result.order.status === "pending_approval") {
    return { kind: "pending_approval", orderId, mode, decisionId, verdict: result.verdict, orderHash: b.hash, approvalDeadline: result.order.approvalDeadline! };
  }
  if (mode === "payload") {
    return {
      kind: "payload",
      orderId,
      decisionId,
      verdict: result.verdict,
      unsignedOrder: b.typedData,
      orderHash: b.hash,
      orderType: msg.orderType,
      expiration: msg.expiration,
      signatureDeadline: signatureDeadline!,
    };
  }
  const finish = actor.finishPlacement(orderId)!;
  const timeout = () => ({ signal: venueDeadline(p.config.venueTimeoutMs) });
  const placed = await placeOrder(actor, { id: orderId, notionalUnits: result.order.notionalUnits }, finish, () =>
    p.credentials.withAgentCredentials(
      agentId,
      (credentials) => p.venue.placeDelegatedOrder({ credentials, client_order_id: orderId, order: b.message, order_type: msg.orderType, expiration: msg.expiration }, timeout()),
      sealed,
    ),
  );
  return { kind: "delegated", orderId, decisionId, verdict: result.verdict, orderHash: b.hash, placed };
}
