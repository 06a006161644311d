/**
 * Signature type 3 (deposit wallets): the ERC-7739 wrapped signature made by the official client is
 * accepted for both domain versions and chains, equals viem's independent construction
 * (test/support/deposit-wallet.ts), and every tampering of the wrapper, another order, another key,
 * or a plain 65-byte signature is refused with a reason.
 */
import { describe, expect, test } from "bun:test";
import { hashTypedData } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  DEPOSIT_WALLET_SIGNATURE_BYTES,
  DEPOSIT_WALLET_SIGNATURE_HEX_LENGTH,
  typedDataSignDigest,
  verifyDepositWalletSignature,
} from "../../src/eip712/deposit-wallet-signature.ts";
import { buildUnsignedOrder, randomSalt } from "../../src/eip712/order-typed-data.ts";
import type { OrderMessage } from "../../src/venues/venue.ts";
import { signDepositWalletOrder, TYPED_DATA_SIGN_FIELDS } from "../support/deposit-wallet.ts";
import { officialSignature } from "../support/official-client.ts";

const owner = privateKeyToAccount(generatePrivateKey());
const wallet = "0x1234567890AbcdEF1234567890aBcdef12345678" as const;

function walletOrder(sel: { chainId: number; negRisk: boolean; version: "v1" | "v2" }, patch: Partial<OrderMessage> = {}) {
  const message: OrderMessage = {
    salt: randomSalt(),
    maker: wallet,
    signer: wallet,
    tokenId: "71321045679252212594626385532706912750332728571942532289631379312455583992563",
    makerAmount: "5200000",
    takerAmount: "10000000",
    side: 0,
    signatureType: 3,
    timestamp: String(Date.now()),
    metadata: `0x${"0".repeat(64)}`,
    builder: `0x${"ab".repeat(32)}`,
    ...patch,
  };
  return buildUnsignedOrder({ ...sel, message });
}

const check = (unsigned: ReturnType<typeof walletOrder>, signature: string, who: string | null = owner.address) =>
  verifyDepositWalletSignature({ domain: unsigned.domain, message: unsigned.message, signature, owner: who });

const SELECTORS = [
  { chainId: 137, negRisk: false, version: "v1" },
  { chainId: 137, negRisk: true, version: "v1" },
  { chainId: 137, negRisk: false, version: "v2" },
  { chainId: 80002, negRisk: true, version: "v2" },
] as const;

describe("deposit wallet signatures (type 3)", () => {
  test("the wrapper is 317 bytes, and the official client's equals viem's construction", async () => {
    expect(DEPOSIT_WALLET_SIGNATURE_BYTES).toBe(317);
    expect(DEPOSIT_WALLET_SIGNATURE_HEX_LENGTH).toBe(636);
    for (const sel of SELECTORS) {
      const unsigned = walletOrder(sel);
      const official = await officialSignature(owner, unsigned);
      expect(official.length).toBe(636);
      expect(official).toBe(await signDepositWalletOrder(owner, unsigned)); // deterministic (RFC 6979)
    }
  });

  test("our TypedDataSign digest equals viem's hashTypedData of the same wrapper", () => {
    for (const sel of SELECTORS) {
      const u = walletOrder(sel);
      const viemDigest = hashTypedData({
        domain: u.domain,
        types: {
          TypedDataSign: TYPED_DATA_SIGN_FIELDS,
          Order: u.types.Order,
        },
        primaryType: "TypedDataSign",
        message: { contents: u.message, name: "DepositWallet", version: "1", chainId: BigInt(u.domain.chainId), verifyingContract: wallet, salt: `0x${"0".repeat(64)}` },
      } as any);
      expect(`0x${Buffer.from(typedDataSignDigest(u)).toString("hex")}`).toBe(viemDigest);
    }
  });

  test("accepts the official client's signature for both domain versions, both chains, buys and sells", async () => {
    for (const sel of SELECTORS) {
      for (const side of [0, 1] as const) {
        const unsigned = walletOrder(sel, { side });
        expect(check(unsigned, await officialSignature(owner, unsigned))).toEqual({ ok: true });
      }
    }
  });

  test("refuses a signature over another order, by another key, or for another owner", async () => {
    const unsigned = walletOrder(SELECTORS[0]);
    const other = walletOrder(SELECTORS[0], { makerAmount: "5200001" });
    const sig = await officialSignature(owner, unsigned);
    // Another order: its wrapper carries the other order's contents hash.
    const r1 = check(unsigned, await officialSignature(owner, other));
    expect(r1).toEqual({ ok: false, reason: "the wrapped signature's contents hash is not the order's" });
    // Same order under the other domain version (ExchangeV3): the domain separator differs.
    const v3 = walletOrder({ chainId: 137, negRisk: false, version: "v2" }, { salt: unsigned.message.salt, timestamp: unsigned.message.timestamp });
    expect(check(unsigned, await officialSignature(owner, v3))).toEqual({ ok: false, reason: "the wrapped signature's domain separator is not the order's exchange domain" });
    // Another key signs the right order.
    const stranger = privateKeyToAccount(generatePrivateKey());
    expect(check(unsigned, await officialSignature(stranger, unsigned))).toEqual({ ok: false, reason: "the inner signature is not by the deposit wallet's owner" });
    // The right signature, but the agent's owner is someone else; or none is registered.
    expect(check(unsigned, sig, stranger.address).ok).toBe(false);
    expect(check(unsigned, sig, null)).toEqual({ ok: false, reason: "the agent has no owner address for its deposit wallet" });
    expect(check(unsigned, sig)).toEqual({ ok: true });
  });

  test("refuses every tampered part of the wrapper", async () => {
    const unsigned = walletOrder(SELECTORS[2]);
    const sig = await officialSignature(owner, unsigned);
    const hex = sig.slice(2);
    const flip = (byteIndex: number) => {
      const i = 2 * byteIndex;
      const b = (Number.parseInt(hex.slice(i, i + 2), 16) ^ 0x01).toString(16).padStart(2, "0");
      return `0x${hex.slice(0, i)}${b}${hex.slice(i + 2)}`;
    };
    const reasons = new Map<number, string>();
    for (const at of [0, 31, 32, 63, 64, 65, 96, 97, 128, 129, 200, 314, 315, 316]) {
      const r = check(unsigned, flip(at));
      expect(r.ok).toBe(false);
      if (!r.ok) reasons.set(at, r.reason);
    }
    expect(reasons.get(65)).toContain("domain separator");
    expect(reasons.get(97)).toContain("contents hash");
    expect(reasons.get(200)).toContain("type string");
    expect(reasons.get(316)).toContain("length");
    expect(reasons.get(64)).toContain("v must be");
    // Truncated, extended, and the bare inner 65-byte signature.
    expect(check(unsigned, sig.slice(0, -2)).ok).toBe(false);
    expect(check(unsigned, `${sig}00`).ok).toBe(false);
    expect(check(unsigned, sig.slice(0, 132)).ok).toBe(false);
    // A high-s twin of the inner signature.
    const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const s = BigInt(`0x${hex.slice(64, 128)}`);
    const v = Number.parseInt(hex.slice(128, 130), 16);
    const twin = `0x${hex.slice(0, 64)}${(N - s).toString(16).padStart(64, "0")}${(v === 27 ? 28 : 27).toString(16)}${hex.slice(130)}`;
    expect(check(unsigned, twin)).toEqual({ ok: false, reason: "inner signature s is not low (malleable form)" });
  });
});
