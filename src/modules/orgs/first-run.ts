/**
 * First run: on a start with an empty database (no organization at all), a default organization
 * and its first API key are created, so `npm start` leads straight to a signed-in dashboard without
 * ADMIN_TOKEN or the CLI. The key is written to DATA_DIR/initial-api-key (mode 0600) and printed
 * once on the console with the dashboard URL. Never again: from then on the database has an
 * organization. The check and the insert run under a table lock, so two services starting on one
 * PostgreSQL database at once create one organization between them.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import type { Db } from "../../db/database.ts";
import { orgs } from "../../db/schema.ts";
import { newId } from "../../domain/ids.ts";
import type { ApiKeyService } from "../api-keys/service.ts";

export const INITIAL_KEY_FILE = "initial-api-key";
export const DEFAULT_ORG_NAME = "default";

export interface FirstRunKey {
  orgId: string;
  keyId: string;
  key: string;
  /** Where the key was written, or null when DATA_DIR could not take it (the console still shows it). */
  path: string | null;
  fileError: string | null;
}

/** Creates the default organization and its first key when the database has no organization; else null. */
export async function createFirstRunKey(deps: { db: Db; apiKeys: ApiKeyService; dataDir: string }): Promise<FirstRunKey | null> {
  return deps.db.transaction(async (tx) => {
    // Blocks a concurrent first run (and any org insert) until this one commits.
    await tx.execute(sql`lock table orgs in share row exclusive mode`);
    const existing = await tx.select({ id: orgs.id }).from(orgs).limit(1);
    if (existing.length) return null;
    const orgId = newId("org");
    await tx.insert(orgs).values({ id: orgId, name: DEFAULT_ORG_NAME, createdAt: new Date() });
    const issued = await deps.apiKeys.issue(orgId, { name: "initial" }, tx as unknown as Db);
    const path = join(deps.dataDir, INITIAL_KEY_FILE);
    let fileError: string | null = null;
    try {
      mkdirSync(deps.dataDir, { recursive: true, mode: 0o700 });
      writeFileSync(path, `${issued.key}\n`, { mode: 0o600 });
      // The mode above applies only when the file is created: an old file is narrowed too.
      chmodSync(path, 0o600);
    } catch (error) {
      fileError = error instanceof Error ? error.message : String(error);
    }
    return { orgId, keyId: issued.id, key: issued.key, path: fileError ? null : path, fileError };
  });
}

/** The browser address of the dashboard: a wildcard listen address is reached as localhost. */
export function dashboardUrl(host: string, port: number): string {
  const name = host === "0.0.0.0" || host === "::" || host === "[::]" || host === "" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  return `http://${name}:${port}/dashboard`;
}

/** The one-time console text: the key, where it is kept, and the dashboard URL. */
export function firstRunBanner(first: FirstRunKey, url: string): string {
  const rule = "=".repeat(72);
  return [
    rule,
    `First start: created the organization "${DEFAULT_ORG_NAME}" (${first.orgId}) and its first API key.`,
    "",
    `  API key:    ${first.key}`,
    `  Dashboard:  ${url}`,
    "",
    first.path
      ? `The key is shown only this once. It is also in ${first.path} (owner-only).`
      : `The key is shown only this once (it could not be written to DATA_DIR: ${first.fileError}).`,
    "Sign in to the dashboard with it, issue your own keys there, then revoke this one.",
    rule,
    "",
  ].join("\n");
}
