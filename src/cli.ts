/**
 * Command line: `bun run cli org create --name X` registers an organization and
 * prints the same JSON as POST /v1/orgs (including its first API key, shown once).
 */
import { parseArgs } from "node:util";
import { ApiKeyService } from "./modules/api-keys/service.ts";
import { OrgService } from "./modules/orgs/service.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { openDatabase } from "./db/database.ts";

const USAGE = "usage: bun run cli org create --name NAME";

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { name: { type: "string" } }, allowPositionals: true, strict: true });
  if (positionals[0] !== "org" || positionals[1] !== "create" || positionals.length !== 2) {
    console.error(USAGE);
    return 2;
  }
  const name = values.name?.trim();
  if (!name || name.length > 200) {
    console.error(`--name must be 1 to 200 characters\n${USAGE}`);
    return 2;
  }
  const config = loadConfig();
  const database = await openDatabase(config.databaseUrl ? { kind: "postgres", url: config.databaseUrl } : { kind: "pglite", dataDir: config.dataDir });
  try {
    const created = await new OrgService(database.db, new ApiKeyService(database.db)).create(name);
    process.stdout.write(`${JSON.stringify(created)}\n`);
    return 0;
  } finally {
    await database.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  console.error(error instanceof ConfigError ? `configuration error: ${error.message}` : `error: ${(error as Error).message}`);
  process.exitCode = error instanceof ConfigError ? 2 : 1;
}
