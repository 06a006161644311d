/**
 * Builds the service from its parts: the Elysia app (one module per feature),
 * wrapped in the outer request layer. `createServices` wires the parts from a
 * configuration; tests build them with their own database and venue.
 */
import { openapi } from "@elysiajs/openapi";
import { timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import type { Config } from "./config.ts";
import type { Database } from "./db/database.ts";
import { authPlugin, RateLimiter } from "./http/auth.ts";
import { errorHandler } from "./http/error-handler.ts";
import { jsonBodies } from "./http/json-bodies.ts";
import { noNul } from "./http/no-nul.ts";
import { RateLimitedError, UnauthenticatedError } from "./errors/errors.ts";
import { createHandler } from "./http/handler.ts";
import { IdempotencyStore } from "./http/idempotency-store.ts";
import type { CredentialVault } from "./crypto/credential-vault.ts";
import { agentsModule } from "./modules/agents/index.ts";
import { AgentService } from "./modules/agents/service.ts";
import { apiKeysModule } from "./modules/api-keys/index.ts";
import { ApiKeyService } from "./modules/api-keys/service.ts";
import { credentialsModule } from "./modules/credentials/index.ts";
import { CredentialsService } from "./modules/credentials/service.ts";
import { healthModule } from "./modules/health/index.ts";
import { marketsModule } from "./modules/markets/index.ts";
import { killModule } from "./modules/kill/index.ts";
import { KillService } from "./modules/kill/service.ts";
import { ordersModule } from "./modules/orders/index.ts";
import { IntentService } from "./modules/orders/intent-service.ts";
import { OrderRepository } from "./modules/orders/order-repository.ts";
import { OrderService } from "./modules/orders/order-service.ts";
import { VenueSubmission } from "./modules/orders/venue-submission.ts";
import { interruptedRequestResolver } from "./modules/recovery/interrupted-requests.ts";
import { orgsModule } from "./modules/orgs/index.ts";
import { OrgService } from "./modules/orgs/service.ts";
import type { Logger } from "./observability/logger.ts";
import { createMetrics, type ServiceMetrics } from "./observability/metrics.ts";
import type { Venue } from "./venues/venue.ts";

export interface Services {
  config: Config;
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
  intents: IntentService;
  orders: OrderService;
  kill: KillService;
}

/** `vault` comes from loadOrCreateSealKeyPair, which is asynchronous: the caller builds it (main.ts, tests). */
export function createServices(parts: { config: Config; logger: Logger; database: Database; venue: Venue; vault: CredentialVault }): Services {
  const { config, database, venue, logger } = parts;
  const metrics = createMetrics();
  const apiKeys = new ApiKeyService(database.db);
  const agents = new AgentService(database.db, { idleMs: config.actorIdleMs, onActors: (n) => metrics.actorsActive.set(n) });
  const credentials = new CredentialsService({ agents, venue, vault: parts.vault, logger, confirmTimeoutMs: config.venueTimeoutMs });
  const orderRepo = new OrderRepository(database.db, {
    // Group commit: while one batch commits the next one gathers. PostgreSQL runs two batches on
    // two backends (bench/intent.ts: 2 was best or level with 1, 3, 4 and 6 in every session);
    // PGlite runs in this thread, so a second batch in flight would only queue behind the first.
    maxInFlight: database.kind === "postgres" ? 2 : 1,
    onBatch: (n) => metrics.dbBatchSize.observe(n),
    run: database.run,
  });
  const submission = new VenueSubmission({ repo: orderRepo, metrics, logger, venueName: venue.name });
  return {
    ...parts,
    metrics,
    apiKeys,
    orgs: new OrgService(database.db, apiKeys),
    agents,
    credentials,
    idempotency: new IdempotencyStore(database.db),
    rateLimiter: new RateLimiter(config.rateLimitPerS),
    orderRepo,
    intents: new IntentService({ config, agents, venue, repo: orderRepo, submission, credentials, metrics }),
    orders: new OrderService({ agents, venue, repo: orderRepo, submission, credentials, logger, venueTimeoutMs: config.venueTimeoutMs }),
    kill: new KillService({
      db: database.db,
      agents,
      venue,
      repo: orderRepo,
      credentials,
      metrics,
      logger,
      deadlineMs: config.killDeadlineMs,
      venueTimeoutMs: config.venueTimeoutMs,
      concurrency: config.killConcurrency,
    }),
  };
}

export interface App {
  /** Answers one request exactly as the server would. */
  handle(request: Request): Promise<Response>;
  elysia: Elysia<any, any, any, any, any, any, any>;
  services: Services;
  stop(): Promise<void>;
}

export function createApp(services: Services): App {
  const { logger, metrics } = services;
  const auth = authPlugin({ apiKeys: services.apiKeys, adminToken: services.config.adminToken, rateLimiter: services.rateLimiter });
  const elysia = new Elysia({ normalize: false })
    .use(errorHandler(logger))
    .use(jsonBodies())
    .use(noNul())
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
              "Every POST accepts an Idempotency-Key header. Authenticate with X-API-Key.",
          },
          components: { securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "X-API-Key" } } },
          security: [{ apiKey: [] }],
        },
      }),
    )
    .use(healthModule({ database: services.database, venue: services.venue, registry: metrics.registry }))
    .use(marketsModule({ venue: services.venue, timeoutMs: services.config.venueTimeoutMs }))
    .use(orgsModule({ orgs: services.orgs, auth }))
    .use(apiKeysModule({ apiKeys: services.apiKeys, auth }))
    .use(agentsModule({ agents: services.agents, auth }))
    .use(credentialsModule({ credentials: services.credentials, auth }))
    .use(ordersModule({ intents: services.intents, orders: services.orders, auth }))
    .use(killModule({ kill: services.kill, auth }));

  const adminToken = services.config.adminToken;
  const handle = createHandler({
    app: elysia,
    async checkCredential(request) {
      const key = request.headers.get("x-api-key");
      if (key !== null) {
        return (await services.apiKeys.authenticate(key)) ? null : new UnauthenticatedError("the API key is unknown or revoked");
      }
      const bearer = request.headers.get("authorization");
      // Without ADMIN_TOKEN the admin route does not exist: let it answer its own 404.
      if (bearer !== null && adminToken && !safeEqual(bearer, `Bearer ${adminToken}`)) {
        return new UnauthenticatedError("a valid admin bearer token is required");
      }
      return null;
    },
    async chargeReplay(request) {
      // A replay costs a request like any other (the route's own auth charges the ones that run).
      const key = request.headers.get("x-api-key");
      const found = key === null ? null : await services.apiKeys.authenticate(key);
      const wait = found ? services.rateLimiter.take(found.keyId) : 0;
      return wait > 0 ? new RateLimitedError(wait) : null;
    },
    resolveInterrupted: interruptedRequestResolver(services),
    logger,
    idempotency: services.idempotency,
    maxBodyBytes: services.config.maxBodyBytes,
    observer: {
      observe(method, route, status, seconds) {
        metrics.httpRequestsTotal.inc({ method, route, status });
        metrics.httpRequestDurationSeconds.observe({ method, route }, seconds);
      },
    },
  });
  return {
    handle,
    elysia,
    services,
    async stop() {
      services.agents.stop();
    },
  };
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
