/**
 * BrokerClient: typed methods for every public route of the brokerage REST API. The package's main
 * entry; it also re-exports the error classes and helpers a caller needs beside the client.
 */
import { streamEvents, type EventsOptions } from "./events.js";
import { signUnsignedOrder, type TypedDataSigner } from "./signing.js";
import { Transport, type RetryOptions } from "./transport.js";
import type {
  Positions,
  Agent,
  ApiKey,
  ApproveAnswer,
  BrokerEvent,
  CreateAgentRequest,
  CreateOrgAnswer,
  CredentialsRequest,
  DecisionRequest,
  DryRunAnswer,
  Exposure,
  HeartbeatRequest,
  IntentAnswer,
  IntentRequest,
  IssuedApiKey,
  KillAnswer,
  KillRequest,
  Limits,
  ListDecisionsQuery,
  ListMarketsQuery,
  ListOrdersQuery,
  ListPaymentsQuery,
  Market,
  Order,
  Page,
  PageQuery,
  Payment,
  RiskDecision,
  RiskSummary,
  RiskSummaryQuery,
  SignableAnswer,
  SubmitSignedAnswer,
  SubmitSignedRequest,
  VenueAuth,
} from "./types.js";
import { buildCancelAllVenueAuth, buildCancelVenueAuth, buildVenueAuth, type VenueCredentials } from "./venue-auth.js";

export * from "./errors.js";
export type * from "./types.js";
export {
  buildCancelAllVenueAuth,
  buildCancelVenueAuth,
  buildL2Signature,
  buildVenueAuth,
  serializeCancelOrderBody,
  serializePostOrderBody,
  type VenueCredentials,
} from "./venue-auth.js";
export { signUnsignedOrder, walletClientSigner, type TypedDataSigner, type TypedDataDefinition } from "./signing.js";
export type { EventsOptions } from "./events.js";
export type { RetryOptions } from "./transport.js";

export interface BrokerClientOptions {
  /** The service's base address, e.g. http://localhost:8080 */
  baseUrl: string;
  /** X-API-Key; leave out for an anonymous agent paying with x402. */
  apiKey?: string;
  /** Bearer token for the admin route POST /v1/orgs. */
  adminToken?: string;
  /** A fetch to use instead of the global one (e.g. `x402Fetch(...)` from `@agent-brokerage/sdk/x402`). */
  fetch?: typeof globalThis.fetch;
  /** Per-attempt timeout, milliseconds (default 30000). */
  timeoutMs?: number;
  retry?: RetryOptions;
  headers?: Record<string, string>;
}

/** Per-call options of POST routes. */
export interface PostOptions {
  /** Reuse a key to make a repeated call replay the first answer (24 h); a fresh UUID otherwise. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** Options of approveOrder and rejectOrder: a note recorded in the order's history with the decision. */
export interface DecisionOptions extends PostOptions {
  reason?: string;
}

/** Options of cancelOrder: the owner's venue_auth over the venue's DELETE /order, given or built here. */
export interface CancelOptions {
  venue_auth?: VenueAuth;
  /**
   * The order owner's own venue L2 credentials (payload mode at a venue that cancels only with them): the
   * order is read for its venue id and `venue_auth` is built over DELETE /order here; the secret never leaves
   * this process.
   */
  venueCredentials?: VenueCredentials;
}

/** Options of kill: with the owner's venue credentials, `venue_auth` over DELETE /cancel-all is built here. */
export interface KillOptions extends PostOptions {
  venueCredentials?: VenueCredentials;
}

export interface SignAndSubmitOptions extends PostOptions {
  /** The signer's own venue L2 credentials: builds `venue_auth` over the exact body the service sends. */
  venueCredentials?: VenueCredentials;
}

const enc = encodeURIComponent;

export class BrokerClient {
  readonly transport: Transport;
  private readonly adminToken?: string;

