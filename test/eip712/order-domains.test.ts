/**
 * Domain selection (CONTRACT section 6) and the order hash under both domains: the addresses equal
 * the official client's configuration, known vectors for every exchange, and the hash equals the
 * official client's own EIP-712 hash and viem's for random orders under every domain.
 */
import { describe, expect, test } from "bun:test";
import { hashTypedData } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { orderDomainSeparator, orderHash } from "../../src/eip712/order-hash.ts";
import { buildUnsignedOrder, EXCHANGE_V2, EXCHANGE_V3, NEG_RISK_EXCHANGE_V2, selectOrderDomain } from "../../src/eip712/order-typed-data.ts";
import type { OrderMessage } from "../../src/venues/venue.ts";
import { getContractConfig, officialTypedData } from "../support/official-client.ts";
import { VECTOR_ORDER } from "../support/vector-order.ts";


/** Known vectors: the CONTRACT's (v1, standard exchange) and the same order under the other domains. */
const VECTORS = [
  { chainId: 137, negRisk: false, version: "v1", hash: "0x32961c48ddac87ed3582f8e02097cd0eff4fcf80460306bd44b3710438dfa64c" },
  { chainId: 137, negRisk: true, version: "v1", hash: "0x2ca41fb90375d3d81a2482480be64dc0234d9c76a44fb4efb86addd2c20621a1" },
  { chainId: 137, negRisk: false, version: "v2", hash: "0xebbc5881e0995ce4d28b2725b16c901917e02c9288525024b4cf64d23d1c5ec0" },
  { chainId: 137, negRisk: true, version: "v2", hash: "0xebbc5881e0995ce4d28b2725b16c901917e02c9288525024b4cf64d23d1c5ec0" },
  { chainId: 80002, negRisk: false, version: "v2", hash: "0x686dc266a58548027cd68a34a53ea59f7fc49edf6ba176777ccc197c22c58b26" },
] as const;

describe("selectOrderDomain", () => {
  test("v1: domain version 2, the (neg risk) CTF Exchange V2 on both chains", () => {
    for (const chainId of [137, 80002]) {
      const official = getContractConfig(chainId);
      expect(selectOrderDomain({ chainId, negRisk: false, version: "v1" })).toEqual({
        name: "Polymarket CTF Exchange",
        version: "2",
        chainId,
        verifyingContract: EXCHANGE_V2,
      });
      expect(selectOrderDomain({ chainId, negRisk: true, version: "v1" }).verifyingContract).toBe(NEG_RISK_EXCHANGE_V2);
      expect(EXCHANGE_V2).toBe(official.exchangeV2 as typeof EXCHANGE_V2);
      expect(NEG_RISK_EXCHANGE_V2).toBe(official.negRiskExchangeV2 as typeof NEG_RISK_EXCHANGE_V2);
    }
  });

  test("v2: domain version 3, ExchangeV3 of the chain (neg risk too), equal to the official configuration", () => {
    expect(EXCHANGE_V3[137]).toBe("0xe3333700cA9d93003F00f0F71f8515005F6c00Aa");
    expect(EXCHANGE_V3[80002]).toBe("0x9fE6e61422AdB6F610d8597F9684b16912D50C3D");
    for (const chainId of [137, 80002]) {
      for (const negRisk of [false, true]) {
        expect(selectOrderDomain({ chainId, negRisk, version: "v2" })).toEqual({
          name: "Polymarket CTF Exchange",
          version: "3",
          chainId,
          verifyingContract: getContractConfig(chainId).exchangeV3 as `0x${string}`,
        });
      }
    }
  });

  test("version defaults to v1; a chain without ExchangeV3 and a bad version or chain are refused", () => {
    expect(selectOrderDomain({ chainId: 137, negRisk: false })).toEqual(selectOrderDomain({ chainId: 137, negRisk: false, version: "v1" }));
    expect(buildUnsignedOrder({ chainId: 137, negRisk: false, message: VECTOR_ORDER }).domain.version).toBe("2");
    expect(() => selectOrderDomain({ chainId: 1, negRisk: false, version: "v2" })).toThrow(RangeError);
    expect(() => selectOrderDomain({ chainId: 137, negRisk: false, version: "v3" as any })).toThrow(RangeError);
    expect(() => selectOrderDomain({ chainId: 0, negRisk: false, version: "v1" })).toThrow(RangeError);
  });
});

describe("order hash under both domains", () => {
  test("known vectors: equal to ours, viem's and the official client's hash", () => {
    const account = privateKeyToAccount(generatePrivateKey());
    for (const v of VECTORS) {
      const unsigned = buildUnsignedOrder({ ...v, message: VECTOR_ORDER });
      expect(orderHash({ ...v, message: VECTOR_ORDER })).toBe(v.hash);
      expect(hashTypedData(unsigned as any)).toBe(v.hash);
      const official = officialTypedData(unsigned.domain, { ...VECTOR_ORDER, side: "BUY" }, account);
      expect(official.typedData.domain).toEqual(unsigned.domain);
      expect(official.hash).toBe(v.hash);
    }
  });

  test("the domain separators of the three exchanges differ and v1 stays as before", () => {
    const seps = new Set([orderDomainSeparator(137, false), orderDomainSeparator(137, true), orderDomainSeparator(137, false, "v2"), orderDomainSeparator(80002, false, "v2")]);
    expect(seps.size).toBe(4);
    expect(orderDomainSeparator(137, true, "v2")).toBe(orderDomainSeparator(137, false, "v2"));
  });

  test("300 random orders: our hash equals the official client's and viem's under every domain", () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const rand = (bits: number) => BigInt(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(bits / 8))).toString("hex")}`);
    for (let i = 0; i < 300; i++) {
      const sel = { chainId: i % 2 ? 137 : 80002, negRisk: i % 3 === 0, version: i % 4 < 2 ? "v1" : "v2" } as const;
      const message: OrderMessage = {
        salt: String(Number(rand(48))),
        maker: `0x${rand(160).toString(16).padStart(40, "0")}`,
        signer: account.address,
        tokenId: rand(256).toString(),
        makerAmount: rand(64).toString(),
        takerAmount: rand(64).toString(),
        side: (i % 2) as 0 | 1,
        signatureType: i % 4,
        timestamp: String(1_700_000_000_000 + i),
        metadata: `0x${rand(256).toString(16).padStart(64, "0")}`,
        builder: `0x${rand(256).toString(16).padStart(64, "0")}`,
      };
      const unsigned = buildUnsignedOrder({ ...sel, message });
      const ours = orderHash({ ...sel, message });
      expect(hashTypedData(unsigned as any)).toBe(ours);
      expect(officialTypedData(unsigned.domain, { ...message, side: i % 2 ? "SELL" : "BUY" }, account).hash).toBe(ours);
    }
  });
});
