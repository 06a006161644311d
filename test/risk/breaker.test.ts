import { describe, expect, test } from "bun:test";
import { checkBreaker } from "../../src/risk/checks/breaker.ts";
import { input } from "./fixtures.ts";

describe("breaker check", () => {
  test("passes while the breaker is closed", () => {
    expect(checkBreaker(input())).toEqual([]);
  });

  for (const reason of ["kill", "manual", "venue_errors"]) {
    test(`fails with breaker_tripped when tripped (${reason})`, () => {
      const failures = checkBreaker(input({ state: { breaker: { tripped: true, reason } } }));
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({ check: "breaker", code: "breaker_tripped", limit: null, actual: null });
      expect(failures[0].message).toContain(reason);
    });
  }

  test("a tripped breaker without a reason still fails", () => {
    const failures = checkBreaker(input({ state: { breaker: { tripped: true, reason: null } } }));
    expect(failures.map((f) => f.code)).toEqual(["breaker_tripped"]);
  });

  test("fails for sells as for buys", () => {
    const failures = checkBreaker(input({ intent: { side: "sell" }, state: { breaker: { tripped: true, reason: "kill" } } }));
    expect(failures.map((f) => f.code)).toEqual(["breaker_tripped"]);
  });
});
