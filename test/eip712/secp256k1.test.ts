/**
 * The two ways secp256k1.ts answers "does this signature recover to that key": full recovery
 * (recoverPublicKey) and the check against a known key's precomputed table (recoversTo). They must
 * agree with each other and with viem on valid signatures, on every tampered form of them, and
 * on digests at and above the group order; and the signature check must give the same answers,
 * with the same reasons, whether or not it already knows the signer's key.
 */
import { beforeEach, describe, expect, test } from "bun:test";
import { bytesToHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { N, recoverPublicKey, recoversTo, signerKey } from "../../src/eip712/secp256k1.ts";
import { forgetSignerKeys, knownSignerKeys, knowsSigner, MAX_SIGNER_KEYS, verifyOrderSignature } from "../../src/eip712/verify-order-signature.ts";

const hex32 = (v: bigint) => v.toString(16).padStart(64, "0");
const randomDigest = () => bytesToHex(crypto.getRandomValues(new Uint8Array(32)));

/** A fresh account, its public key as viem derives it, and a signer for raw digests. */
function newKey() {
  const account = privateKeyToAccount(generatePrivateKey());
  const pub = account.publicKey; // 0x04 ‖ x ‖ y
  return { account, x: BigInt(`0x${pub.slice(4, 68)}`), y: BigInt(`0x${pub.slice(68, 132)}`) };
}

async function signParts(account: ReturnType<typeof newKey>["account"], digest: `0x${string}`) {
  const sig = await account.sign({ hash: digest });
  return { sig, r: BigInt(`0x${sig.slice(2, 66)}`), s: BigInt(`0x${sig.slice(66, 130)}`), yParity: Number.parseInt(sig.slice(130), 16) - 27 };
}

const sameKey = (q: { x: bigint; y: bigint } | null, k: { x: bigint; y: bigint }) => q !== null && q.x === k.x && q.y === k.y;

describe("recoverPublicKey and recoversTo", () => {
  test("agree with viem's key on 200 random keys and digests, and refuse another key", async () => {
    const other = newKey();
    const otherKey = signerKey(other.x, other.y);
    for (let i = 0; i < 200; i++) {
      const k = newKey();
      const d = randomDigest();
      const { r, s, yParity } = await signParts(k.account, d);
      const e = BigInt(d);
      expect(sameKey(recoverPublicKey(e, r, s, yParity), k)).toBe(true);
      expect(recoversTo(e, r, s, yParity, signerKey(k.x, k.y))).toBe(true);
      expect(recoversTo(e, r, s, yParity, otherKey)).toBe(false);
    }
  });

  test("one key's table answers for many signatures by that key (every table entry gets used)", async () => {
    const k = newKey();
    const key = signerKey(k.x, k.y);
    for (let i = 0; i < 200; i++) {
      const d = randomDigest();
      const { r, s, yParity } = await signParts(k.account, d);
      expect(recoversTo(BigInt(d), r, s, yParity, key)).toBe(true);
    }
  });

  test("tampered signatures: the key check says yes exactly when recovery finds the signer's key", async () => {
    const k = newKey();
    const key = signerKey(k.x, k.y);
    let tampered = 0;
    for (let i = 0; i < 40; i++) {
      const d = randomDigest();
      const { r, s, yParity } = await signParts(k.account, d);
      const e = BigInt(d);
      const forms: [bigint, bigint, bigint, number][] = [
        [e, r, s, 1 - yParity], // the other parity: R's twin
        [e + 1n, r, s, yParity],
        [e, r, (s % (N - 1n)) + 1n, yParity],
        [e, r, N - s, yParity], // the high-s twin with the same parity
        [e, r, N - s, 1 - yParity], // the high-s twin with its parity: recovers to the signer (the caller refuses high s)
        [e, (r % (N - 1n)) + 1n, s, yParity],
      ];
      for (const [fe, fr, fs, fp] of forms) {
        const recovered = recoverPublicKey(fe, fr, fs, fp);
        expect(recoversTo(fe, fr, fs, fp, key)).toBe(sameKey(recovered, k));
        tampered++;
      }
      expect(recoversTo(e, r, N - s, 1 - yParity, key)).toBe(true);
      expect(recoversTo(e, r, s, 1 - yParity, key)).toBe(false);
    }
    expect(tampered).toBe(240);
  });

  test("digests of 0, n, above n and 2^256 − 1 (e is reduced mod n on both paths)", async () => {
    const k = newKey();
    const key = signerKey(k.x, k.y);
    for (const e of [0n, N, N + 5n, (1n << 256n) - 1n]) {
      const { r, s, yParity } = await signParts(k.account, `0x${hex32(e)}`);
      expect(sameKey(recoverPublicKey(e, r, s, yParity), k)).toBe(true);
      expect(recoversTo(e, r, s, yParity, key)).toBe(true);
      expect(recoversTo(e, r, s, 1 - yParity, key)).toBe(false);
    }
  });

  test("r that is not the x of a curve point: recovery finds nothing and the key check says no", () => {
    const k = newKey();
    const key = signerKey(k.x, k.y);
    let none = 0;
    for (let i = 0; none < 30 && i < 200; i++) {
      const r = (BigInt(randomDigest()) % (N - 1n)) + 1n;
      const s = (BigInt(randomDigest()) % (N / 2n)) + 1n;
      const e = BigInt(randomDigest());
      if (recoverPublicKey(e, r, s, 0) !== null) continue;
      expect(recoverPublicKey(e, r, s, 1)).toBeNull();
      expect(recoversTo(e, r, s, 0, key)).toBe(false);
      expect(recoversTo(e, r, s, 1, key)).toBe(false);
      none++;
    }
    expect(none).toBe(30);
  });
});

describe("verifyOrderSignature with and without the signer's key", () => {
  beforeEach(() => forgetSignerKeys());

  test("keeps a signer's key only after a signature of theirs verified", async () => {
    const k = newKey();
    const d = randomDigest();
    const { sig } = await signParts(k.account, d);
    const stranger = newKey();
    expect(verifyOrderSignature({ digest: d, signature: sig, expectedSigner: stranger.account.address }).ok).toBe(false);
    expect(knownSignerKeys()).toBe(0);
    expect(verifyOrderSignature({ digest: d, signature: sig, expectedSigner: k.account.address }).ok).toBe(true);
    expect(knownSignerKeys()).toBe(1);
    // The stranger's refusal did not make the stranger known, and a known key is not kept twice.
    expect(verifyOrderSignature({ digest: d, signature: sig, expectedSigner: k.account.address.toLowerCase() }).ok).toBe(true);
    expect(knownSignerKeys()).toBe(1);
  });

  test("every answer and every reason is the same with the key known as without it", async () => {
    const k = newKey();
    const other = newKey();
    const cases: { digest: string; signature: string; expectedSigner: string }[] = [];
    for (let i = 0; i < 20; i++) {
      const d = randomDigest();
      const { sig, r, s, yParity } = await signParts(k.account, d);
      const join = (rr: bigint, ss: bigint, p: number) => `0x${hex32(rr)}${hex32(ss)}${(27 + p).toString(16)}`;
      cases.push(
        { digest: d, signature: sig, expectedSigner: k.account.address },
        { digest: d, signature: join(r, s, 1 - yParity), expectedSigner: k.account.address },
        { digest: randomDigest(), signature: sig, expectedSigner: k.account.address },
        { digest: d, signature: join(r, (s % (N - 1n)) + 1n, yParity), expectedSigner: k.account.address },
        { digest: d, signature: join((r % (N - 1n)) + 1n, s, yParity), expectedSigner: k.account.address },
        { digest: d, signature: join(r, N - s, 1 - yParity), expectedSigner: k.account.address },
        { digest: d, signature: sig, expectedSigner: other.account.address },
      );
    }
    forgetSignerKeys();
    const cold = cases.map((c) => {
      forgetSignerKeys();
      return verifyOrderSignature(c);
    });
    // Make both signers known, then ask again.
    forgetSignerKeys();
    for (const who of [k, other]) {
      const d = randomDigest();
      expect(verifyOrderSignature({ digest: d, signature: (await signParts(who.account, d)).sig, expectedSigner: who.account.address }).ok).toBe(true);
    }
    expect(knownSignerKeys()).toBe(2);
    const warm = cases.map((c) => verifyOrderSignature(c));
    expect(warm).toEqual(cold);
    expect(cold.filter((c) => c.ok).length).toBe(20);
    expect(new Set(cold.filter((c) => !c.ok).map((c) => (c as { reason: string }).reason)).size).toBeGreaterThan(1);
  });

  test(`keeps at most ${MAX_SIGNER_KEYS} keys, dropping the least recently used, and still verifies the dropped signer`, async () => {
    const first = newKey();
    const d0 = randomDigest();
    const s0 = (await signParts(first.account, d0)).sig;
    expect(verifyOrderSignature({ digest: d0, signature: s0, expectedSigner: first.account.address }).ok).toBe(true);
    const kept = newKey();
    const dk = randomDigest();
    const sk = (await signParts(kept.account, dk)).sig;
    expect(verifyOrderSignature({ digest: dk, signature: sk, expectedSigner: kept.account.address }).ok).toBe(true);
    // Fill the rest with signers that sign one digest each; `kept` is used again halfway, `first` never.
    const d = randomDigest();
    for (let i = 0; i < MAX_SIGNER_KEYS; i++) {
      const k = newKey();
      expect(verifyOrderSignature({ digest: d, signature: (await signParts(k.account, d)).sig, expectedSigner: k.account.address }).ok).toBe(true);
      if (i === MAX_SIGNER_KEYS / 2) expect(verifyOrderSignature({ digest: dk, signature: sk, expectedSigner: kept.account.address }).ok).toBe(true);
    }
    expect(knownSignerKeys()).toBe(MAX_SIGNER_KEYS);
    // `first` was dropped, `kept` (used again) was not.
    expect(knowsSigner(first.account.address)).toBe(false);
    expect(knowsSigner(kept.account.address)).toBe(true);
    // The dropped signer is checked by recovery again and comes back, in place of the oldest.
    expect(verifyOrderSignature({ digest: d0, signature: s0, expectedSigner: first.account.address }).ok).toBe(true);
    expect(knowsSigner(first.account.address)).toBe(true);
    expect(knownSignerKeys()).toBe(MAX_SIGNER_KEYS);
    expect(verifyOrderSignature({ digest: dk, signature: sk, expectedSigner: kept.account.address }).ok).toBe(true);
  });
});
