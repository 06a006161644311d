import { describe, expect, test } from "bun:test";
import { bytesToHex, hashTypedData, recoverAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { orderHash } from "../../src/eip712/order-hash.ts";
import { ZERO_BYTES32, buildUnsignedOrder, randomSalt } from "../../src/eip712/order-typed-data.ts";
import { verifyOrderSignature } from "../../src/eip712/verify-order-signature.ts";
import type { OrderMessage } from "../../src/venues/venue.ts";

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const hex32 = (v: bigint) => v.toString(16).padStart(64, "0");

const account = privateKeyToAccount(generatePrivateKey());
const other = privateKeyToAccount(generatePrivateKey());

function message(overrides: Partial<OrderMessage> = {}): OrderMessage {
  return {
    salt: randomSalt(),
    maker: account.address,
    signer: account.address,
    tokenId: "71321045679252212594626385532706912750332728571942532289631379312455583992563",
    makerAmount: "5200000",
    takerAmount: "10000000",
    side: 0,
    signatureType: 0,
    timestamp: String(Date.now()),
    metadata: ZERO_BYTES32,
    builder: `0x${"11".repeat(32)}`,
    ...overrides,
  };
}

const msg = message();
const unsigned = buildUnsignedOrder({ chainId: 137, negRisk: false, message: msg });
const digest = orderHash({ chainId: 137, negRisk: false, message: msg });
// The object is signed exactly as buildUnsignedOrder returned it.
const signature = await account.signTypedData(unsigned);

function parts(sig: string) {
  return { r: BigInt(`0x${sig.slice(2, 66)}`), s: BigInt(`0x${sig.slice(66, 130)}`), v: Number.parseInt(sig.slice(130), 16) };
}
function join(r: bigint, s: bigint, v: number) {
  return `0x${hex32(r)}${hex32(s)}${v.toString(16).padStart(2, "0")}`;
}
function expectRefused(sig: string, d: string = digest, signer: string = account.address): string {
  const res = verifyOrderSignature({ digest: d, signature: sig, expectedSigner: signer });
  expect(res.ok).toBe(false);
  if (res.ok) throw new Error("unreachable");
  expect(res.reason.length).toBeGreaterThan(0);
  expect(res.reason.length).toBeLessThan(80);
  // The reason never echoes the signature (or any long part of it).
  if (typeof sig === "string" && sig.length > 20) {
    expect(res.reason.includes(sig.slice(2, 18))).toBe(false);
    expect(res.reason.includes(sig.slice(-16))).toBe(false);
  }
  return res.reason;
}

describe("verifyOrderSignature: accepts", () => {
  test("a viem account's signature over the unsigned order as built", () => {
    expect(digest).toBe(hashTypedData(unsigned));
    expect(verifyOrderSignature({ digest, signature, expectedSigner: account.address })).toEqual({ ok: true });
  });

  test("signer compared case-insensitively, hex of any case, v as 0/1", () => {
    expect(verifyOrderSignature({ digest, signature, expectedSigner: account.address.toLowerCase() }).ok).toBe(true);
    expect(verifyOrderSignature({ digest, signature, expectedSigner: `0x${account.address.slice(2).toUpperCase()}` }).ok).toBe(true);
    expect(verifyOrderSignature({ digest, signature: `0x${signature.slice(2).toUpperCase()}`, expectedSigner: account.address }).ok).toBe(true);
    const { r, s, v } = parts(signature);
    expect(v === 27 || v === 28).toBe(true);
    expect(verifyOrderSignature({ digest, signature: join(r, s, v - 27), expectedSigner: account.address }).ok).toBe(true);
  });

  test("neg-risk and Amoy orders signed by fresh accounts", async () => {
    for (const [chainId, negRisk] of [[137, true], [80002, false], [80002, true]] as const) {
      const acct = privateKeyToAccount(generatePrivateKey());
      const m = message({ maker: acct.address, signer: acct.address, side: 1, signatureType: 0 });
      const u = buildUnsignedOrder({ chainId, negRisk, message: m });
      const sig = await acct.signTypedData(u);
      const d = orderHash({ chainId, negRisk, message: m });
      expect(verifyOrderSignature({ digest: d, signature: sig, expectedSigner: acct.address }).ok).toBe(true);
      expectRefused(sig, d, account.address);
    }
  });

  test("agrees with viem on 300 random keys and digests", async () => {
    for (let i = 0; i < 300; i++) {
      const acct = privateKeyToAccount(generatePrivateKey());
      const d = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
      const sig = await acct.sign({ hash: d });
      expect(verifyOrderSignature({ digest: d, signature: sig, expectedSigner: acct.address }).ok).toBe(true);
      expect(verifyOrderSignature({ digest: d, signature: sig, expectedSigner: other.address }).ok).toBe(false);
    }
  });

  test("agrees with viem's recovery on arbitrary (r, s, v), including r that are not on the curve", async () => {
    let recovered = 0;
    let unrecoverable = 0;
    for (let i = 0; i < 300; i++) {
      const d = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
      const r = (BigInt(bytesToHex(crypto.getRandomValues(new Uint8Array(32)))) % (N - 1n)) + 1n;
      const s = (BigInt(bytesToHex(crypto.getRandomValues(new Uint8Array(32)))) % (N / 2n)) + 1n;
      const sig = join(r, s, 27 + (i % 2));
      let viemSigner: string | null = null;
      try {
        viemSigner = await recoverAddress({ hash: d, signature: sig as `0x${string}` });
      } catch {
        viemSigner = null;
      }
      if (viemSigner === null) {
        unrecoverable++;
        const res = verifyOrderSignature({ digest: d, signature: sig, expectedSigner: account.address });
        expect(res).toEqual({ ok: false, reason: "signature does not recover to a public key" });
      } else {
        recovered++;
        expect(verifyOrderSignature({ digest: d, signature: sig, expectedSigner: viemSigner }).ok).toBe(true);
        expect(verifyOrderSignature({ digest: d, signature: sig, expectedSigner: account.address }).ok).toBe(false);
      }
    }
    // About half of random x values are on the curve: both branches ran.
    expect(recovered).toBeGreaterThan(50);
    expect(unrecoverable).toBeGreaterThan(50);
  });

  test("agrees with viem for digests of 0, n and above n (e reduced mod n)", async () => {
    const digests = [0n, N, N + 5n, (1n << 256n) - 1n].map((d) => `0x${hex32(d)}` as `0x${string}`);
    for (const d of digests) {
      let checked = 0;
      for (let i = 0; checked < 40 && i < 400; i++) {
        const r = (BigInt(bytesToHex(crypto.getRandomValues(new Uint8Array(32)))) % (N - 1n)) + 1n;
        const s = (BigInt(bytesToHex(crypto.getRandomValues(new Uint8Array(32)))) % (N / 2n)) + 1n;
        const sig = join(r, s, 27 + (i % 2)) as `0x${string}`;
        let viemSigner: string;
        try {
          viemSigner = await recoverAddress({ hash: d, signature: sig });
        } catch {
          continue; // r is not the x of a curve point
        }
        expect(verifyOrderSignature({ digest: d, signature: sig, expectedSigner: viemSigner }).ok).toBe(true);
        checked++;
      }
      expect(checked).toBe(40);
    }
  });
});

describe("verifyOrderSignature: refuses", () => {
  test("wrong length", () => {
    expectRefused(signature.slice(0, -2));
    expectRefused(`${signature}00`);
    expectRefused(signature.slice(2)); // no 0x
    expectRefused(`0x${signature.slice(4)}`);
    expectRefused("");
    expectRefused("0x");
  });

  test("non-hex", () => {
    expectRefused(`${signature.slice(0, 40)}g${signature.slice(41)}`);
    expectRefused(`0X${signature.slice(2)}`);
    expectRefused(`${signature.slice(0, 131)} `);
    expectRefused(null as unknown as string);
  });

  test("high s (the malleable twin of a valid signature)", async () => {
    const { r, s, v } = parts(signature);
    const twin = join(r, N - s, v === 27 ? 28 : 27);
    // The twin is a valid ECDSA signature by the same key: only the low-s rule refuses it.
    expect(await recoverAddress({ hash: digest, signature: twin as `0x${string}` })).toBe(account.address);
    expect(expectRefused(twin)).toMatch(/low/);
  });

  test("another signer", () => {
    expect(expectRefused(signature, digest, other.address)).toMatch(/signer/);
  });

  test("a signature over a different order", async () => {
    const m2 = { ...msg, makerAmount: "5200001" };
    const d2 = orderHash({ chainId: 137, negRisk: false, message: m2 });
    expect(d2).not.toBe(digest);
    expectRefused(signature, d2);
    // Same order, other exchange or chain: different digest, refused too.
    expectRefused(signature, orderHash({ chainId: 137, negRisk: true, message: msg }));
    expectRefused(signature, orderHash({ chainId: 80002, negRisk: false, message: msg }));
    // And the other way round: the other order's own signature does not pass for this one.
    const sig2 = await account.signTypedData(buildUnsignedOrder({ chainId: 137, negRisk: false, message: m2 }));
    expect(verifyOrderSignature({ digest: d2, signature: sig2, expectedSigner: account.address }).ok).toBe(true);
    expectRefused(sig2, digest);
  });

  test("r or s zero or not below n", () => {
    const { r, s, v } = parts(signature);
    const rRange = /\br\b.*range/;
    const sRange = /\bs\b.*range/;
    expect(expectRefused(join(0n, s, v))).toMatch(rRange);
    expect(expectRefused(join(r, 0n, v))).toMatch(sRange);
    expect(expectRefused(join(N, s, v))).toMatch(rRange);
    expect(expectRefused(join(N + 1n, s, v))).toMatch(rRange);
    expect(expectRefused(join((1n << 256n) - 1n, s, v))).toMatch(rRange);
    expect(expectRefused(join(r, N, v))).toMatch(sRange);
    expect(expectRefused(join(r, (1n << 256n) - 1n, v))).toMatch(sRange);
  });

  test("a bad recovery byte", () => {
    const { r, s } = parts(signature);
    for (const v of [2, 3, 26, 29, 35, 255]) expect(expectRefused(join(r, s, v))).toMatch(/v/);
  });

  test("the wrong parity of v", () => {
    const { r, s, v } = parts(signature);
    expectRefused(join(r, s, v === 27 ? 28 : 27));
  });

  test("a malformed digest or expected signer", () => {
    expectRefused(signature, digest.slice(0, -2));
    expectRefused(signature, digest.slice(2));
    expectRefused(signature, digest, account.address.slice(0, -1));
    expectRefused(signature, digest, "");
  });
});
