/**
 * Runs before any suite (bunfig.toml `[test] preload`): makes the migrated PGlite template, which takes
 * seconds on a fresh clone or after a new migration, so that no suite's `beforeAll` pays for it.
 *
 * The 30 s default time-out of tests and hooks is `bun test --timeout 30000` (README, package.json,
 * .ci/run). bunfig.toml has no key for it, and `setDefaultTimeout` here covered only the first test
 * file of a run (Bun 1.4.5: it sets the default "for the current file"); every later file ran under
 * Bun's 5 s, which a kill-and-restart suite exceeded under load.
 */
import { templateDir } from "./databases.ts";

await templateDir();
