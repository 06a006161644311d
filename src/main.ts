/** Starts the service: configuration, database (migrated), venue, HTTP server. */
import { createApp, createServices } from "./app.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { openDatabase } from "./db/database.ts";
import { createLogger } from "./observability/logger.ts";
import { createVenue } from "./venues/create-venue.ts";

async function main() {
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
  const logger = createLogger({ level: config.logLevel });
  if (config.builderCodeDefaulted) logger.warn("BUILDER_CODE is not set: orders carry 32 zero bytes as their builder code");
  const database = await openDatabase(config.databaseUrl ? { kind: "postgres", url: config.databaseUrl } : { kind: "pglite", dataDir: config.dataDir });
  const venue = await createVenue(config);
  const services = createServices({ config, logger, database, venue });
  const app = createApp(services);
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    maxRequestBodySize: config.maxBodyBytes,
    fetch: app.handle,
    error: () => new Response(null, { status: 500 }),
  });
  logger.info("listening", { url: `http://${config.host}:${server.port}`, database: database.kind, venue: venue.name });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("stopping", { signal });
    await server.stop();
    await app.stop();
    await venue.close?.();
    await database.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

await main();
