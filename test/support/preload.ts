/**
 * Runs before any suite (bunfig.toml `[test] preload`): makes the migrated PGlite template, which
 * takes seconds on a fresh clone or after a new migration, so that no suite's `beforeAll` pays for it
 * under its hook time-out.
 */
import { templateDir } from "./databases.ts";

await templateDir();
