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
