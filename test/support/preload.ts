/**
 * Runs before any suite (bunfig.toml `[test] preload`):
 * - the default time-out of a test and of a hook, 30 s: Bun's own is 5 s, and bunfig.toml has no key
 *   for it (a `timeout` there was never read); a test that starts servers and waits out a kill
 *   deadline could fail now and then on a loaded machine;
 * - the migrated PGlite template, which takes seconds on a fresh clone or after a new migration, so
 *   that no suite's `beforeAll` pays for it.
 */
import { setDefaultTimeout } from "bun:test";
import { templateDir } from "./databases.ts";

setDefaultTimeout(30_000);
await templateDir();
