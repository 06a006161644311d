/**
 * A real chain for tests: Anvil from npm (@foundry-rs/anvil ships its binary inside the platform
 * package), started on a free port, one per test file. `rpc` calls its JSON-RPC (anvil_mine,
 * evm_snapshot, evm_revert, …).
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export interface Anvil {
  url: string;
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Mines `n` blocks. */
  mine(n: number): Promise<void>;
  blockNumber(): Promise<bigint>;
  stop(): Promise<void>;
}

/** The anvil binary of this platform, from the npm package. */
export function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const wrapper = dirname(require.resolve("@foundry-rs/anvil/package.json"));
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  return join(dirname(createRequire(join(wrapper, "package.json")).resolve(`${pkg}/package.json`)), "bin", "anvil");
}

export async function startAnvil(): Promise<Anvil> {
  const child = Bun.spawn([anvilBinary(), "--port", "0", "--host", "127.0.0.1"], { stdout: "pipe", stderr: "ignore" });
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  const deadline = Date.now() + 20_000;
  let url: string | null = null;
  while (!url) {
    if (Date.now() > deadline) throw new Error(`anvil did not start: ${out}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`anvil exited: ${out}`);
    out += decoder.decode(value, { stream: true });
    const m = /Listening on (\S+:\d+)/.exec(out);
    if (m) url = `http://${m[1]}`;
  }
  // Keep draining its output so it never blocks on a full pipe.
  void (async () => {
    try {
      while (!(await reader.read()).done);
    } catch {
      // closed
    }
  })();
  let id = 0;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }) });
    const body = (await res.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  return {
    url,
    rpc,
    mine: async (n) => {
      await rpc("anvil_mine", [`0x${n.toString(16)}`]);
    },
    blockNumber: async () => BigInt(await rpc<string>("eth_blockNumber")),
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}