  constructor(options: BrokerClientOptions) {
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      fetch: options.fetch,
      timeoutMs: options.timeoutMs,
      retry: options.retry,
      headers: options.headers,
      userAgent: "agent-brokerage-sdk/0.1.0",
    });
    this.adminToken = options.adminToken;
  }

  // ---------------------------------------------------------------- operations

  health(): Promise<unknown> {
    return this.transport.call("GET", "/healthz");
  }
  ready(): Promise<unknown> {
    return this.transport.call("GET", "/readyz");
  }
  /** Prometheus text. */
  metrics(): Promise<string> {
    return this.transport.call("GET", "/metrics", { text: true });
  }
  /** The service's OpenAPI document. */
  openapi(): Promise<Record<string, any>> {
    return this.transport.call("GET", "/openapi");
  }
  /** The API reference (Markdown); problem `type` URIs point at its sections. */
  apiReference(): Promise<string> {
    return this.transport.call("GET", "/docs/api", { text: true });
  }

  // ---------------------------------------------------------------- organizations and keys

  /** POST /v1/orgs (admin): a new organization and its first API key (shown once). */
  createOrg(body: { name: string }, o: PostOptions & { adminToken?: string } = {}): Promise<CreateOrgAnswer> {
    const { adminToken, ...post } = o;
    const token = adminToken ?? this.adminToken;
    return this.transport.call("POST", "/v1/orgs", { body, ...post, headers: token ? { authorization: `Bearer ${token}` } : {} });
  }
  createApiKey(body: { name?: string; agent_id?: string } = {}, o: PostOptions = {}): Promise<IssuedApiKey> {
    return this.transport.call("POST", "/v1/api-keys", { body, ...o });
  }
  listApiKeys(query: PageQuery = {}): Promise<Page<ApiKey>> {
    return this.transport.call("GET", "/v1/api-keys", { query: { ...query } });
  }
  async revokeApiKey(id: string): Promise<void> {
    await this.transport.call("DELETE", `/v1/api-keys/${enc(id)}`);
  }
  /** GET /v1/payments (admin): x402 payments, newest first. */
  listPayments(query: ListPaymentsQuery = {}, o: { adminToken?: string } = {}): Promise<Page<Payment>> {
    const token = o.adminToken ?? this.adminToken;
    return this.transport.call("GET", "/v1/payments", { query: { ...query }, headers: token ? { authorization: `Bearer ${token}` } : {} });
  }

  // ---------------------------------------------------------------- markets

  listMarkets(query: ListMarketsQuery = {}): Promise<Page<Market>> {
    return this.transport.call("GET", "/v1/markets", { query: { ...query } });
  }
  getMarket(marketId: string): Promise<Market> {
    return this.transport.call("GET", `/v1/markets/${enc(marketId)}`);
  }

  // ---------------------------------------------------------------- agents

  createAgent(body: CreateAgentRequest, o: PostOptions = {}): Promise<Agent> {
    return this.transport.call("POST", "/v1/agents", { body, ...o });
  }
  listAgents(query: PageQuery = {}): Promise<Page<Agent>> {
    return this.transport.call("GET", "/v1/agents", { query: { ...query } });
  }
  getAgent(id: string): Promise<Agent> {
    return this.transport.call("GET", `/v1/agents/${enc(id)}`);
  }
  updateLimits(id: string, limits: Partial<Limits>): Promise<Agent> {
    return this.transport.call("PATCH", `/v1/agents/${enc(id)}/limits`, { body: limits });
  }
  /** Trips the agent's breaker by hand (reason `manual`). */
  tripBreaker(id: string, o: PostOptions = {}): Promise<Agent> {
    return this.transport.call("POST", `/v1/agents/${enc(id)}/breaker`, o);
  }
  /** Closes a breaker tripped by the kill switch or by hand. */
  resume(id: string, o: PostOptions = {}): Promise<Agent> {
    return this.transport.call("POST", `/v1/agents/${enc(id)}/resume`, o);
  }
  /** Stores scoped venue credentials (order:place, order:cancel) and moves the agent to delegated mode. */
  setCredentials(id: string, body: CredentialsRequest, o: PostOptions = {}): Promise<Agent> {
    return this.transport.call("POST", `/v1/agents/${enc(id)}/creds`, { body, ...o });
  }
  deleteCredentials(id: string): Promise<Agent> {
    return this.transport.call("DELETE", `/v1/agents/${enc(id)}/creds`);
  }
  /**
   * Kill switch: trips the breaker, cancels every open order within the deadline, deletes delegated credentials.
   * A payload-mode agent at a venue that cancels only with the owner's keys: pass `venue_auth` in the body or
   * the owner's `venueCredentials`; the venue then cancels the account's orders in one DELETE /cancel-all.
   */
  kill(id: string, body: KillRequest = {}, o: KillOptions = {}): Promise<KillAnswer> {
    const { venueCredentials, ...post } = o;
    const sent: KillRequest = venueCredentials && !body.venue_auth ? { ...body, venue_auth: buildCancelAllVenueAuth({ credentials: venueCredentials }) } : body;
    return this.transport.call("POST", `/v1/agents/${enc(id)}/kill`, { body: sent, ...post });
  }
  /** The agent's exposure per market (both outcome tokens together) against max_market_exposure_pct × capital_usdc. */
  getExposure(id: string): Promise<Exposure> {
    return this.transport.call("GET", `/v1/agents/${enc(id)}/exposure`);
  }
  /**
   * Turns the dead-man switch on: no beat within `interval_s` (5 to 3600) kills the agent (reason
   * `heartbeat`). The Agent's `heartbeat` then shows `{interval_s, last_at, deadline_at}`.
   */
  setHeartbeat(id: string, body: HeartbeatRequest): Promise<Agent> {
    return this.transport.call("PUT", `/v1/agents/${enc(id)}/heartbeat`, { body });
  }
  /**
   * A beat: moves the deadline `interval_s` ahead. Throws ConflictError `invalid_state` while the switch
   * is off, and `agent_halted` when the beat came after the deadline (the agent is then killed).
   */
  heartbeat(id: string, o: PostOptions = {}): Promise<Agent> {
    return this.transport.call("POST", `/v1/agents/${enc(id)}/heartbeat`, o);
  }
  /** Turns the dead-man switch off. */
  clearHeartbeat(id: string): Promise<Agent> {
    return this.transport.call("DELETE", `/v1/agents/${enc(id)}/heartbeat`);
  }

  // ---------------------------------------------------------------- orders

  /** Runs the eight risk checks without creating an order (`?dry_run=true`). */
  checkIntent(body: IntentRequest, o: PostOptions = {}): Promise<DryRunAnswer> {
    return this.transport.call("POST", "/v1/orders/intent", { body, query: { dry_run: true }, ...o });
  }
  /**
   * Places an intent: an unsigned order (payload mode) or an order already at the venue (delegated);
   * above the agent's `approval_threshold_usdc`, status `pending_approval` (a person decides). Throws
   * RiskRejectedError with every failure.
   */
  placeIntent(body: IntentRequest, o: PostOptions = {}): Promise<IntentAnswer> {
    return this.transport.call("POST", "/v1/orders/intent", { body, ...o });
  }
  submitSigned(body: SubmitSignedRequest, o: PostOptions = {}): Promise<SubmitSignedAnswer> {
    return this.transport.call("POST", "/v1/orders/submit-signed", { body, ...o });
  }
  /**
   * Signs the answer's `unsigned_order` with `signer` (a viem account or any EIP-712 signer) and submits
   * it, with `venue_auth` when the signer's venue credentials are given.
   */
  async signAndSubmit(answer: SignableAnswer, signer: TypedDataSigner, o: SignAndSubmitOptions = {}): Promise<SubmitSignedAnswer> {
    if (answer.mode !== "payload" || !answer.unsigned_order) throw new TypeError("signAndSubmit needs a payload-mode intent answer with an unsigned_order");
    const signature = await signUnsignedOrder(signer, answer.unsigned_order);
    const body: SubmitSignedRequest = { order_id: answer.order_id, signature };
    if (o.venueCredentials) {
      body.venue_auth = buildVenueAuth({
        credentials: o.venueCredentials,
        order: answer.unsigned_order.message,
        signature,
        order_type: answer.order_type,
        expiration: answer.expiration,
      });
    }
    return this.submitSigned(body, { idempotencyKey: o.idempotencyKey, signal: o.signal });
  }
  getOrder(id: string): Promise<Order> {
    return this.transport.call("GET", `/v1/orders/${enc(id)}`);
  }
  listOrders(query: ListOrdersQuery = {}): Promise<Page<Order>> {
    return this.transport.call("GET", "/v1/orders", { query: { ...query } });
  }
  /**
   * Cancels one order: locally while it awaits a signature, at the venue once open. In payload mode at a
   * venue that cancels only with the owner's keys, pass `venue_auth` or the owner's `venueCredentials`.
   */
  async cancelOrder(id: string, o: CancelOptions = {}): Promise<Order> {
    let venueAuth = o.venue_auth;
    if (!venueAuth && o.venueCredentials) {
      // The venue id is the order hash until the venue names it; an order without one has not reached the venue.
      const order = await this.getOrder(id);
      const venueOrderId = order.venue_order_id ?? order.order_hash;
      if (venueOrderId && order.status !== "awaiting_signature" && order.status !== "pending_approval") {
        venueAuth = buildCancelVenueAuth({ credentials: o.venueCredentials, venue_order_id: venueOrderId });
      }
    }
    return this.transport.call("DELETE", `/v1/orders/${enc(id)}`, venueAuth ? { body: { venue_auth: venueAuth } } : {});
  }
  /**
   * Approves an order pending approval (a person's call: it needs an organization key not scoped to an
   * agent). Payload mode: the answer carries the `unsigned_order` to sign (signAndSubmit takes it);
   * delegated mode: the order is placed at the venue. After `approval_deadline`: OrderExpiredError.
   */
  approveOrder(id: string, body: DecisionRequest = {}, o: PostOptions = {}): Promise<ApproveAnswer> {
    return this.transport.call("POST", `/v1/orders/${enc(id)}/approve`, { body, ...o });
  }
  /** Rejects an order pending approval; its reservation is released. */
  rejectOrder(id: string, body: DecisionRequest = {}, o: PostOptions = {}): Promise<Order> {
    return this.transport.call("POST", `/v1/orders/${enc(id)}/reject`, { body, ...o });
  }

  // ---------------------------------------------------------------- risk decisions

  /** Risk decisions, newest first; `approved: false` lists rejections with every failed check. */
  listDecisions(query: ListDecisionsQuery = {}): Promise<Page<RiskDecision>> {
    return this.transport.call("GET", "/v1/risk/decisions", { query: { ...query } });
  }
  /** Approved and rejected intents per hour, and daily volume per agent. */
  riskSummary(query: RiskSummaryQuery = {}): Promise<RiskSummary> {
    return this.transport.call("GET", "/v1/risk/summary", { query: { ...query } });
  }

  /** The agent's positions per outcome token, from its fills: shares, average price, cost, realized and unrealized PnL. */
  getPositions(id: string): Promise<Positions> {
    return this.transport.call("GET", `/v1/agents/${enc(id)}/positions`);
  }

  // ---------------------------------------------------------------- events and pages

  /** The organization's event stream (`order`, `risk_rejected`, `breaker`, `kill`), reconnecting with Last-Event-ID. */
  events(o: EventsOptions = {}): AsyncGenerator<BrokerEvent, void, undefined> {
    return streamEvents(this.transport, o);
  }

  /** Every item of a list route, page after page. */
  async *paginate<T>(list: (q: PageQuery) => Promise<Page<T>>, pageSize = 200): AsyncGenerator<T, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await list({ limit: pageSize, cursor });
      yield* page.data;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }
}
