/**
 * libsecp256k1 through the native binding that the `secp256k1` package ships (prebuilt for
 * linux-x64 glibc and musl, darwin-arm64 and win32-x64 in its npm tarball).
 *
 * The binding is required directly, never through the package's index.js: that one falls back,
 * silently, to the pure-JS `elliptic` when the addon does not load, which would make every
 * signature check many times slower without anyone noticing. Here the binding is loaded once, at
 * module load; when it does not load, start-up stops (src/main.ts calls assertSignatureBackend,
 * prints the message and exits) and every signature check throws SignatureBackendError.
 *
 * The prebuilt files are named by literal paths so that `bun build --compile` embeds them in the
 * single binary. On a platform with no prebuilt file, the package's own build (node-gyp-build,
 * which `bun install` runs for it: package.json trustedDependencies) is looked up at run time.
 */
import { createRequire } from "node:module";

/** The raw addon: every call answers a status code (0 = success), as in the package's src/secp256k1.cc. */
export interface Secp256k1Binding {
  /** Recovers into `output` (65 bytes: uncompressed 0x04 ‖ x ‖ y). 0 ok, 1 signature unparsable (r or s ≥ n), 2 no key. */
  ecdsaRecover(output: Uint8Array, sig64: Uint8Array, recid: number, msg32: Uint8Array): number;
  /** 0 valid, 1 signature unparsable, 2 public key unparsable, 3 invalid (libsecp256k1 also refuses a high s here). */
  ecdsaVerify(sig64: Uint8Array, msg32: Uint8Array, pubkey: Uint8Array): number;
}

export class SignatureBackendError extends Error {
  override name = "SignatureBackendError";
}

type AddonModule = { Secp256k1: new () => Secp256k1Binding };

function isMusl(): boolean {
  const report = (process as { report?: { getReport?: () => unknown } }).report?.getReport?.() as
    | { header?: { glibcVersionRuntime?: string } }
    | undefined;
  return report?.header !== undefined && !report.header.glibcVersionRuntime;
}

function loadAddon(): AddonModule {
  const { platform, arch } = process;
  // Literal requires: `bun build --compile` embeds each of these files.
  if (platform === "linux" && arch === "x64") {
    return isMusl()
      ? require("secp256k1/prebuilds/linux-x64/secp256k1.musl.node")
      : require("secp256k1/prebuilds/linux-x64/secp256k1.glibc.node");
  }
  if (platform === "darwin" && arch === "arm64") return require("secp256k1/prebuilds/darwin-arm64/secp256k1.node");
  if (platform === "win32" && arch === "x64") return require("secp256k1/prebuilds/win32-x64/secp256k1.node");
  // No prebuilt file: the addon that node-gyp-build compiled into the package at install time.
  const req = createRequire(import.meta.url);
  const dir = req.resolve("secp256k1/package.json").replace(/package\.json$/, "");
  return req("node-gyp-build")(dir) as AddonModule;
}

function openBinding(): Secp256k1Binding {
  let addon: AddonModule;
  try {
    addon = loadAddon();
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new SignatureBackendError(
      `the native libsecp256k1 binding (package secp256k1) could not be loaded on ${process.platform}-${process.arch}: ${why}. ` +
        "Signature checks have no slow fallback by design; reinstall the dependencies with `bun install` " +
        "(on a platform without a prebuilt addon this needs a C/C++ toolchain to build it).",
    );
  }
  if (typeof addon?.Secp256k1 !== "function") {
    throw new SignatureBackendError("the native libsecp256k1 binding loaded but exports no Secp256k1 class");
  }
  const binding = new addon.Secp256k1();
  if (typeof binding.ecdsaRecover !== "function" || typeof binding.ecdsaVerify !== "function") {
    throw new SignatureBackendError("the native libsecp256k1 binding lacks ecdsaRecover/ecdsaVerify");
  }
  return binding;
}

let binding: Secp256k1Binding | null = null;
let loadError: SignatureBackendError | null = null;
try {
  binding = openBinding();
} catch (error) {
  loadError = error instanceof SignatureBackendError ? error : new SignatureBackendError(String(error));
}

/** The one libsecp256k1 context of the process; throws SignatureBackendError when the binding did not load. */
export function secp256k1(): Secp256k1Binding {
  if (binding === null) throw loadError!;
  return binding;
}

/** Throws SignatureBackendError (with the reason) unless the native binding loaded: called at start-up. */
export function assertSignatureBackend(): void {
  secp256k1();
}

/** The group order n and ⌊n/2⌋ (the low-s bound), big-endian. */
export const N_BYTES = Uint8Array.from(Buffer.from("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", "hex"));
export const HALF_N_BYTES = Uint8Array.from(Buffer.from("7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0", "hex"));
