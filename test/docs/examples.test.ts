/**
 * Every TypeScript example of the README, docs/*.md and the packages' READMEs (the fenced ```ts and
 * ```typescript blocks), extracted from the markdown as written: all are type-checked with the
 * project's tsc against the SDK's types (no cast needed), and each is run with bun against the live
 * service, placeholders aside (the base URL, `<token id>`), with the environment it names. A block
 * that cannot run here must be listed in NOT_RUN with the reason; none is skipped silently.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { Webhook } from "standardwebhooks";
import { generatePrivateKey } from "viem/accounts";
import type { BrokerClient } from "../../packages/sdk/src/client.ts";
import { X402_ENV } from "../payments/x402-support.ts";
import { sharedPglite } from "../support/databases.ts";
import { DEM_YES } from "../support/payload.ts";
import { newOrgClient, serveTestApp, type LiveService } from "../sdk/serve.ts";

const ROOT = resolve(import.meta.dir, "../..");
const OUT = join(ROOT, "test-output/doc-examples");

export interface DocBlock {
  /** e.g. "README.md#1": the file and the block's rank among its TypeScript blocks. */
  id: string;
  file: string;
  line: number;
  code: string;
}

/** The fenced ```ts / ```typescript blocks of a markdown text, in order. */
export function typescriptBlocks(file: string, markdown: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i]!)) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    if (end === lines.length) throw new Error(`${file}:${i + 1}: unclosed code block`);
    blocks.push({ id: `${file}#${blocks.length + 1}`, file, line: i + 1, code: lines.slice(start, end).join("\n") });
    i = end;
  }
  return blocks;
}

function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`);
  const packages = readdirSync(join(ROOT, "packages")).map((p) => `packages/${p}/README.md`).filter((f) => {
    try {
      readFileSync(join(ROOT, f));
      return true;
    } catch {
      return false;
    }
  });
  return ["README.md", ...docs.sort(), ...packages.sort()];
}

const BLOCKS = markdownFiles().flatMap((f) => typescriptBlocks(f, readFileSync(join(ROOT, f), "utf8")));
/** Blocks that are type-checked but cannot run here, with the reason. None today. */
const NOT_RUN: Record<string, string> = {};

/** A port nothing listens on now (the example's server takes it). */
function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(null) });
  const port = s.port!;
  return s.stop(true).then(() => port);
}

const slug = (id: string) => id.replace(/[^A-Za-z0-9]+/g, "-");

describe("TypeScript examples of the docs", () => {
  test("the docs have TypeScript examples: the README's, docs/sdk.md's and docs/x402.md's at least", () => {
    const ids = BLOCKS.map((b) => b.id);
    expect(ids).toContain("README.md#1");
    expect(ids).toContain("docs/sdk.md#1");
    expect(ids).toContain("docs/x402.md#1");
    for (const id of Object.keys(NOT_RUN)) expect(ids).toContain(id);
  });

  test("every block type-checks with tsc as written (and an un-narrowed intent answer does not)", () => {
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    const files: string[] = [];
    for (const b of BLOCKS) {
      const f = join(OUT, `${slug(b.id)}.ts`);
      writeFileSync(f, `// ${b.file}:${b.line}\n${b.code}\nexport {};\n`);
      files.push(relative(OUT, f));
    }
    // The control: signAndSubmit takes a payload-mode answer; placeIntent's answer before narrowing on
    // `mode` may be a delegated one, so this must not compile.
    writeFileSync(
      join(OUT, "control-unnarrowed.ts"),
      [
        `import { BrokerClient } from "@agent-brokerage/sdk";`,
        `import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";`,
        `const broker = new BrokerClient({ baseUrl: "http://localhost:8080" });`,
        `const answer = await broker.placeIntent({ agent_id: "agt_x", market_id: "1", side: "buy", size_usdc: 5, price: 0.5 });`,
        `await broker.signAndSubmit(answer, privateKeyToAccount(generatePrivateKey()));`,
        `export {};`,
      ].join("\n"),
    );
    files.push("control-unnarrowed.ts");
    writeFileSync(join(OUT, "tsconfig.json"), JSON.stringify({ extends: "../../tsconfig.json", include: [], files }, null, 2));
    const run = Bun.spawnSync([join(ROOT, "node_modules/.bin/tsc"), "-p", join(OUT, "tsconfig.json"), "--pretty", "false"], { cwd: ROOT });
    const out = run.stdout.toString() + run.stderr.toString();
    const errors = out.split("\n").filter((l) => /error TS\d+/.test(l));
    const fromDocs = errors.filter((l) => !l.includes("control-unnarrowed.ts"));
    expect(fromDocs).toEqual([]);
    const fromControl = errors.filter((l) => l.includes("control-unnarrowed.ts"));
    expect(fromControl).toHaveLength(1);
    expect(fromControl[0]).toMatch(/control-unnarrowed\.ts\(5,28\): error TS2345: Argument of type 'IntentAnswer' is not assignable to parameter of type 'SignableAnswer'/);
  }, 60_000);
});

