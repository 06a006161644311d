/**
 * Signature check throughput: `bun run bench:signature` (one core: the loop is synchronous).
 *
 * Real signatures: 20 viem accounts sign 500 distinct unsigned orders (as buildUnsignedOrder
 * returns them, both domain versions); each round verifies `perRound` of them (cycling through the
 * pool). Reports the median rate of the rounds for verifyOrderSignature over a precomputed digest
 * (what submit-signed does per order: it verifies over the order_hash stored at approval; recovery
 * by libsecp256k1's native binding, keccak by hash-wasm), for orderHash + verifyOrderSignature (the
 * hash computed again as well), for a deposit wallet's ERC-7739 wrapped signature (type 3: the
 * wrapper checked against the order and the TypedDataSign digest recovered), and for viem's
 * recoverTypedDataAddress as a baseline, in the same run.
 */

import { signUnsignedOrder } from "@agent-brokerage/sdk";
import { recoverTypedDataAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { orderHash } from "../src/eip712/order-hash.ts";
import { ZERO_BYTES32, buildUnsignedOrder, randomSalt, type UnsignedOrder } from "../src/eip712/order-typed-data.ts";
import { verifyDepositWalletSignature } from "../src/eip712/deposit-wallet-signature.ts";
import { verifyOrderSignature } from "../src/eip712/verify-order-signature.ts";
import type { OrderMessage } from "../src/venues/venue.ts";

export interface SignatureBenchResult {
  /** verifyOrderSignature per second (median of the rounds). */
  verifyPerSecond: number;
  /** orderHash + verifyOrderSignature per second (median). */
  hashAndVerifyPerSecond: number;
  /** verifyDepositWalletSignature per second (median): type 3. */
  depositWalletPerSecond: number;
  /** viem recoverTypedDataAddress per second (median). */
  viemRecoverPerSecond: number;
  /** Per-round rates of verifyOrderSignature. */
  verifyRounds: number[];
  rounds: number;
  perRound: number;
}

interface Sample {
  chainId: number;
  negRisk: boolean;
  version: "v1" | "v2";
  message: OrderMessage;
  unsigned: UnsignedOrder;
  digest: `0x${string}`;
  signature: `0x${string}`;
  signer: `0x${string}`;
  /** The same order as a deposit wallet's (type 3), its wrapped signature and the owner. */
  wallet: { message: OrderMessage; unsigned: UnsignedOrder; signature: `0x${string}`; owner: `0x${string}` };
}

async function makeSamples(count: number, accounts: number): Promise<Sample[]> {
  const signers = Array.from({ length: accounts }, () => privateKeyToAccount(generatePrivateKey()));
  const samples: Sample[] = [];
  for (let i = 0; i < count; i++) {
    const acct = signers[i % accounts];
    const chainId = i % 4 === 3 ? 80002 : 137;
    const negRisk = i % 2 === 1;
    const version = i % 3 === 2 ? "v2" : "v1";
    const message: OrderMessage = {
      salt: randomSalt(),
      maker: acct.address,
      signer: acct.address,
      tokenId: (BigInt(i + 1) * 7919n ** 19n).toString(),
      makerAmount: String(1_000_000 + i * 10_000),
      takerAmount: String(2_000_000 + i * 10_000),
      side: (i % 2) as 0 | 1,
      signatureType: 0,
      timestamp: String(1_713_398_400_000 + i),
      metadata: ZERO_BYTES32,
      builder: `0x${(i + 1).toString(16).padStart(64, "0")}`,
    };
    const unsigned = buildUnsignedOrder({ chainId, negRisk, version, message });
    const signature = await acct.signTypedData(unsigned);
    const depositWallet = `0x${(i + 0xd0).toString(16).padStart(40, "0")}` as `0x${string}`;
    const walletMessage: OrderMessage = { ...message, maker: depositWallet, signer: depositWallet, signatureType: 3 };
    const walletUnsigned = buildUnsignedOrder({ chainId, negRisk, version, message: walletMessage });
    const wallet = { message: walletMessage, unsigned: walletUnsigned, signature: await signUnsignedOrder(acct, walletUnsigned), owner: acct.address };
    samples.push({ chainId, negRisk, version, message, unsigned, digest: orderHash({ chainId, negRisk, version, message }), signature, signer: acct.address, wallet });
  }
  return samples;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function rate(count: number, ms: number): number {
  return Math.round((count * 1000) / ms);
}

/** Runs `rounds` rounds of `perRound` verifications (viem baseline: perRound / 5) and returns the rates. */
export async function benchSignatureChecks(rounds = 5, perRound = 3000): Promise<SignatureBenchResult> {
  const samples = await makeSamples(500, 20);
  // Warm the JIT on every path before timing.
  for (const x of samples) {
    const w = x.wallet;
    if (
      !verifyOrderSignature({ digest: x.digest, signature: x.signature, expectedSigner: x.signer }).ok ||
      !verifyDepositWalletSignature({ domain: w.unsigned.domain, message: w.message, signature: w.signature, owner: w.owner }).ok
    ) {
      throw new Error("benchmark sample failed to verify");
    }
  }

  const verifyRounds: number[] = [];
  const hashRounds: number[] = [];
  const viemRounds: number[] = [];
  const walletRounds: number[] = [];
  const viemPerRound = Math.max(1, Math.floor(perRound / 5));
  for (let round = 0; round < rounds; round++) {
    let ok = 0;
    let t = performance.now();
    for (let i = 0; i < perRound; i++) {
      const x = samples[i % samples.length];
      if (verifyOrderSignature({ digest: x.digest, signature: x.signature, expectedSigner: x.signer }).ok) ok++;
    }
    verifyRounds.push(rate(perRound, performance.now() - t));

    t = performance.now();
    for (let i = 0; i < perRound; i++) {
      const x = samples[i % samples.length];
      const digest = orderHash({ chainId: x.chainId, negRisk: x.negRisk, version: x.version, message: x.message });
      if (verifyOrderSignature({ digest, signature: x.signature, expectedSigner: x.signer }).ok) ok++;
    }
    hashRounds.push(rate(perRound, performance.now() - t));

    t = performance.now();
    for (let i = 0; i < perRound; i++) {
      const w = samples[i % samples.length].wallet;
      if (verifyDepositWalletSignature({ domain: w.unsigned.domain, message: w.message, signature: w.signature, owner: w.owner }).ok) ok++;
    }
    walletRounds.push(rate(perRound, performance.now() - t));

    t = performance.now();
    for (let i = 0; i < viemPerRound; i++) {
      const x = samples[i % samples.length];
      const addr = await recoverTypedDataAddress({ ...x.unsigned, signature: x.signature });
      if (addr === x.signer) ok++;
    }
    viemRounds.push(rate(viemPerRound, performance.now() - t));
    if (ok !== 3 * perRound + viemPerRound) throw new Error("a benchmark verification failed");
  }
  return {
    verifyPerSecond: median(verifyRounds),
    hashAndVerifyPerSecond: median(hashRounds),
    depositWalletPerSecond: median(walletRounds),
    viemRecoverPerSecond: median(viemRounds),
    verifyRounds,
    rounds,
    perRound,
  };
}

if (import.meta.main) {
  const r = await benchSignatureChecks(5, 3000);
  console.log(`signature checks, median of ${r.rounds} rounds × ${r.perRound} real signatures (one core; libsecp256k1 native, keccak hash-wasm):`);
  console.log(`  verifyOrderSignature (precomputed digest): ${r.verifyPerSecond}/s  [rounds: ${r.verifyRounds.join(", ")}]`);
  console.log(`  orderHash + verifyOrderSignature:          ${r.hashAndVerifyPerSecond}/s`);
  console.log(`  deposit wallet (type 3, ERC-7739 wrapper):  ${r.depositWalletPerSecond}/s`);
  console.log(`  viem recoverTypedDataAddress (baseline):   ${r.viemRecoverPerSecond}/s`);
}
