/**
 * Signature check throughput: `bun run bench/signature.ts`.
 *
 * Real signatures: 20 viem accounts sign 500 distinct unsigned orders (as
 * buildUnsignedOrder returns them); each round verifies `perRound` of them
 * (cycling through the pool). Reports the median rate of the rounds for
 * verifyOrderSignature over a precomputed digest (what submit-signed does per
 * order: it verifies over the order_hash stored at approval), for orderHash +
 * verifyOrderSignature (the hash computed again as well), both with the
 * signers' keys known (every signature after a signer's first: the service
 * keeps the keys of up to 1,024 recent signers), for the same with the keys
 * forgotten before every check (a signer's first signature: full recovery),
 * and for viem's recoverTypedDataAddress as a baseline.
 */

import { recoverTypedDataAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { orderHash } from "../src/eip712/order-hash.ts";
import { ZERO_BYTES32, buildUnsignedOrder, randomSalt, type UnsignedOrder } from "../src/eip712/order-typed-data.ts";
import { forgetSignerKeys, verifyOrderSignature, warmUpSignatureChecks } from "../src/eip712/verify-order-signature.ts";
import type { OrderMessage } from "../src/venues/venue.ts";

export interface SignatureBenchResult {
  /** verifyOrderSignature per second (median of the rounds). */
  verifyPerSecond: number;
  /** orderHash + verifyOrderSignature per second (median). */
  hashAndVerifyPerSecond: number;
  /** orderHash + verifyOrderSignature per second with no signer key known (median): a signer's first signature. */
  firstSignaturePerSecond: number;
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
  message: OrderMessage;
  unsigned: UnsignedOrder;
  digest: `0x${string}`;
  signature: `0x${string}`;
  signer: `0x${string}`;
}

async function makeSamples(count: number, accounts: number): Promise<Sample[]> {
  const signers = Array.from({ length: accounts }, () => privateKeyToAccount(generatePrivateKey()));
  const samples: Sample[] = [];
  for (let i = 0; i < count; i++) {
    const acct = signers[i % accounts];
    const chainId = i % 4 === 3 ? 80002 : 137;
    const negRisk = i % 2 === 1;
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
    const unsigned = buildUnsignedOrder({ chainId, negRisk, message });
    const signature = await acct.signTypedData(unsigned);
    samples.push({ chainId, negRisk, message, unsigned, digest: orderHash({ chainId, negRisk, message }), signature, signer: acct.address });
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
  warmUpSignatureChecks();
  // Warm the JIT on every path before timing.
  for (const x of samples) {
    if (!verifyOrderSignature({ digest: x.digest, signature: x.signature, expectedSigner: x.signer }).ok) {
      throw new Error("benchmark sample failed to verify");
    }
  }

  const verifyRounds: number[] = [];
  const hashRounds: number[] = [];
  const viemRounds: number[] = [];
  const coldRounds: number[] = [];
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
      const digest = orderHash({ chainId: x.chainId, negRisk: x.negRisk, message: x.message });
      if (verifyOrderSignature({ digest, signature: x.signature, expectedSigner: x.signer }).ok) ok++;
    }
    hashRounds.push(rate(perRound, performance.now() - t));

    const coldPerRound = Math.max(1, Math.floor(perRound / 3));
    t = performance.now();
    for (let i = 0; i < coldPerRound; i++) {
      const x = samples[i % samples.length];
      forgetSignerKeys();
      const digest = orderHash({ chainId: x.chainId, negRisk: x.negRisk, message: x.message });
      if (verifyOrderSignature({ digest, signature: x.signature, expectedSigner: x.signer }).ok) ok++;
    }
    coldRounds.push(rate(coldPerRound, performance.now() - t));

    t = performance.now();
    for (let i = 0; i < viemPerRound; i++) {
      const x = samples[i % samples.length];
      const addr = await recoverTypedDataAddress({ ...x.unsigned, signature: x.signature });
      if (addr === x.signer) ok++;
    }
    viemRounds.push(rate(viemPerRound, performance.now() - t));
    if (ok !== 2 * perRound + Math.max(1, Math.floor(perRound / 3)) + viemPerRound) throw new Error("a benchmark verification failed");
  }
  return {
    verifyPerSecond: median(verifyRounds),
    hashAndVerifyPerSecond: median(hashRounds),
    firstSignaturePerSecond: median(coldRounds),
    viemRecoverPerSecond: median(viemRounds),
    verifyRounds,
    rounds,
    perRound,
  };
}

if (import.meta.main) {
  const r = await benchSignatureChecks(5, 3000);
  console.log(`signature checks, median of ${r.rounds} rounds × ${r.perRound} real signatures (one core):`);
  console.log(`  verifyOrderSignature (precomputed digest): ${r.verifyPerSecond}/s  [rounds: ${r.verifyRounds.join(", ")}]`);
  console.log(`  orderHash + verifyOrderSignature:          ${r.hashAndVerifyPerSecond}/s`);
  console.log(`  the same, signer's key not yet known:      ${r.firstSignaturePerSecond}/s (a signer's first signature)`);
  console.log(`  viem recoverTypedDataAddress (baseline):   ${r.viemRecoverPerSecond}/s`);
}
