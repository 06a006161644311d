import { expect, test } from "bun:test";
import { idPattern, newId } from "../../src/domain/ids.ts";

test("ids carry their prefix and match the published pattern", () => {
  for (const p of ["org", "key", "agt", "ord", "dec", "kil"] as const) {
    expect(newId(p)).toMatch(new RegExp(idPattern(p)));
  }
});

test("ids made one after another sort in creation order, also within one millisecond", () => {
  const now = Date.now() + 10_000;
  const ids = Array.from({ length: 5000 }, () => newId("ord", now));
  expect(new Set(ids).size).toBe(ids.length);
  expect([...ids].sort()).toEqual(ids);
  const later = newId("ord", now + 1);
  expect(later > ids[ids.length - 1]).toBe(true);
});

test("the time part is base 36 of milliseconds × 4096 + the sequence, exactly", () => {
  const ms = Date.now() + 20_000;
  const first = newId("ord", ms);
  const second = newId("ord", ms);
  expect(first.slice(4, 15)).toBe((BigInt(ms) * 4096n).toString(36).padStart(11, "0"));
  expect(second.slice(4, 15)).toBe((BigInt(ms) * 4096n + 1n).toString(36).padStart(11, "0"));
  for (const t of [1_700_000_000_000, 2_000_000_000_123, 2_199_023_255_551]) expect(((t * 4096) as number).toString(36)).toBe((BigInt(t) * 4096n).toString(36));
});

test("the random part varies over many ids", () => {
  const rands = new Set(Array.from({ length: 3000 }, () => newId("dec").slice(15)));
  expect(rands.size).toBeGreaterThan(2990);
});
