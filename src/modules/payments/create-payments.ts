/** Builds the x402 payment service from the configuration: the terms, the facilitator and the store. */
import type { Config } from "../../config.ts";
import type { Db } from "../../db/database.ts";
import type { Caller } from "../../http/caller.ts";
import type { Logger } from "../../observability/logger.ts";
import { DEFAULT_LIMITS } from "../../risk/limits.ts";
import type { AgentService } from "../agents/service.ts";
import type { OrderService } from "../orders/service.ts";
import { HttpFacilitator, type PaymentFacilitator } from "./facilitator.ts";
import { LocalFacilitator } from "./local-facilitator.ts";
import { PaymentService } from "./payment-service.ts";
import { PaymentStore } from "./payment-store.ts";
import { termsFrom } from "./requirements.ts";

export function createPayments(deps: {
  config: Pick<Config, "x402" | "venueTimeoutMs">;
  db: Db;
  rateLimiter: { take(id: string): number };
  agents: AgentService;
  orders: OrderService;
  logger: Logger;
  /** The limits a paying wallet's new agent gets (default: the service defaults). */
  defaultLimits?: Record<string, unknown>;
  /** Whether a request replays a completed one (its used payment is then let through to the replay). */
  replays?: { hasStoredAnswer(request: Request, caller: Caller): Promise<boolean> };
  /** The facilitator to use instead of the configured one (tests). */
  facilitator?: PaymentFacilitator;
}): PaymentService {
  const { x402 } = deps.config;
  const terms = x402.enabled ? termsFrom(x402) : null;
  const facilitator = !x402.enabled
    ? null
    : (deps.facilitator ?? (x402.facilitatorUrl ? new HttpFacilitator(x402.facilitatorUrl, Math.max(deps.config.venueTimeoutMs, 10_000)) : new LocalFacilitator()));
  return new PaymentService({
    enabled: x402.enabled,
    terms,
    store: new PaymentStore(deps.db),
    facilitator,
    rateLimiter: deps.rateLimiter,
    agents: deps.agents,
    orders: deps.orders,
    defaultLimits: { ...(deps.defaultLimits ?? DEFAULT_LIMITS) },
    logger: deps.logger,
    replays: deps.replays,
  });
}
