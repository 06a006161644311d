/** Polls `get` (every `every` ms) until it answers a truthy value, which it returns; throws after `ms` naming `what`. */
export async function until<T>(what: string, get: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 5000, every = 10): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const v = await get();
    if (v) return v;
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(every);
  }
}
