/**
 * Builds the service from its parts: the Elysia app (one module per feature),
 * with the request concerns as Elysia plugins (src/http/). `createServices` wires the parts from a
 * configuration; tests build them with their own database and venue.
 */
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import type { Config } from "./config.ts";
import type { Database } from "./db/database.ts";
import { accessLog, accessRecorder } from "./http/access-log.ts";
import { authPlugin } from "./http/auth.ts";
import { bodyLimit } from "./http/body-limit.ts";
import { hasStoredAnswer, idempotency } from "./http/idempotency.ts";
import { RateLimiter } from "./http/rate-limit.ts";
import { requestId } from "./http/request-id.ts";
import { errorHandler } from "./http/error-handler.ts";
import { noNul } from "./http/no-nul.ts";
import { IdempotencyStore } from "./db/idempotency-store.ts";
import type { CredentialVault } from "./crypto/credential-vault.ts";
import { agentsModule } from "./modules/agents/index.ts";
import { AgentService } from "./modules/agents/service.ts";
import { heartbeatModule } from "./modules/agents/heartbeat-routes.ts";
import { HeartbeatService } from "./modules/agents/heartbeat-service.ts";
import { apiKeysModule } from "./modules/api-keys/index.ts";
import { ApiKeyService } from "./modules/api-keys/service.ts";
import { credentialsModule } from "./modules/credentials/index.ts";
import { docsModule } from "./modules/docs/index.ts";
import { dashboardModule } from "./modules/dashboard/index.ts";
import { decisionsModule } from "./modules/decisions/index.ts";
import { DecisionService } from "./modules/decisions/service.ts";
import { exposureModule } from "./modules/exposure/index.ts";
import { ExposureService } from "./modules/exposure/service.ts";
import { CredentialsService } from "./modules/credentials/service.ts";
import { healthModule } from "./modules/health/index.ts";
import { balanceReaderOf, type ChainParts, createChain, loggingSink } from "./compose-chain.ts";
import type { VenueReportSink } from "./domain/venue-report.ts";
import { marketsModule } from "./modules/markets/index.ts";
import { FirmKillService } from "./modules/kill/firm-kill-service.ts";
import { cancelAllModule, firmKillModule, killModule } from "./modules/kill/index.ts";
import { KillService } from "./modules/kill/service.ts";
import { intentsModule } from "./modules/intents/index.ts";
import { IntentService } from "./modules/intents/service.ts";
import { ordersModule } from "./modules/orders/index.ts";
import { OrderRepository, type OrderRow } from "./db/order-repository.ts";
import { OrderService } from "./modules/orders/service.ts";
import { type FillDecision, type FillInput, FillStore } from "./db/fill-store.ts";
import { ActorVenueReportSink } from "./modules/orders/venue-report-sink.ts";
import { PositionService } from "./modules/positions/service.ts";
import { positionsModule } from "./modules/positions/index.ts";
import { PaperVenue } from "./venues/paper/paper-venue.ts";
import { toOrderModel } from "./modules/orders/order-view.ts";
import { eventsModule } from "./modules/events/index.ts";
import { BrokerEventModel } from "./modules/events/model.ts";
import { EventStreamService } from "./modules/events/service.ts";
import { webhooksModule } from "./modules/webhooks/index.ts";
import { WebhookMessageModel, webhooksDocumentation } from "./modules/webhooks/model.ts";
import { WebhookService } from "./modules/webhooks/service.ts";
import { createWebhookMetrics, WebhookDispatcher } from "./modules/webhooks/dispatcher.ts";
import { EventLog } from "./db/event-log.ts";
import { DbLeases } from "./db/agent-leases.ts";
import { holdsSingleton } from "./db/singleton-lease.ts";
import { type Clock, systemClock } from "./domain/clock.ts";
import { interruptedRequestResolver } from "./modules/recovery/interrupted-requests.ts";
import { orgsModule } from "./modules/orgs/index.ts";
import { createPayments } from "./modules/payments/create-payments.ts";
import { paymentsModule } from "./modules/payments/index.ts";
import type { PaymentService } from "./modules/payments/payment-service.ts";
import { x402Plugin } from "./modules/payments/x402-plugin.ts";
import { OrgService } from "./modules/orgs/service.ts";
import type { Logger } from "./observability/logger.ts";
import { createMetrics, type ServiceMetrics } from "./observability/metrics.ts";
import type { Venue } from "./venues/venue.ts";
import type { Limits } from "./risk/limits.ts";
import type { AgentLimits } from "./modules/agents/agent-store.ts";
import type { PositionBalanceReader } from "../actors/ports.ts";

