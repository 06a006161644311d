/**
 * Wycheproof's secp256k1 ECDSA vectors for the Bitcoin variant (low s required: the same rule as
 * our signature check), run against our verify path: for each vector, the message's SHA-256 is the
 * digest, the group's public key gives the expected Ethereum address, and r ‖ s ‖ v (v 27 and 28)
 * goes through verifyOrderSignature, which recovers with libsecp256k1's native binding. A valid
 * vector must verify with one of the two v; an invalid one with neither. The vectors whose DER
 * does not parse (zero integers) are invalid upstream and cannot reach our 65-byte form.
 *
 * The vectors are a subset of the upstream file, copied unchanged with their upstream ids
 * (test/eip712/vectors/ecdsa_secp256k1_sha256_bitcoin_test.subset.json says which and why).
 */
import { describe, expect, test } from "bun:test";
import { DER } from "@noble/curves/abstract/weierstrass";
import { secp256k1 as nobleSecp256k1 } from "@noble/curves/secp256k1";
import { sha256 } from "@noble/hashes/sha2.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { secp256k1 } from "../../src/eip712/secp256k1.ts";
import { verifyOrderSignature } from "../../src/eip712/verify-order-signature.ts";

interface Vector {
  tcId: number;
  comment: string;
  flags: string[];
  msg: string;
  sig: string;
  result: "valid" | "invalid" | "acceptable";
}
const file = JSON.parse(readFileSync(resolve(import.meta.dir, "vectors/ecdsa_secp256k1_sha256_bitcoin_test.subset.json"), "utf8")) as {
  numberOfTests: number;
  testGroups: { publicKey: { uncompressed: string }; sha: string; tests: Vector[] }[];
};
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const word = (v: bigint) => v.toString(16).padStart(64, "0");

describe("Wycheproof ecdsa_secp256k1_sha256_bitcoin", () => {
  const cases = file.testGroups.flatMap((g) => g.tests.map((t) => ({ ...t, key: g.publicKey.uncompressed, sha: g.sha })));

  test("the copy is whole: every group's key is on the curve, ids are unique, both outcomes present", () => {
    expect(cases.length).toBe(file.numberOfTests);
    expect(new Set(cases.map((c) => c.tcId)).size).toBe(cases.length);
    for (const g of file.testGroups) {
      expect(g.sha).toBe("SHA-256");
      expect(() => nobleSecp256k1.ProjectivePoint.fromHex(g.publicKey.uncompressed).assertValidity()).not.toThrow();
    }
    expect(cases.filter((c) => c.result === "valid").length).toBeGreaterThanOrEqual(20);
    expect(cases.filter((c) => c.result === "invalid").length).toBeGreaterThanOrEqual(15);
  });

  for (const c of cases) {
    test(`tcId ${c.tcId} (${c.comment}; ${c.flags.join(", ")}) is ${c.result}`, () => {
      const digest = `0x${hex(sha256(Buffer.from(c.msg, "hex")))}`;
      const address = `0x${hex(keccak_256(Buffer.from(c.key.slice(2), "hex")).subarray(12))}`;
      let rs: { r: bigint; s: bigint };
      try {
        rs = DER.toSig(c.sig);
      } catch {
        // Not a DER signature with two integers: it cannot become r ‖ s ‖ v at all.
        expect(c.result).toBe("invalid");
        return;
      }
      const fits = rs.r < 1n << 256n && rs.s < 1n << 256n;
      const outcomes = fits
        ? [27, 28].map((v) => verifyOrderSignature({ digest, signature: `0x${word(rs.r)}${word(rs.s)}${v.toString(16)}`, expectedSigner: address }))
        : [];
      const accepted = outcomes.some((o) => o.ok);
      if (c.result === "valid") expect(outcomes).toContainEqual({ ok: true });
      if (c.result === "invalid") expect(accepted).toBe(false);
      // The binding's own verification (libsecp256k1 also requires a low s) gives the same answer.
      if (fits && c.result !== "acceptable") {
        const sig64 = Buffer.from(`${word(rs.r)}${word(rs.s)}`, "hex");
        const status = secp256k1().ecdsaVerify(sig64, Buffer.from(digest.slice(2), "hex"), Buffer.from(c.key, "hex"));
        expect(status === 0).toBe(c.result === "valid");
      }
    });
  }

  test("the refusal reasons name the rule: high s, and r or s out of range", () => {
    const reason = (tcId: number) => {
      const c = cases.find((x) => x.tcId === tcId)!;
      const { r, s } = DER.toSig(c.sig);
      const digest = `0x${hex(sha256(Buffer.from(c.msg, "hex")))}`;
      const address = `0x${hex(keccak_256(Buffer.from(c.key.slice(2), "hex")).subarray(12))}`;
      const o = verifyOrderSignature({ digest, signature: `0x${word(r)}${word(s)}1b`, expectedSigner: address });
      return o.ok ? "ok" : o.reason;
    };
    expect(reason(1)).toBe("signature s is not low (malleable form)");
    expect(reason(388)).toBe("signature s is not low (malleable form)");
    expect(reason(175)).toBe("signature s is out of range");
    expect(reason(189)).toBe("signature r is out of range");
    expect(reason(205)).toBe("signature r is out of range");
  });
});
