/**
 * The browser of the dashboard suites comes with the project's own dependencies: the Chromium inside
 * the npm package @sparticuz/chromium launches headless here and shows the dashboard, whether or not
 * Debian's chromium is installed (the suites prefer /usr/bin/chromium when present, see browser.ts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { createTestApp, type TestApp } from "../support/app.ts";
import { sharedPglite } from "../support/databases.ts";
import { bundledChromium, type DashboardSession, findChromium, openDashboard } from "./browser.ts";

let t: TestApp;
let dashboard: DashboardSession | undefined;

beforeAll(async () => {
  t = await createTestApp(await sharedPglite());
});
afterAll(async () => {
  await dashboard?.close();
});

test("the Chromium shipped in @sparticuz/chromium opens the dashboard's sign-in page, with no error on the page", async () => {
  const binary = bundledChromium();
  expect(binary.source).toStartWith("@sparticuz/chromium ");
  expect(existsSync(binary.executablePath)).toBe(true);
  dashboard = await openDashboard(t.app.handle, { binary });
  await dashboard.page.goto(`${dashboard.base}/dashboard`);
  await dashboard.page.locator("#api-key").waitFor({ state: "visible" });
  expect(await dashboard.page.getByRole("button", { name: "Sign in" }).isVisible()).toBe(true);
  const version = dashboard.page.context().browser()?.version() ?? "";
  expect(version).toMatch(/^\d+\./);
  expect(dashboard.problems).toEqual([]);
});

test("the suites' browser: CHROMIUM_PATH, else Debian's /usr/bin/chromium when installed, else the bundled one", () => {
  const found = findChromium();
  if (process.env.CHROMIUM_PATH) expect(found.source).toBe("CHROMIUM_PATH");
  else if (existsSync("/usr/bin/chromium")) expect(found).toEqual({ executablePath: "/usr/bin/chromium", source: "debian", env: {} });
  else expect(found.source).toStartWith("@sparticuz/chromium ");
});
