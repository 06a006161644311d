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
  UnsignedOrder,
  OrderType,
  SubmitSignedAnswer,
  SubmitSignedRequest,
  VenueAuth,
  CancelAllAnswer,
  CancelAllRequest,
  FirmKillAnswer,
  FirmKillRequest,
  FirmKillState,
  FirmResumeAnswer,
  OrderBook,
} from "./types.js";
import type { CreatedWebhook, CreateWebhookRequest, Webhook, WebhookTestResult } from "./types.js";
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
   * it, with `venue_auth` when the signer's venue credentials are given. Takes what placeIntent answers
   * once narrowed with `mode === "payload"`, and approveOrder's payload answer. An intent still
   * `pending_approval` is read again (GET /v1/orders/{id}): approved meanwhile, its unsigned order is
   * signed; still waiting for a person (or no longer awaiting a signature), a TypeError says so and nothing is sent.
   */
  async signAndSubmit(answer: SignableAnswer, signer: TypedDataSigner, o: SignAndSubmitOptions = {}): Promise<SubmitSignedAnswer> {
    if (answer.mode !== "payload") throw new TypeError("signAndSubmit needs a payload-mode intent answer with an unsigned_order");
    let signable: { order_id: string; unsigned_order: UnsignedOrder; order_type: OrderType; expiration: string };
    if ("unsigned_order" in answer && answer.unsigned_order) {
      signable = answer;
    } else {
      const order = await this.getOrder(answer.order_id);
      if (order.status !== "awaiting_signature" || !order.unsigned_order) {
        throw new TypeError(
          `order ${answer.order_id} is ${order.status}, not awaiting a signature: an order pending approval is signed after a person approves it (approveOrder)`,
        );
      }
      const expiration = typeof order.expiration === "string" ? order.expiration : "0";
      if (o.venueCredentials && order.order_type === "GTD" && expiration === "0") {
        throw new TypeError(`order ${answer.order_id} is GTD: sign approveOrder's answer, which carries its expiration, to build venue_auth`);
      }
      signable = { order_id: order.id, unsigned_order: order.unsigned_order, order_type: order.order_type, expiration };
    }
    const signature = await signUnsignedOrder(signer, signable.unsigned_order);
    const body: SubmitSignedRequest = { order_id: signable.order_id, signature };
    if (o.venueCredentials) {
      body.venue_auth = buildVenueAuth({
        credentials: o.venueCredentials,
        order: signable.unsigned_order.message,
        signature,
        order_type: signable.order_type,
        expiration: signable.expiration,
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

  /** The organization's event stream (`order`, `risk_rejected`, `breaker`, `kill`, and the organization's `webhook_disabled`), reconnecting with Last-Event-ID. */
  events(o: EventsOptions = {}): AsyncGenerator<BrokerEvent, void, undefined> {
    return streamEvents(this.transport, o);
  }

  // ---------------------------------------------------------------- cancel-all, firm-wide kill, book depth

  /**
   * Cancels the agent's open orders (all, or `market_id`'s) under the kill's deadline and rules, without
   * halting it: the breaker stays closed and the credentials stay. Payload mode at a venue that cancels
   * only with the owner's keys: pass `venueCredentials` (the owner's own L2 credentials) and the
   * headers are built here (over DELETE /cancel-all, or over each order's DELETE /order with `market_id`).
   */
  async cancelAll(id: string, body: CancelAllRequest = {}, o: KillOptions = {}): Promise<CancelAllAnswer> {
    const { venueCredentials, ...post } = o;
    let sent: CancelAllRequest = body;
    if (venueCredentials && !body.venue_auth && !body.venue_auths) {
      if (body.market_id === undefined) sent = { ...body, venue_auth: buildCancelAllVenueAuth({ credentials: venueCredentials }) };
      else {
        const venue_auths: Record<string, VenueAuth> = {};
        const market = BigInt(body.market_id).toString();
        // Orders at the venue (open, or unknown after a timeout: the venue id is then the order hash).
        for (const status of ["open", "unknown"] as const) {
          for await (const order of this.paginate((q) => this.listOrders({ ...q, agent_id: id, status }))) {
            const venueOrderId = order.venue_order_id ?? order.order_hash;
            if (order.market_id === market && venueOrderId) venue_auths[venueOrderId] = buildCancelVenueAuth({ credentials: venueCredentials, venue_order_id: venueOrderId });
          }
        }
        sent = { ...body, venue_auths };
      }
    }
    return this.transport.call("POST", `/v1/agents/${enc(id)}/cancel-all`, { body: sent, ...post });
  }
  /**
   * Firm-wide kill (an organization key): kills every agent of the organization concurrently, each under
   * the kill deadline, answered per agent; agents created afterwards start halted until resumeAll().
   * `venueCredentials`, by agent id: payload-mode owners' L2 credentials, for headers over DELETE /cancel-all.
   */
  async killAll(body: Partial<FirmKillRequest> = {}, o: PostOptions & { venueCredentials?: Record<string, VenueCredentials> } = {}): Promise<FirmKillAnswer> {
    const { venueCredentials, ...post } = o;
    // The route names the organization on purpose (docs/api.md#post-v1kill); read it when not given.
    let sent: FirmKillRequest = { ...body, org_id: body.org_id ?? (await this.getFirmKill()).org_id };
    if (venueCredentials && !body.venue_auths) {
      sent = { ...sent, venue_auths: Object.fromEntries(Object.entries(venueCredentials).map(([agentId, c]) => [agentId, buildCancelAllVenueAuth({ credentials: c })])) };
    }
    return this.transport.call("POST", "/v1/kill", { body: sent, ...post });
  }
  /** Undoes the firm-wide kill in one call: the agents it halted (and those created since) are resumed, the organization's halt cleared. */
  async resumeAll(body: { org_id?: string } = {}, o: PostOptions = {}): Promise<FirmResumeAnswer> {
    const org_id = body.org_id ?? (await this.getFirmKill()).org_id;
    return this.transport.call("POST", "/v1/resume", { body: { org_id }, ...o });
  }
  /** Whether the organization is halted by the firm-wide kill. */
  getFirmKill(): Promise<FirmKillState> {
    return this.transport.call("GET", "/v1/kill");
  }
  /** One outcome token's book depth from the venue: `depth` levels per side (1-500, default 50). */
  getBook(marketId: string, query: { depth?: number } = {}): Promise<OrderBook> {
    return this.transport.call("GET", `/v1/markets/${enc(marketId)}/book`, { query: { ...query } });
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

  // ---------------------------------------------------------------- webhooks (organization keys only)

  /**
   * Registers a webhook endpoint (docs/webhooks.md): the organization's events from now on are POSTed to
   * `url`, signed per Standard Webhooks. The answer's `secret` (`whsec_…`) is shown only once: keep it to
   * verify the messages (`new Webhook(secret).verify(body, headers)` with the `standardwebhooks` package).
   */
  createWebhook(body: CreateWebhookRequest, o: PostOptions = {}): Promise<CreatedWebhook> {
    return this.transport.call("POST", "/v1/webhooks", { body, ...o });
  }
  listWebhooks(query: PageQuery = {}): Promise<Page<Webhook>> {
    return this.transport.call("GET", "/v1/webhooks", { query: { ...query } });
  }
  getWebhook(id: string): Promise<Webhook> {
    return this.transport.call("GET", `/v1/webhooks/${enc(id)}`);
  }
  /** Sends a signed `webhook_test` message to the endpoint now and answers what it did. */
  testWebhook(id: string, o: PostOptions = {}): Promise<WebhookTestResult> {
    return this.transport.call("POST", `/v1/webhooks/${enc(id)}/test`, { ...o });
  }
  /** Enables a disabled endpoint again: delivery resumes with the event that failed. */
  enableWebhook(id: string, o: PostOptions = {}): Promise<Webhook> {
    return this.transport.call("POST", `/v1/webhooks/${enc(id)}/enable`, { ...o });
  }
  async deleteWebhook(id: string): Promise<void> {
    await this.transport.call("DELETE", `/v1/webhooks/${enc(id)}`);
  }
}
