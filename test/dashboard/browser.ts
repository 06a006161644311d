/**
 * Headless Chromium for the dashboard suites, driven by playwright-core. The browser is, in order:
 * CHROMIUM_PATH when set; Debian's `chromium` package at /usr/bin/chromium when installed; otherwise
 * the Chromium that ships inside the `@sparticuz/chromium` devDependency (Linux x64), unpacked once
 * into node_modules/.cache with the few shared libraries a bare Debian lacks. A missing browser fails
 * the suite with what to do: it never skips.
 * openDashboard serves the service on a loopback port and opens a page on it; signIn signs in there.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

const ROOT = resolve(import.meta.dir, "../..");
const DEBIAN_CHROMIUM = "/usr/bin/chromium";
/** Screenshots of each view, kept for review. */
export const SCREENSHOTS = resolve(import.meta.dir, "../../test-output/dashboard");

export interface ChromiumBinary {
  executablePath: string;
  /** Where it came from: "CHROMIUM_PATH", "debian" or "@sparticuz/chromium". */
  source: string;
  /** Extra environment of the browser process (the bundled one's fonts and libraries). */
  env: Record<string, string>;
}

/**
 * The Chromium of the npm package @sparticuz/chromium, unpacked (brotli and tar) by the package's own
 * code in a child process whose TMPDIR is a fresh staging directory, then renamed into place, so two
 * suites starting at once never see a half-written binary.
 */
export function bundledChromium(): ChromiumBinary {
  const help = "apt-get install -y chromium, or set CHROMIUM_PATH to a Chromium or Chrome binary";
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(`No Chromium for the dashboard suites: @sparticuz/chromium ships one for Linux x64 only (this is ${process.platform}-${process.arch}). ${help}`);
  }
  let pkgJson: string;
  try {
    pkgJson = Bun.resolveSync("@sparticuz/chromium/package.json", ROOT);
  } catch {
    throw new Error(`No Chromium for the dashboard suites: /usr/bin/chromium is missing and the devDependency @sparticuz/chromium is not installed. Run \`bun install\` (or ${help})`);
  }
  const version = JSON.parse(readFileSync(pkgJson, "utf8")).version as string;
  const cache = join(ROOT, "node_modules/.cache/agent-brokerage-chromium");
  const dir = join(cache, version);
  const binary = join(dir, "chromium");
  if (!existsSync(binary)) {
    mkdirSync(cache, { recursive: true });
    const staging = mkdtempSync(join(cache, `.staging-${version}-`));
    const bin = join(dirname(pkgJson), "bin");
    const unpack = Bun.spawnSync(
      [
        process.execPath,
        "-e",
        `import c, { inflate } from "@sparticuz/chromium";
         await c.executablePath(${JSON.stringify(bin)});
         await inflate(${JSON.stringify(join(bin, "al2023.tar.br"))});`,
      ],
      { cwd: ROOT, env: { ...process.env, TMPDIR: staging }, stdout: "pipe", stderr: "pipe" },
    );
    if (unpack.exitCode !== 0 || !existsSync(join(staging, "chromium"))) {
      rmSync(staging, { recursive: true, force: true });
      throw new Error(`Unpacking @sparticuz/chromium ${version} failed (${unpack.exitCode}): ${unpack.stderr.toString()}. ${help}`);
    }
    // Fonts: the package's Open Sans and the system's, with a cache of our own (its fonts.conf names /tmp).
    writeFileSync(
      join(staging, "fonts.conf"),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(dir, "fonts")}</dir>\n  <dir>/usr/share/fonts</dir>\n  <cachedir>${join(dir, "fonts-cache")}</cachedir>\n</fontconfig>\n`,
    );
    try {
      renameSync(staging, dir);
    } catch {
      // Another suite got there first: its copy is complete (it was renamed whole).
      rmSync(staging, { recursive: true, force: true });
    }
    if (!existsSync(binary)) throw new Error(`@sparticuz/chromium ${version} was unpacked but ${binary} is missing. ${help}`);
  }
  // The binary needs only libc, libgcc and libexpat; the package's Amazon Linux libraries (libexpat,
  // NSS) stand in for the ones a minimal Debian lacks.
  const libs = join(dir, "al2023/lib");
  return {
    executablePath: binary,
    source: `@sparticuz/chromium ${version}`,
    env: {
      FONTCONFIG_FILE: join(dir, "fonts.conf"),
      LD_LIBRARY_PATH: [process.env.LD_LIBRARY_PATH, libs].filter(Boolean).join(":"),
    },
  };
}

/** The browser the dashboard suites use (see the file's head); throws with what to do when there is none. */
export function findChromium(): ChromiumBinary {
  const own = process.env.CHROMIUM_PATH;
  if (own) {
    if (!existsSync(own)) throw new Error(`CHROMIUM_PATH=${own} does not exist: unset it to use /usr/bin/chromium or the bundled @sparticuz/chromium`);
    return { executablePath: own, source: "CHROMIUM_PATH", env: {} };
  }
  if (existsSync(DEBIAN_CHROMIUM)) return { executablePath: DEBIAN_CHROMIUM, source: "debian", env: {} };
  return bundledChromium();
}

/** Launches `binary` (default: findChromium()) headless. */
export async function launchChromium(binary?: ChromiumBinary): Promise<{ browser: Browser; close(): Promise<void> }> {
  const found = binary ?? findChromium();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  const browser = await chromium.launch({
    executablePath: found.executablePath,
    headless: true,
    env: { ...env, ...found.env },
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
export async function openDashboard(
  fetch: (request: Request) => Response | Promise<Response>,
  o: { permissions?: string[]; binary?: ChromiumBinary } = {},
): Promise<DashboardSession> {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", idleTimeout: 60, fetch });
  const base = `http://127.0.0.1:${server.port}`;
  let chromium: Awaited<ReturnType<typeof launchChromium>> | undefined;
  try {
    chromium = await launchChromium(o.binary);
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
