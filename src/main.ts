/** Starts the service: configuration, database (migrated), venue, HTTP server. */
import { createApp, createServices } from "./app.ts";
import { startJobs } from "./jobs.ts";
import { startVenueSources } from "./venue-sources.ts";
import { sql } from "drizzle-orm";
import { NotifyReportForwarding, VENUE_REPORT_ACK_CHANNEL, VENUE_REPORT_CHANNEL } from "./modules/orders/venue-report-forwarding.ts";
import { restorePaperOrders } from "./restore-paper-orders.ts";
import { assertSignatureBackend } from "./eip712/secp256k1.ts";
import { installShutdown } from "./shutdown.ts";
import { type Config, ConfigError, loadConfig } from "./config.ts";
import { CredentialVault } from "./crypto/credential-vault.ts";
import { loadOrCreateSealKeyPair, SealKeyError } from "./crypto/seal-key-pair.ts";
import { DataDirLockedError } from "./db/data-dir-lock.ts";
import { openDatabase } from "./db/database.ts";
import { checkSealKeyFingerprint } from "./db/agent-leases.ts";
import { claimInstanceId, watchInstanceId } from "./db/instance-id-lock.ts";
import { createLogger, type Logger } from "./observability/logger.ts";
import { type Clock, systemClock } from "./domain/clock.ts";
import { createVenue } from "./venues/create-venue.ts";
import { MarketsFileError } from "./venues/markets-file.ts";
import { createFirstRunKey, dashboardUrl, firstRunBanner } from "./modules/orgs/first-run.ts";
import { watchSingleton } from "./db/singleton-lease.ts";

