/**
 * One process at a time on an embedded database directory (issue 15.3): the CLI run while the
 * service holds DATA_DIR is refused with a message naming the fix, and writes nothing; a second
 * service is refused too; a lock left by a dead process is taken over; what the CLI wrote while
 * it held the directory survives the service's restart.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { acquireDataDirLock, DataDirLockedError } from "../../src/db/data-dir-lock.ts";
import { ADMIN_TOKEN, runCli, startService } from "../support/service-process.ts";

const dirs: string[] = [];
const newDir = () => {
  const d = mkdtempSync(join(tmpdir(), "brokerage-lock-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const p = Bun.spawn(["true"]);
  await p.exited;
  return p.pid;
}

describe("the lock file", () => {
  test("a second acquire is refused while the first holds it; release frees it; the lock holds the pid", () => {
    const dir = join(newDir(), "pg");
    const lock = acquireDataDirLock(dir);
    expect(readFileSync(lock.path, "utf8").trim()).toBe(String(process.pid));
    const err = (() => {
      try {
        acquireDataDirLock(dir);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(DataDirLockedError);
    expect((err as DataDirLockedError).pid).toBe(process.pid);
    lock.release();
    expect(existsSync(lock.path)).toBe(false);
    acquireDataDirLock(dir).release();
  });

  test("a lock whose pid is gone, or an empty one, is stale and taken over", async () => {
    const dir = join(newDir(), "pg");
    writeFileSync(`${dir}.lock`, `${await deadPid()}\n`);
    const lock = acquireDataDirLock(dir);
    expect(readFileSync(lock.path, "utf8").trim()).toBe(String(process.pid));
    lock.release();
    writeFileSync(`${dir}.lock`, "");
    acquireDataDirLock(dir).release();
  });
});

describe("two real processes on one DATA_DIR", () => {
  test("the CLI is refused while the service runs, writes nothing, and works once the service stopped; its key survives a restart", async () => {
    const dataDir = newDir();
    const service = await startService({ DATA_DIR: dataDir });
    let created: any;
    try {
      const refused = await runCli(["org", "create", "--name", "while running"], { DATA_DIR: dataDir });
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toContain(`in use by another process (pid ${service.pid})`);
      expect(refused.stderr).toContain("POST /v1/orgs");
      expect(refused.stderr).not.toContain("    at "); // no stack trace

      // A second service is refused the same way; the first keeps serving.
      const second = await startService({ DATA_DIR: dataDir }).catch((e: Error) => e);
      expect(second).toBeInstanceOf(Error);
      expect(String((second as Error).message)).toContain("in use by another process");

      const viaApi = await fetch(`${service.url}/v1/orgs`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ name: "via the API" }),
      });
      expect(viaApi.status).toBe(201);
    } finally {
      expect(await service.stop()).toBe(0);
    }
    expect(existsSync(join(dataDir, "pg.lock"))).toBe(false);

    const cli = await runCli(["org", "create", "--name", "after stop"], { DATA_DIR: dataDir });
    expect(cli.code).toBe(0);
    created = JSON.parse(cli.stdout);
    expect(created.api_key.key).toStartWith("bk_");

    const again = await startService({ DATA_DIR: dataDir });
    try {
      const res = await fetch(`${again.url}/v1/api-keys`, { headers: { "x-api-key": created.api_key.key } });
      expect(res.status).toBe(200);
      // Only the organizations created through a process that held the lock exist.
      const orgs = await runCli(["org", "create", "--name", "refused again"], { DATA_DIR: dataDir });
      expect(orgs.code).toBe(1);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  }, 90_000);

  test("a lock left by a killed service does not stop the next start", async () => {
    const dataDir = newDir();
    const first = await startService({ DATA_DIR: dataDir });
    first.signal("SIGKILL");
    await first.exited;
    expect(readFileSync(join(dataDir, "pg.lock"), "utf8").trim()).toBe(String(first.pid));
    const next = await startService({ DATA_DIR: dataDir });
    expect(readFileSync(join(dataDir, "pg.lock"), "utf8").trim()).toBe(String(next.pid));
    expect(await next.stop()).toBe(0);
  }, 60_000);
});