export interface Services {
  config: Config;
  /** The one clock every part reads "now" from. */
  clock: Clock;
  logger: Logger;
  metrics: ServiceMetrics;
  database: Database;
  venue: Venue;
  apiKeys: ApiKeyService;
  orgs: OrgService;
  agents: AgentService;
  /** Seals and opens delegated-mode credentials with the service's master key pair. */
  vault: CredentialVault;
  credentials: CredentialsService;
  idempotency: IdempotencyStore;
  rateLimiter: RateLimiter;
  orderRepo: OrderRepository;
  /** Fills reported by the sources of the venue's truth (src/db/fill-store.ts). */
  fills: FillStore;
  /** Where the sources of the venue's truth hand their reports: `venueReports.report(r)`. */
  venueReports: ActorVenueReportSink;
  positions: PositionService;
  intents: IntentService;
  orders: OrderService;
  kill: KillService;
  /** The organization-wide kill and resume (POST /v1/kill, POST /v1/resume, GET /v1/kill). */
  firmKill: FirmKillService;
  /** The dead-man switch: beats, and the sweep that kills agents past their deadline. */
  heartbeats: HeartbeatService;
  /** x402 pay-per-request (off unless X402_ENABLED). */
  payments: PaymentService;
  decisions: DecisionService;
  exposure: ExposureService;
  /** The event log table's reads, pruning and wake-up. */
  eventLog: EventLog;
  /** Agent leases: which instance's actor owns each agent (src/db/agent-leases.ts). */
  leases: DbLeases;
  events: EventStreamService;
  /** The chain source (null when CHAIN_RPC_URL is unset): `source.start()` in main.ts, its state in /readyz. */
  chain: ChainParts;
  /** Webhook endpoints (the API's) and their delivery loop (started by startJobs). */
  webhooks: WebhookService;
  webhookDispatcher: WebhookDispatcher;
}