async function main() {
  try {
    assertSignatureBackend();
  } catch (error) {
    console.error(`start-up error: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  }
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`configuration error: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  // Signals are caught from here on: one that comes while starting stops the service once it is up.
  const shutdown = installShutdown({ graceMs: config.shutdownGraceMs });
  const logger = createLogger({ level: config.logLevel });
  if (config.builderCodeDefaulted) logger.warn("BUILDER_CODE is not set: orders carry 32 zero bytes as their builder code");
  // The venue (its markets file) and the master key first: a bad setting stops start-up before
  // a key is generated or the database is touched.
  // The one clock every part reads "now" from: the venue's caches and timestamps, the actors, the jobs.
  const clock = systemClock;
  const venue = await openVenue(config, clock);
  const vault = await openVault(config, logger);
  const database = await openDatabase(
    config.databaseUrl
      ? // A session idle in a transaction past the lease's time to live is ended: a paused process cannot
        // hold a lease row's lock (agent_lease_fence) past its lease.
        // Each session names its instance (pg_stat_activity's application_name).
        { kind: "postgres", url: config.databaseUrl, idleInTransactionMs: config.lease.ttlMs, applicationName: `brokerage ${config.instanceId}` }
      : { kind: "pglite", dataDir: config.dataDir },
  ).catch(
    (error: unknown) => {
      // Another process holds the embedded database: say so and what to do, without a stack.
      if (error instanceof DataDirLockedError) {
        console.error(`error: ${error.message}`);
        process.exit(1);
      }
      throw error;
    },
  );
  // One process per INSTANCE_ID: two under one name would each take the other's agent leases (and
  // Idempotency-Key records) for their own. The name's lock is held for the process's life.
  if (!(await claimInstanceId(database, config.instanceId))) {
    console.error(
      `configuration error: another process on this database is running as INSTANCE_ID=${config.instanceId}. ` +
        `Every instance on one database needs its own INSTANCE_ID (by default the host name and pid): stop the other process, or start this one under another name.`,
    );
    await database.close();
    process.exit(2);
  }
  // The lock goes with its session: should the session end (a server restart, a cut connection), it is
  // taken again; held by another process meanwhile, this one stops at once (its leases lapse).
  const stopIdWatch = watchInstanceId(database, config.lease.renewMs, {
    retaken: () => logger.warn("the INSTANCE_ID lock's database session ended; the lock was taken again", { instance_id: config.instanceId }),
    lost: () => {
      logger.error("another process took this INSTANCE_ID's lock after this process's database session ended: stopping at once", { instance_id: config.instanceId });
      process.exit(2);
    },
  });
  // One seal key per database: an instance with another key could not open the credentials the
  // others sealed (and a kill through it could not cancel with them).
  const otherKey = await checkSealKeyFingerprint(database, vault.fingerprint());
  if (otherKey) {
    console.error(
      `configuration error: this instance's seal key (fingerprint ${vault.fingerprint()}) is not the one this database's credentials are sealed with ` +
        `(fingerprint ${otherKey}). Every instance on one database must use the same key: give each the same SEAL_KEY_FILE ` +
        `(a copy of the first instance's DATA_DIR/seal-key.json) or the same SEAL_SECRET_KEY.`,
    );
    await database.close();
    process.exit(2);
  }
  const services = createServices({ config, logger, database, venue, vault, clock });
  // Hand-over requests from the other instances (LISTEN); the instance's own row.
  await services.leases.start({ sole: database.kind === "pglite" });
  // Several instances: a venue report about an agent another instance owns is published to it, and
  // one this instance owns is delivered here (docs/decisions.md "Venue reports across instances").
  // The owner acknowledges each report it applied; one not acknowledged (an owner that died holding its
  // lease) is published again until the lease lapses and the actor is taken here.
  let stopForwarding: (() => Promise<void>) | null = null;
  if (database.kind !== "pglite" && database.listen) {
    const forwarding = new NotifyReportForwarding({
      notify: async (channel, payload) => {
        await database.db.execute(sql`select pg_notify(${channel}, ${payload})`);
      },
      holds: (agentId) => services.leases.holds(agentId),
      deliver: (r) => services.venueReports.deliver(r),
      ackTimeoutMs: Math.max(500, config.lease.renewMs * 2),
    });
    const stopAcks = await database.listen(VENUE_REPORT_ACK_CHANNEL, (payload) => forwarding.onAck(payload));
    const stopReports = await database.listen(VENUE_REPORT_CHANNEL, (payload) => void forwarding.onReport(payload));
    stopForwarding = async () => {
      await stopReports();
      await stopAcks();
    };
    services.venueReports.setForwarding(forwarding);
  }
  // First start on an empty database: a default organization and its first key (printed below, once).
  const firstRun = await createFirstRunKey({ db: database.db, apiKeys: services.apiKeys, dataDir: config.dataDir });
  const app = createApp(services);
  // Idempotency-Key records left in progress by a process that died: their retries are resolved
  // (the original outcome, or the request runs once) instead of answering 409 for a day.
  // Only this instance's own (an earlier run under the same INSTANCE_ID) and dead instances' records:
  // a live instance's requests in progress are its own.
  const interrupted = await services.idempotency.interruptInFlight({ startup: true, sole: database.kind === "pglite" });
  if (interrupted) logger.warn("idempotency keys interrupted by the last stop", { count: interrupted });
  // The paper venue's books are in memory: the orders resting on it before this start rest again,
  // before the server takes requests and before reconciliation reads the venue.
  await restorePaperOrders(services);
  // Reconciliation of unsettled orders starts now and runs beside the server: those orders stay
  // reserved against their agents' limits until it settles them.
  const jobs = startJobs(services);
  // Cluster-wide work that runs in one instance at a time (src/db/singleton-lease.ts).
  const stopSingletons: (() => void)[] = [];
  // Fills from the chain: its first pass catches up from the stored cursor, beside the server.
  const chain = services.chain.source;
  if (chain) {
    logger.info("chain source on: following OrderFilled logs", {
      confirmations: config.chain.confirmations,
      exchanges: config.chain.exchanges,
      poll_ms: config.chain.pollMs,
    });
    // One follower per database: the instance holding the singleton lease `job:chain_source` (taken
    // when free or lapsed); the others stand by and take over from the stored cursor.
    stopSingletons.push(watchSingleton(services.leases, "chain_source", config.lease.renewMs, { gain: () => void chain.start(), lose: () => void chain.stop() }));
  } else {
    logger.info("chain source off: CHAIN_RPC_URL is not set (no fills from the chain)");
  }
  // The user channel of delegated agents (VENUE=clob) and the GTD expiry of payload orders.
  // The user channel too: one instance follows every delegated agent (one connection per credential
  // set across the cluster); its reports reach the owners' actors through the forwarding above.
  let userChannelActive = false;
  stopSingletons.push(
    watchSingleton(services.leases, "user_channel", config.lease.renewMs, { gain: () => (userChannelActive = true), lose: () => (userChannelActive = false) }),
  );
  const sources = await startVenueSources({
    config,
    db: database.db,
    active: () => userChannelActive,
    withAgentCredentials: (id, fn) => services.credentials.withAgentCredentials(id, fn),
    sink: services.venueReports,
    clock,
    logger,
  });
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    // The server's own limit is the hard backstop (it answers a bare 413 without reading the body);
    // below it, src/http/body-limit.ts answers MAX_BODY_BYTES as a 413 problem document.
    maxRequestBodySize: config.maxBodyBytes * 2,
    // Event streams stay open: the idle timeout must outlast the keepalive interval (Bun's limit is 255 s).
    idleTimeout: Math.min(255, Math.max(30, Math.ceil((config.eventsKeepaliveMs * 2) / 1000))),
    fetch: app.handle,
    error: () => new Response(null, { status: 500 }),
  });
  logger.info("listening", { url: `http://${config.host}:${server.port}`, database: database.kind, venue: venue.name });
  if (firstRun) {
    // On the console (stderr), never through the logger: the JSON log stream does not carry keys.
    process.stderr.write(firstRunBanner(firstRun, dashboardUrl(config.host, server.port ?? config.port)));
    logger.info("first start: default organization created", { org_id: firstRun.orgId, key_id: firstRun.keyId, key_file: firstRun.path });
    if (firstRun.fileError) logger.warn("the first API key could not be written to DATA_DIR", { error: firstRun.fileError });
  }
  shutdown.ready(async () => {
    // 1. No new connections; the requests under way finish (with their venue calls and writes:
    //    a request answers only after its order is stored).
    stopIdWatch();
    jobs.stop().catch(() => undefined);
    chain?.stop().catch(() => undefined);
    sources.stop().catch(() => undefined);
    for (const stop of stopSingletons) stop();
    stopForwarding?.().catch(() => undefined);
    services.events.close(); // event streams never end by themselves
    await server.stop();
    // 2. Background work under way finishes: reconciliation and expiry runs, and what the actors
    //    still do after an answer (a kill's writes and fill reads, a placement's last write).
    await jobs.stop();
    await chain?.stop();
    await sources.stop();
    await services.agents.settled();
    // 2b. The agents' leases are released (app.stop): the next owner takes each over at once.
    await app.stop();
    await venue.close?.();
    // 3. The database flushes and closes (PGlite checkpoints its files; the lock is released).
    await database.close();
  }, logger);
}

/** The configured venue; a markets file that cannot be read stops start-up naming PAPER_MARKETS. */
async function openVenue(config: Config, clock: Clock) {
  try {
    return await createVenue(config, clock);
  } catch (error) {
    if (error instanceof MarketsFileError) {
      console.error(`configuration error: PAPER_MARKETS: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
}

/** The credential vault on the master key pair (SEAL_SECRET_KEY, SEAL_KEY_FILE, or generated into DATA_DIR). */
async function openVault(config: Config, logger: Logger): Promise<CredentialVault> {
  try {
    const keys = await loadOrCreateSealKeyPair({ dataDir: config.dataDir, keyFile: config.sealKeyFile, secretKeyB64: config.sealSecretKey });
    for (const warning of keys.warnings) logger.warn(warning);
    if (keys.source === "generated") logger.warn("seal key pair generated: back it up, stored credentials cannot be opened without it", { path: keys.path });
    return new CredentialVault(keys);
  } catch (error) {
    // SealKeyError messages name the variable or file, never key material.
    if (error instanceof SealKeyError) {
      console.error(`configuration error: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
}

await main();
