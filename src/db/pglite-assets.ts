/**
 * PGlite's WebAssembly modules and file-system bundle, imported as files so
 * `bun build --compile` embeds them in the binary (PGlite would otherwise look
 * for them next to its own module, which a compiled binary does not have).
 */
import dataPath from "../../node_modules/@electric-sql/pglite/dist/pglite.data" with { type: "file" };
import wasmPath from "../../node_modules/@electric-sql/pglite/dist/pglite.wasm" with { type: "file" };
import initdbPath from "../../node_modules/@electric-sql/pglite/dist/initdb.wasm" with { type: "file" };

let assets: Promise<{ fsBundle: Blob; pgliteWasmModule: WebAssembly.Module; initdbWasmModule: WebAssembly.Module }> | null = null;

export function pgliteAssets() {
  assets ??= (async () => {
    const [fsBundle, wasm, initdb] = await Promise.all([
      Bun.file(dataPath).arrayBuffer().then((b) => new Blob([b])),
      Bun.file(wasmPath).arrayBuffer(),
      Bun.file(initdbPath).arrayBuffer(),
    ]);
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([WebAssembly.compile(wasm), WebAssembly.compile(initdb)]);
    return { fsBundle, pgliteWasmModule, initdbWasmModule };
  })();
  return assets;
}