/** `vault` comes from loadOrCreateSealKeyPair, which is asynchronous: the caller builds it (main.ts, tests). */
export function createServices(parts: {
  config: Config;
  logger: Logger;
  database: Database;
  venue: Venue;
  vault: CredentialVault;
  clock?: Clock;
  /** The limits a new agent starts with (default: DEFAULT_LIMITS, docs/api.md#limits); tests set their own. */
  defaultLimits?: Limits;
  /** Where the chain source (and the other sources of the venue's truth) hand their reports; default: the actors' sink. */
  venueReports?: VenueReportSink;
  /**
   * The wallets' on-chain balances of outcome tokens (the chain source wires it: the Conditional Tokens
   * contract's balanceOf); absent, what an agent holds comes from its fills alone.
   */
  balances?: PositionBalanceReader;
  /**
   * Set when a source of the venue's truth (the chain, the user channel) reports every fill to the
   * sink: sells are then checked against positions (`insufficient_position`). The paper venue reports
   * its own fills in-process, so it is on for it always.
   */
  fillSources?: boolean;
}): Services {
  const { config, database, venue, logger, defaultLimits, fillSources, venueReports: reportSinkOverride, ...rest } = parts;
  const clock = parts.clock ?? systemClock;
  // The chain source hands its reports to the actors' sink (built below, once the agents exist), or to
  // the sink a test gives; its balance reader tells what a wallet holds beside its fills.
  let actorSink: VenueReportSink | null = null;
  const chain = createChain({
    config,
    database,
    logger,
    clock,
    sink: reportSinkOverride ?? { report: (r) => (actorSink ?? loggingSink(logger)).report(r) },
  });
  const balances = parts.balances ?? (chain.balances ? balanceReaderOf(chain.balances) : undefined);
  const metrics = createMetrics();
  const apiKeys = new ApiKeyService(database.db, clock);
  const orderEvent = (row: OrderRow) => ({ order: toOrderModel(row) });
  const eventLog = new EventLog(database.db, orderEvent);
  const onEvents = () => eventLog.wake();
  // One actor per agent across every instance on the database (docs/decisions.md "One actor per agent
  // across instances"). On PGlite (one process) the same leases are taken, by this process alone.
  const leases = new DbLeases(database, {
    instanceId: config.instanceId,
    ttlMs: config.lease.ttlMs,
    renewEveryMs: config.lease.renewMs,
    log: { info: (m, f) => logger.info(m, f), warn: (m, f) => logger.warn(m, f) },
    metrics: {
      held: (n) => metrics.leasesHeld.set(n),
      taken: (kind) => metrics.leaseTakenTotal.inc({ kind }),
      lost: () => metrics.leaseLostTotal.inc(),
    },
  });
  const agents = new AgentService(database.db, {
    idleMs: config.actorIdleMs,
    onActors: (n) => metrics.actorsActive.set(n),
    clock,
    mailboxCapacity: config.actorMailboxMax,
    defaultLimits: defaultLimits as AgentLimits | undefined,
    onEvents,
    query: database.query,
    lease: {
      port: leases,
      acquireWaitMs: config.lease.waitMs,
      handoffMaxMs: config.lease.handoffMs,
      log: (m, f) => logger.warn(m, f),
      // PGlite is one process (its data-directory lock): the same leases, without the per-write fence.
      fenceWrites: database.kind === "postgres",
    },
  });
  const credentials = new CredentialsService({
    agents,
    venue,
    vault: parts.vault,
    logger,
    confirmTimeoutMs: config.venueTimeoutMs,
    // Read in the statements that write the placements' orders (OrderRepository.readSealed).
    sealedReads: { read: (agentId) => orderRepo.readSealed(agentId) },
  });
  const orderRepo = new OrderRepository(database.db, {
    // Group commit: while one batch commits the next one gathers. One batch in flight on both
    // databases: on PostgreSQL two in flight (two backends) made batches of 11-12 instead of 16 at 32
    // connections and cost PostgreSQL 15 % more CPU per intent (bench:intent A/B, 2026-11-24: 102.5
    // against 87.1 us/op); throughput in that A/B was noisy and may be lower with one (1,437, 4,182 and
    // 2,460/s against 2,416, 3,316 and 4,007/s), p99 45 against 34 ms. PGlite runs in
    // this thread, so a second batch in flight would only queue behind the first.
    maxInFlight: 1,
    onBatch: (n) => metrics.dbBatchSize.observe(n),
    run: database.run,
    query: database.query,
    clock,
    orderEvent,
    onEvents,
  });
  const fills = new FillStore(database.db, orderEvent, () => new Date(clock.now()));
  // The fills port over a fill store (the whole one, or one fenced on an agent's lease).
  const venueCallTimers = new Map<string, ReturnType<typeof metrics.venueCallDurationSeconds.labels>>();
  const fillPort = (store: FillStore) => ({
    applyFill: (id: string, f: FillInput, decide: FillDecision) => store.applyFill(id, f, decide),
    revertFill: (id: string, ref: Parameters<FillStore["revertFill"]>[1], decide: FillDecision) => store.revertFill(id, ref, decide),
  });
  // The actors' order path: the store, the venue and the credentials, as the ports they define.
  agents.connect({
    orders: orderRepo,
    fills: fillPort(fills),
    ...(balances ? { balances } : {}),
    venue,
    credentials,
    config: {
      chainId: config.chainId,
      builderCode: config.builderCode,
      signatureTtlS: config.signatureTtlS,
      venueTimeoutMs: config.venueTimeoutMs,
      approvalTtlS: config.approvalTtlS,
      checkPositions: venue instanceof PaperVenue || fillSources === true || chain.source !== null || balances !== undefined,
    },
    observer: {
      verdict(v) {
        metrics.riskDecisionsTotal.inc({ outcome: v.approved ? "approved" : "rejected" });
        for (const f of v.failures) metrics.riskFailuresTotal.inc({ check: f.check, code: f.code });
      },
      venueCall(op) {
        // The histogram's child for this label set, kept: one lookup of its labels per operation, not per call.
        let child = venueCallTimers.get(op);
        if (!child) venueCallTimers.set(op, (child = metrics.venueCallDurationSeconds.labels({ venue: venue.name, op })));
        const end = child.startTimer();
        return (ok) => {
          end();
          if (!ok) metrics.venueErrorsTotal.inc({ venue: venue.name, op });
        };
      },
      warn: (message, fields) => logger.warn(message, fields),
      error: (message, fields) => logger.error(message, fields),
    },
  }, (fence) => ({ orders: orderRepo.fenced(fence), fills: fillPort(fills.fenced(fence)) }));
  // Where the sources of the venue's truth hand their reports (the chain, the user channel, the paper venue).
  // The order a report names: one this process placed from memory (its placement's own report on the
  // user channel), any other from the database.
  const reportedOrder = { findOrder: async (ref: { orderHash?: string; venueOrderId?: string }) => orderRepo.placedOrder(ref) ?? fills.findOrder(ref) };
  const venueReports = new ActorVenueReportSink({ fills: reportedOrder, agents, logger });
  actorSink = venueReports;
  if (venue instanceof PaperVenue) venue.reportTo(venueReports);
  const rateLimiter = new RateLimiter(config.rateLimitPerS, clock);
  const orders = new OrderService({ agents, repo: orderRepo, logger, fills });
  const idempotencyStore = new IdempotencyStore(database.db, config.instanceId);
  const kill = new KillService({
    db: database.db,
    agents,
    credentials,
    clock,
    metrics,
    logger,
    deadlineMs: config.killDeadlineMs,
    concurrency: config.killConcurrency,
    onEvents,
    venue,
    orderHashOf: async (id) => (await orderRepo.get(id))?.orderHash ?? null,
  });
  const webhookDispatcher = new WebhookDispatcher({
    db: database.db,
    eventLog,
    vault: parts.vault,
    clock,
    logger,
    metrics: createWebhookMetrics(metrics.registry),
    settings: config.webhooks,
    // PGlite commits in id order; on PostgreSQL an id may commit later than a larger one (dispatcher.ts).
    gapWaitMs: database.kind === "pglite" ? 0 : 5_000,
    // One delivering instance per database: the holder of the singleton lease (taken when free or lapsed).
    active: () => holdsSingleton(leases, "webhooks"),
  });
  const webhooks = new WebhookService({
    db: database.db,
    vault: parts.vault,
    clock,
    eventLog,
    settings: config.webhooks,
    onChange: () => webhookDispatcher.kick(),
  });
  return {
    ...rest,
    config,
    database,
    venue,
    logger,
    clock,
    metrics,
    apiKeys,
    orgs: new OrgService(database.db, apiKeys),
    agents,
    credentials,
    idempotency: idempotencyStore,
    rateLimiter,
    orderRepo,
    fills,
    venueReports,
    positions: new PositionService({ fills, agents, venue, timeoutMs: config.venueTimeoutMs }),
    intents: new IntentService({ agents, clock }),
    orders,
    decisions: new DecisionService(database.db, clock),
    exposure: new ExposureService(database.db, agents, fills),
    kill,
    firmKill: new FirmKillService({ db: database.db, agents, clock, logger, kill }),
    heartbeats: new HeartbeatService({ agents, kill, clock, logger }),
    payments: createPayments({
      config,
      db: database.db,
      rateLimiter,
      agents,
      orders,
      logger,
      defaultLimits,
      replays: { hasStoredAnswer: (request, caller) => hasStoredAnswer(idempotencyStore, request, caller) },
    }),
    eventLog,
    leases,
    events: new EventStreamService({ log: eventLog, agents, clock, logger, keepaliveMs: config.eventsKeepaliveMs }),
    chain,
    webhooks,
    webhookDispatcher,
  };
}

