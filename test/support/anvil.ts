/**
 * A real chain for tests: Anvil from npm (@foundry-rs/anvil ships its binary inside the platform
 * package), started on a free port, one per test file. `rpc` calls its JSON-RPC (anvil_mine,
 * evm_snapshot, evm_revert, …).
 */
import { spawn, type ChildProcess } from "node:child_process";
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
  const child: ChildProcess = spawn(anvilBinary(), ["--port", "0", "--host", "127.0.0.1"], { stdio: ["ignore", "pipe", "pipe"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`anvil did not start: ${out}`)), 20_000);
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /Listening on (\S+:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`http://${m[1]}`);
      }
    });
    child.on("exit", (code) => reject(new Error(`anvil exited (${code}): ${out}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
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
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
