/** The real service (`bun src/main.ts`) and CLI as child processes, for tests of what only a process shows. */
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
export const MAIN = resolve(ROOT, "src/main.ts");
export const CLI = resolve(ROOT, "src/cli.ts");
export const ADMIN_TOKEN = "process-admin-token-0123456789";

export function serviceEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", PORT: "0", HOST: "127.0.0.1", ADMIN_TOKEN, LOG_LEVEL: "info", ...extra };
}

export interface ServiceProcess {
  url: string;
  pid: number;
  /** JSON log lines (and anything else written to stdout), as they come. */
  lines: string[];
  exited: Promise<number>;
  signal(sig: "SIGTERM" | "SIGINT" | "SIGKILL"): void;
  /** SIGTERM, then the exit code once the process has exited and its output is all in `lines`. */
  stop(): Promise<number>;
  stderr(): Promise<string>;
}

/** Starts the service and waits for its "listening" line; rejects with its output if it exits first. */
export async function startService(extra: Record<string, string>, timeoutMs = 30_000): Promise<ServiceProcess> {
  const proc = Bun.spawn(["bun", MAIN], { env: serviceEnv(extra), stdout: "pipe", stderr: "pipe", cwd: ROOT });
  const lines: string[] = [];
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let url: string | null = null;
  let stderrText: Promise<string> | null = null;
  const stderr = () => (stderrText ??= new Response(proc.stderr).text());
  const deadline = Date.now() + timeoutMs;
  while (!url) {
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`the service did not start: ${lines.join("\n")}`);
    }
    const { value, done } = await reader.read();
    if (done) throw new Error(`the service exited (${await proc.exited}): ${lines.join("\n")} ${await stderr()}`);
    buffered += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      try {
        const j = JSON.parse(line);
        if (j.msg === "listening") url = j.url;
      } catch {
        // not a log line
      }
    }
  }
  // Keep reading so the pipe never fills up.
  const drain = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        lines.push(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    }
  })();
  return {
    url: url!,
    pid: proc.pid,
    lines,
    exited: proc.exited,
    signal: (sig) => proc.kill(sig),
    async stop() {
      proc.kill("SIGTERM");
      const code = await proc.exited;
      await drain;
      return code;
    },
    stderr,
  };
}

/** Runs the CLI to its end. */
export async function runCli(args: string[], extra: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(["bun", CLI, ...args], { env: serviceEnv(extra), stdout: "pipe", stderr: "pipe", cwd: ROOT });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}
