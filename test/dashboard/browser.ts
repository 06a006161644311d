/**
 * Headless Chromium for the dashboard suites: Debian's `chromium` package (installed by .ci/run
 * when missing), driven by playwright-core. A missing browser fails the suite: it never skips.
 * openDashboard serves the service on a loopback port and opens a page on it; signIn signs in there.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
/** Screenshots of each view, kept for review. */
export const SCREENSHOTS = resolve(import.meta.dir, "../../test-output/dashboard");

export async function launchChromium(): Promise<{ browser: Browser; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}: apt-get install -y chromium (.ci/run does this)`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    browser,
    async close() {
      // playwright-core launches on a fresh temporary profile (--user-data-dir) and removes it on close.
      await browser.close().catch(() => undefined);
    },
  };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Collects what must not happen on the page: script errors, console errors, failed requests and
 * error answers. `allowed(url, status)` names expected answers (the event stream's 404 when the
 * service has none, which switches the page to polling).
 */
export function watchPage(page: Page, allowed: (url: string, status: number) => boolean) {
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(`script error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    const url = m.location()?.url ?? "";
    // Chromium reports every error answer on the console too; answers are judged below.
    if (m.text().startsWith("Failed to load resource") && url) return;
    problems.push(`console error: ${m.text()}`);
  });
  page.on("requestfailed", (r) => {
    const reason = r.failure()?.errorText ?? "";
    // A stream the page aborts itself (sign-out, closing) is not a failure.
    if (reason === "net::ERR_ABORTED" && new URL(r.url()).pathname === "/v1/events") return;
    problems.push(`request failed: ${r.method()} ${r.url()} ${reason}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400 && !allowed(r.url(), r.status())) problems.push(`error answer: ${r.request().method()} ${r.url()} → ${r.status()}`);
  });
  return problems;
}

/** The service on a loopback port and a page of headless Chromium on it (openDashboard). */
export interface DashboardSession {
  server: ReturnType<typeof Bun.serve>;
  /** `http://127.0.0.1:<port>` */
  base: string;
  page: Page;
  /** What went wrong on the page (watchPage): no error answer is allowed. */
  problems: string[];
  /** Closes the browser, then stops the server. */
  close(): Promise<void>;
}

/**
 * Serves `fetch` (the service's app.handle, or the suite's wrapper of it) on 127.0.0.1 with the
 * idle timeout outlasting the event stream's keepalive, as main.ts does, so the live stream is never
 * cut; launches Chromium and opens a 1280×900 page whose actions time out after 10 s, granted
 * `permissions` (e.g. the clipboard's) on the server's origin.
 */
export async function openDashboard(fetch: (request: Request) => Response | Promise<Response>, o: { permissions?: string[] } = {}): Promise<DashboardSession> {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", idleTimeout: 60, fetch });
  const base = `http://127.0.0.1:${server.port}`;
  let chromium: Awaited<ReturnType<typeof launchChromium>> | undefined;
  try {
    chromium = await launchChromium();
    const context = await chromium.browser.newContext({ viewport: { width: 1280, height: 900 } });
    if (o.permissions) await context.grantPermissions(o.permissions, { origin: base });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const problems = watchPage(page, () => false);
    const browser = chromium;
    return {
      server,
      base,
      page,
      problems,
      async close() {
        await browser.close();
        server.stop(true);
      },
    };
  } catch (error) {
    await chromium?.close();
    server.stop(true);
    throw error;
  }
}

/** Signs in on the page shown with the API key `key`. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.locator("#api-key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
}
