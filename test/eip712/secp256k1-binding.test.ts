/**
 * The signature backend is libsecp256k1's native binding, loaded directly: never the `secp256k1`
 * package's index.js (which falls back silently to the JS `elliptic`), and a binding that cannot
 * load makes start-up fail with a message that says so.
 */
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { assertSignatureBackend, secp256k1 } from "../../src/eip712/secp256k1.ts";

const SRC = resolve(import.meta.dir, "../../src");

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : p.endsWith(".ts") ? [p] : [];
  });
}

describe("secp256k1 backend", () => {
  test("the binding is the native addon (its methods are native code) and start-up's check passes", () => {
    expect(() => assertSignatureBackend()).not.toThrow();
    const b = secp256k1();
    expect(b.constructor.name).toMatch(/^Secp256k1/);
    expect(Function.prototype.toString.call(b.ecdsaRecover)).toContain("[native code]");
    expect(Function.prototype.toString.call(b.ecdsaVerify)).toContain("[native code]");
  });

  test("no source file imports the package's index.js (its silent fallback to elliptic) or elliptic", () => {
    for (const file of filesUnder(SRC)) {
      const text = readFileSync(file, "utf8");
      expect(text, file).not.toMatch(/from\s+["']secp256k1["']|require\(\s*["']secp256k1["']\s*\)|["']secp256k1\/elliptic|["']elliptic["']/);
    }
  });

  test("a binding that cannot load stops start-up with a clear message, and signature checks throw", () => {
    // The loader alone, where the package cannot be resolved (and Bun may not auto-install it).
    const dir = mkdtempSync(join(tmpdir(), "secp-load-"));
    try {
      copyFileSync(join(SRC, "eip712/secp256k1.ts"), join(dir, "secp256k1.ts"));
      const run = Bun.spawnSync({
        cmd: [process.execPath, "--no-install", "-e", `const m = await import(${JSON.stringify(join(dir, "secp256k1.ts"))}); m.assertSignatureBackend();`],
        cwd: dir,
        stderr: "pipe",
        stdout: "pipe",
      });
      const err = run.stderr.toString();
      expect(run.exitCode).not.toBe(0);
      expect(err).toContain("SignatureBackendError");
      expect(err).toContain("the native libsecp256k1 binding (package secp256k1) could not be loaded");
      expect(err).toContain("no slow fallback");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
