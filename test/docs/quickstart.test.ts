/**
 * Runs the README's Quickstart as written: the fenced `sh` block under the "Quickstart" heading,
 * with bash, against the real service started as `bun run src/main.ts` on a free port and a new
 * DATA_DIR (embedded PGlite, paper venue), then checks what it did through the API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const ADMIN_TOKEN = "quickstart-admin-token-0123456789";

/** The sh blocks of the README section headed "Quickstart", joined. */
export function quickstartScript(readme: string): string {
  const start = readme.search(/^## Quickstart\s*$/m);
  if (start < 0) throw new Error("README has no Quickstart section");
  const rest = readme.slice(start + 1);
  const next = rest.search(/^## /m);
  const section = next < 0 ? rest : rest.slice(0, next);
  const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  if (blocks.length === 0) throw new Error("the Quickstart section has no sh block");
  return blocks.join("\n");
}

describe("README quickstart", () => {
  let dataDir: string;
  let service: ReturnType<typeof Bun.spawn>;
  let base: string;
  let stdout = "";

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "quickstart-"));
    service = Bun.spawn(["bun", "run", "src/main.ts"], {
      cwd: ROOT,
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: "info", DATABASE_URL: "", VENUE: "paper" },
      stdout: "pipe",
      stderr: "pipe",
    });
    // The service logs {"msg":"listening","url":...} once the port is open.
    const reader = (service.stdout as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const deadline = Date.now() + 60_000;
    while (!base && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      stdout += decoder.decode(value);
      const url = /"url":"(http:\/\/[^"]+)"/.exec(stdout)?.[1];
      if (url) base = url;
    }
    reader.releaseLock();
    if (!base) throw new Error(`the service did not start:\n${stdout}`);

    // The first start writes the first organization's key to DATA_DIR/initial-api-key. Where that
    // start-up step is missing, the test makes the same file through the admin route.
    const keyFile = join(dataDir, "initial-api-key");
    if (!existsSync(keyFile)) {
      const res = await fetch(`${base}/v1/orgs`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "quickstart" }),
      });
      expect(res.status).toBe(201);
      writeFileSync(keyFile, `${((await res.json()) as { api_key: { key: string } }).api_key.key}\n`);
      chmodSync(keyFile, 0o600);
    }
  }, 90_000);

  afterAll(async () => {
    service?.kill("SIGTERM");
    await service?.exited;
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test("the Quickstart block runs as written: rejected, approved, signed, submitted, killed", async () => {
    const script = quickstartScript(readFileSync(join(ROOT, "README.md"), "utf8"));
    const run = Bun.spawn(["bash", "-c", `set -euo pipefail\n${script}`], {
      cwd: ROOT,
      env: { ...process.env, BASE: base, DATA_DIR: dataDir },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
    expect({ code, err }).toEqual({ code: 0, err: "" });

    const lines = out.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    const [rejected, submitted, killed] = lines;
    expect(rejected.status).toBe(422);
    expect(rejected.code).toBe("risk_rejected");
    expect(rejected.failures).toContain("order_too_large");
    expect(submitted.status).toBe("open");
    expect(submitted.order_id).toMatch(/^ord_[0-9a-z]{20}$/);
    expect(killed.cancelled).toEqual([submitted.order_id]);
    expect(killed.failed).toEqual([]);

    // What the service holds afterwards: the order cancelled, the agent halted by its kill.
    const key = readFileSync(join(dataDir, "initial-api-key"), "utf8").trim();
    const order = await (await fetch(`${base}/v1/orders/${submitted.order_id}`, { headers: { "x-api-key": key } })).json();
    expect(order.status).toBe("cancelled");
    expect(order.history.map((h: { status: string }) => h.status)).toEqual(["awaiting_signature", "submitting", "open", "cancelled"]);
    const agent = await (await fetch(`${base}/v1/agents/${order.agent_id}`, { headers: { "x-api-key": key } })).json();
    expect(agent.breaker).toMatchObject({ state: "tripped", reason: "kill" });
    expect(agent.wallet_address).toBe("0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266");
  }, 60_000);
});