export interface App {
  /** Answers one request exactly as the server would. */
  handle(request: Request): Promise<Response> | Response;
  elysia: Elysia<any, any, any, any, any, any, any>;
  services: Services;
  stop(): Promise<void>;
}

export function createApp(services: Services): App {
  const { logger, metrics } = services;
  const auth = authPlugin({
    apiKeys: services.apiKeys,
    adminToken: services.config.adminToken,
    rateLimiter: services.rateLimiter,
    payments: services.payments.enabled ? services.payments : undefined,
  });
  const access = accessRecorder({ logger, metrics });
  // Request concerns first, as global lifecycle hooks, in the order they act on a request.
  const elysia = new Elysia({ normalize: false })
    .use(requestId())
    .use(errorHandler(logger, access))
    .use(bodyLimit(services.config.maxBodyBytes))
    .use(accessLog(access))
    .use(noNul())
    .use(services.payments.enabled ? x402Plugin(services.payments) : new Elysia({ name: "x402-off" }))
    .use(idempotency({ store: services.idempotency, logger, resolveInterrupted: interruptedRequestResolver(services) }))
    .use(
      openapi({
        path: "/openapi/ui",
        specPath: "/openapi",
        documentation: {
          info: {
            title: "Agent brokerage API",
            version: "1.0.0",
            description:
              "Non-custodial brokerage for AI agents on prediction markets. Errors are RFC 9457 problem details. " +
              "Every POST accepts an Idempotency-Key header. Authenticate with X-API-Key. " +
              "The reference, with every problem code, is docs/api.md (served at /docs/api).",
          },
          externalDocs: { description: "API reference (docs/api.md)", url: "/docs/api" },
          components: {
            securitySchemes: {
              apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
              adminToken: { type: "http", scheme: "bearer", description: "ADMIN_TOKEN, for POST /v1/orgs only" },
            },
            // What GET /v1/events and webhook endpoints receive (not a route's JSON answer, so listed here).
            schemas: { BrokerEvent: BrokerEventModel, WebhookMessage: WebhookMessageModel },
          },
          // OpenAPI 3.1's outgoing requests: the message of each event type a webhook endpoint receives.
          webhooks: webhooksDocumentation(),
          security: [{ apiKey: [] }],
        },
      }),
    )
    .use(docsModule())
    .use(healthModule({ database: services.database, venue: services.venue, registry: metrics.registry, chain: services.chain.source }))
    .use(marketsModule({ venue: services.venue, timeoutMs: services.config.venueTimeoutMs }))
    .use(orgsModule({ orgs: services.orgs, auth }))
    .use(apiKeysModule({ apiKeys: services.apiKeys, auth }))
    .use(agentsModule({ agents: services.agents, auth }))
    .use(credentialsModule({ credentials: services.credentials, auth }))
    .use(intentsModule({ intents: services.intents, auth }))
    .use(ordersModule({ orders: services.orders, auth }))
    .use(killModule({ kill: services.kill, auth }))
    .use(cancelAllModule({ kill: services.kill, auth }))
    .use(firmKillModule({ firmKill: services.firmKill, auth }))
    .use(heartbeatModule({ heartbeats: services.heartbeats, auth }))
    .use(paymentsModule({ payments: services.payments, auth }))
    .use(decisionsModule({ decisions: services.decisions, auth }))
    .use(exposureModule({ exposure: services.exposure, auth }))
    .use(positionsModule({ positions: services.positions, auth }))
    .use(eventsModule({ events: services.events, auth }))
    .use(webhooksModule({ webhooks: services.webhooks, auth }))
    .use(dashboardModule());

  return {
    // Elysia's compiled handler itself: `elysia.handle` is an async wrapper around it (`async (r) =>
    // this.fetch(r)`), one more promise, and its adoption, per request.
    handle: (request) => elysia.fetch(request),
    elysia,
    services,
    async stop() {
      services.agents.stop();
      // The leases go back at once (the next owner need not wait for a lapse), then renewal stops.
      await services.agents.registry.releaseAll();
      await services.leases.stop();
    },
  };
}
