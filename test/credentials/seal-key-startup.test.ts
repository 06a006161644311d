/**
 * The master seal key as the real service start-up (src/main.ts) handles it. The key loader itself
 * is covered by test/unit/crypto/credential-vault.test.ts (0600 file, reload, SEAL_SECRET_KEY,
 * SEAL_KEY_FILE, bad files); this checks the wiring: the first start generates the key into
 * DATA_DIR with mode 0600 and says so, the second start reuses it, credentials sealed in the first
 * life open with it, and a bad SEAL_* setting stops start-up with a clear message and exit code 2.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { CredentialVault } from "../../src/crypto/credential-vault.ts";
import { loadOrCreateSealKeyPair } from "../../src/crypto/seal-key-pair.ts";
import { openDatabase } from "../../src/db/database.ts";
import { credentials } from "../../src/db/schema.ts";
import { copyOfTemplate } from "../support/databases.ts";
import { ADMIN_TOKEN, MAIN, serviceEnv, startService } from "../support/service-process.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function json(url: string, method: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(url, { method, headers: { "content-type": "application/json", ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

describe("seal key at service start-up", () => {
  test("the first start generates DATA_DIR/seal-key.json with mode 0600; the next start reuses it and opens what the first sealed", async () => {
    const dataDir = await copyOfTemplate(); // a migrated database, so start-up is quick
    dirs.push(dataDir);
    const keyFile = join(dataDir, "seal-key.json");
    expect(existsSync(keyFile)).toBe(false);

    const first = await startService({ DATA_DIR: dataDir }, 20_000);
    const secret = `startup-secret-${randomBytes(16).toString("hex")}`;
    let agentId: string;
    try {
      const generated = first.lines.map((l) => JSON.parse(l)).find((j) => String(j.msg).includes("seal key pair generated"));
      expect(generated?.level).toBe("warn");
      expect(generated?.path).toBe(keyFile);
      if (process.platform !== "win32") expect(statSync(keyFile).mode & 0o777).toBe(0o600);

      const org = await json(`${first.url}/v1/orgs`, "POST", { name: "startup" }, { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect(org.status).toBe(201);
      const key = { "x-api-key": org.body.api_key.key };
      const agent = await json(`${first.url}/v1/agents`, "POST", { wallet_address: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" }, key);
      expect(agent.status).toBe(201);
      agentId = agent.body.id;
      const creds = await json(`${first.url}/v1/agents/${agentId}/creds`, "POST", { api_key: "startup-api-key-0001", api_secret: secret, scopes: ["order:place"] }, key);
      expect(creds.status).toBe(200);
      expect(creds.body.mode).toBe("delegated");
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const keyBytes = readFileSync(keyFile);
    expect(first.lines.join("\n")).not.toContain(secret);

    const second = await startService({ DATA_DIR: dataDir }, 20_000);
    try {
      expect(second.lines.some((l) => l.includes("seal key pair generated"))).toBe(false);
      expect(second.lines.some((l) => JSON.parse(l).level === "warn" && l.includes("seal key"))).toBe(false);
      expect(readFileSync(keyFile).equals(keyBytes)).toBe(true);
      expect((await fetch(`${second.url}/healthz`)).status).toBe(200);
    } finally {
      expect(await second.stop()).toBe(0);
    }

    // The ciphertext stored by the first life opens with the key file both lives used.
    const database = await openDatabase({ kind: "pglite", dataDir });
    try {
      const [row] = await database.db.select().from(credentials).where(eq(credentials.agentId, agentId!));
      const vault = new CredentialVault(await loadOrCreateSealKeyPair({ dataDir }));
      expect(await vault.withOpened(new Uint8Array(row.ciphertext), async (c) => c.api_secret)).toBe(secret);
    } finally {
      await database.close();
    }
  }, 60_000);

  test("a SEAL_SECRET_KEY of the wrong length or a missing SEAL_KEY_FILE stops start-up with exit code 2 and a clear message", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ SEAL_SECRET_KEY: Buffer.alloc(31, 9).toString("base64") }, "SEAL_SECRET_KEY must decode to 32 bytes"],
      [{ SEAL_KEY_FILE: "/nonexistent/seal.json" }, "SEAL_KEY_FILE (/nonexistent/seal.json) does not exist"],
    ];
    for (const [extra, message] of cases) {
      const dataDir = `/tmp/seal-startup-${randomBytes(6).toString("hex")}`;
      dirs.push(dataDir);
      const proc = Bun.spawn(["bun", MAIN], { env: serviceEnv({ DATA_DIR: dataDir, ...extra }), stdout: "pipe", stderr: "pipe" });
      expect(await proc.exited).toBe(2);
      const stderr = await new Response(proc.stderr).text();
      expect(stderr).toContain(`configuration error: ${message}`);
      if (extra.SEAL_SECRET_KEY) expect(stderr).not.toContain(extra.SEAL_SECRET_KEY);
      // Stopped before anything was created: no database, no generated key.
      expect(existsSync(join(dataDir, "pg"))).toBe(false);
      expect(existsSync(join(dataDir, "seal-key.json"))).toBe(false);
    }
  }, 30_000);
});
