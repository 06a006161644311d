/**
 * One process at a time on an embedded database directory. PGlite has no server: two processes
 * opening the same directory each run their own Postgres over the same files, and what one writes
 * the other neither sees nor keeps (a CLI's new API key unknown to the running service, then gone
 * after its restart). So whoever opens the directory first takes an exclusive lock file beside it
 * (`<dir>.lock`, holding its pid); a second process is refused with a message saying what to do.
 * A lock whose pid is no longer running (a crash, SIGKILL) is stale and taken over.
 */
import { closeSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";

export class DataDirLockedError extends Error {
  override name = "DataDirLockedError";
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `the embedded database in ${dir} is in use by another process (pid ${pid}); only one process may open it at a time. ` +
        `While the service runs, use its API instead (for example POST /v1/orgs with the ADMIN_TOKEN bearer token instead of "bun run cli org create"), ` +
        `or stop that process first; to run a second service, give it its own DATA_DIR or a DATABASE_URL.`,
    );
  }
}

export interface DataDirLock {
  readonly path: string;
  /** Removes the lock file if it is still ours. */
  release(): void;
}

/** Takes the lock of the database directory `dir`, or throws DataDirLockedError. */
export function acquireDataDirLock(dir: string): DataDirLock {
  const path = `${dir.replace(/[\\/]+$/, "")}.lock`;
  const me = process.pid;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      try {
        writeSync(fd, `${me}\n`);
      } finally {
        closeSync(fd);
      }
      return {
        path,
        release() {
          if (readPid(path) === me) unlinkQuietly(path);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = readPid(path);
    if (holder === null && attempt < 2) {
      // Being written this instant by another process: look again shortly.
      Bun.sleepSync(20);
      continue;
    }
    // Still empty after that: left by a process that died between creating and writing it.
    if (holder !== null && isRunning(holder)) throw new DataDirLockedError(dir, holder);
    // Stale: move it aside atomically (only one contender's rename succeeds), then try again.
    const aside = `${path}.stale.${me}`;
    try {
      renameSync(path, aside);
    } catch {
      continue;
    }
    const moved = readPid(aside);
    if (moved !== holder && moved !== null && isRunning(moved)) {
      // A live lock was taken between our read and our rename: put it back.
      renameSync(aside, path);
      throw new DataDirLockedError(dir, moved);
    }
    unlinkQuietly(aside);
  }
  const holder = readPid(path);
  throw new DataDirLockedError(dir, holder ?? -1);
}

function readPid(path: string): number | null {
  try {
    const text = readFileSync(path, "utf8").trim();
    return /^\d+$/.test(text) ? Number(text) : null;
  } catch {
    return null;
  }
}

/** Whether a process with this pid exists (EPERM: it exists but belongs to another user). */
function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
