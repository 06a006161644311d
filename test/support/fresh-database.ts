/** A database a suite can close and open again (a restart), and start-up jobs that stay quiet after their first pass. */
import { rmSync } from "node:fs";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { copyOfTemplate, type DbKind, postgresUrl, sharedPostgres } from "./databases.ts";

/** A database of its own that can be closed and opened again (a restart): a PGlite directory, or new PostgreSQL connections. */
export function freshDatabase(kind: DbKind): { open: () => Promise<Database>; cleanup: () => void } {
  let dir: string | null = null;
  return {
    async open() {
      if (kind === "postgres") {
        await sharedPostgres(); // migrated once per run
        return openDatabase({ kind: "postgres", url: postgresUrl!, max: 4 });
      }
      dir ??= await copyOfTemplate();
      return openDatabase({ kind: "pglite", dataDir: dir });
    },
    cleanup() {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** startJobs options whose periodic passes do not come round during a test: only the start-up work runs. */
export const QUIET_JOBS = { expireEveryMs: 3_600_000, reconcileEveryMs: 3_600_000, heartbeatEveryMs: 3_600_000, pruneEventsEveryMs: 3_600_000 };