describe("TypeScript examples of the docs, run against the live service", () => {
  let live: LiveService;
  let paying: LiveService;
  beforeAll(async () => {
    live = await serveTestApp(await sharedPglite());
    paying = await serveTestApp(await sharedPglite(), { env: X402_ENV });
  });
  afterAll(async () => {
    await live?.stop();
    await paying?.stop();
  });

  /**
   * Runs a block with bun, its placeholders replaced. Resolves once every pattern of `expect` has been
   * printed and the process has exited; a process that follows the event stream forever is stopped
   * (SIGTERM) once `poke` (the test's own action making events, repeated each second since the
   * example's stream may not be connected yet) has shown its effect, `poke.until`.
   */
  async function run(b: DocBlock, base: string, env: Record<string, string>, o: { stdoutMatches: RegExp[]; poke?: { act: () => Promise<void>; until: RegExp } }) {
    const code = b.code.replaceAll("http://localhost:8080", base).replaceAll("<token id>", DEM_YES).replace(/"7132…"/g, JSON.stringify(DEM_YES));
    const file = join(OUT, `run-${slug(b.id)}.ts`);
    mkdirSync(OUT, { recursive: true });
    writeFileSync(file, `${code}\nexport {};\n`);
    const proc = Bun.spawn([process.execPath, file], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
    const stderr = new Response(proc.stderr).text();
    const reader = proc.stdout.getReader();
    const decoder = new TextDecoder();
    let out = "";
    let exited = false;
    void proc.exited.then(() => (exited = true));
    const deadline = Date.now() + 30_000;
    // One read in flight at a time: a read that lost the race to the timer is awaited next time round.
    let pending: ReturnType<typeof reader.read> | null = null;
    let ended = false;
    let lastPoke = 0;
    const waitFor = async (patterns: RegExp[], poke?: () => Promise<void>) => {
      while (!patterns.every((p) => p.test(out))) {
        if (poke && Date.now() - lastPoke >= 1000) {
          lastPoke = Date.now();
          await poke();
        }
        if (Date.now() > deadline) throw new Error(`${b.id}: no ${patterns.filter((p) => !p.test(out)).join(", ")} within 30 s:\n${out}\n${await stderr}`);
        if (ended) throw new Error(`${b.id} exited (${await proc.exited}) without ${patterns.filter((p) => !p.test(out)).join(", ")}:\n${out}\n${await stderr}`);
        pending ??= reader.read();
        const next = await Promise.race([pending, Bun.sleep(200).then(() => null)]);
        if (next) pending = null;
        if (next?.done) {
          ended = true;
          if (!patterns.every((p) => p.test(out))) throw new Error(`${b.id} exited (${await proc.exited}) without ${patterns.filter((p) => !p.test(out)).join(", ")}:\n${out}\n${await stderr}`);
          break;
        }
        if (next?.value) out += decoder.decode(next.value, { stream: true });
      }
    };
    try {
      await waitFor(o.stdoutMatches);
      if (o.poke) await waitFor([o.poke.until], o.poke.act);
      // An example that ends by itself is given time to; one that follows the stream forever is stopped.
      else await Promise.race([proc.exited, Bun.sleep(15_000)]);
    } finally {
      if (!exited) proc.kill("SIGTERM");
    }
    const exitCode = await proc.exited;
    // Read what is left, so stdout is complete.
    while (!ended) {
      const next = await (pending ?? reader.read());
      pending = null;
      if (next.done) break;
      out += decoder.decode(next.value, { stream: true });
    }
    return { out, err: await stderr, exitCode };
  }

  /** The first agent of the organization behind `client` (the one the example created). */
  async function onlyAgent(client: BrokerClient) {
    const agents = (await client.listAgents()).data;
    expect(agents).toHaveLength(1);
    return agents[0]!;
  }

  for (const b of BLOCKS) {
    if (NOT_RUN[b.id]) continue;
    test(`${b.id} (line ${b.line}) runs as written`, async () => {
      const wallet = generatePrivateKey();
      if (b.code.includes("@x402/fetch")) {
        // Pays per request with x402: an anonymous agent whose wallet is the paying one (local verifier).
        const r = await run(b, paying.url, { AGENT_KEY: wallet }, { stdoutMatches: [/status: "(open|filled)"/] });
        expect(r.exitCode).toBe(0);
        return;
      }
      if (b.code.includes("new BrokerClient(")) {
        const { client, key } = await newOrgClient(live.url);
        const follows = b.code.includes("broker.events(");
        const r = await run(
          b,
          live.url,
          { BROKER_API_KEY: key, WALLET_KEY: wallet },
          {
            stdoutMatches: [/status: "(open|filled)"/],
            // The example then follows the agent's events forever: tripping and resuming the agent's
            // breaker makes `breaker` events, which it prints.
            poke: follows
              ? {
                  act: async () => {
                    const agent = await onlyAgent(client);
                    if (agent.breaker.state === "tripped") await client.resume(agent.id);
                    else await client.tripBreaker(agent.id);
                  },
                  until: /^breaker \{/m,
                }
              : undefined,
          },
        );
        if (!follows) expect(r.exitCode).toBe(0);
        expect(r.err).not.toMatch(/error/i);
        const agent = await onlyAgent(client);
        const orders = (await client.listOrders({ agent_id: agent.id })).data;
        expect(orders).toHaveLength(1);
        expect(["open", "filled", "cancelled"]).toContain(orders[0]!.status);
        return;
      }
      if (b.code.includes("wh.verify(")) {
        // The webhook receiver: messages signed with the same library and secret, a forged one, a repeat.
        const secret = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64")}`;
        const port = await freePort();
        const signer = new Webhook(secret);
        const post = (id: string, body: string, signature?: string) => {
          const ts = new Date();
          return fetch(`http://127.0.0.1:${port}/`, {
            method: "POST",
            headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(Math.floor(ts.getTime() / 1000)), "webhook-signature": signature ?? signer.sign(id, ts, body) },
            body,
          });
        };
        const statuses: number[] = [];
        const body = JSON.stringify({ id: null, type: "webhook_test", timestamp: new Date().toISOString(), agent_id: null, data: { webhook_id: "whk_x", message: "a test message" } });
        const r = await run(
          b,
          "",
          { BROKERAGE_WEBHOOK_SECRET: secret, PORT: String(port) },
          {
            stdoutMatches: [/listening/],
            poke: {
              act: async () => {
                statuses.push((await post("msg_forged", body, "v1,AAAA")).status);
                statuses.push((await post("msg_test_1", body)).status, (await post("msg_test_1", body)).status);
              },
              until: /^webhook_test msg_test_1$/m,
            },
          },
        );
        expect(statuses.slice(0, 3)).toEqual([400, 204, 204]);
        expect(r.out.match(/msg_test_1/g)).toHaveLength(1);
        expect(r.out).not.toContain("msg_forged");
        return;
      }
      throw new Error(`${b.id}: no way to run this block is known: teach this test to run it, or list it in NOT_RUN with the reason`);
    }, 60_000);
  }
});
