import { describe, expect, test } from "bun:test";
import { bytesToHex, getAddress, hashDomain, hashStruct, hashTypedData } from "viem";
import { orderDomainSeparator, orderHash, orderStructHash } from "../../src/eip712/order-hash.ts";
import {
  EXCHANGE_V2,
  NEG_RISK_EXCHANGE_V2,
  ORDER_TYPES,
  ZERO_BYTES32,
  buildUnsignedOrder,
  randomSalt,
} from "../../src/eip712/order-typed-data.ts";
import type { OrderMessage } from "../../src/venues/venue.ts";
import { VECTOR_ORDER, VECTOR_ORDER_HASH } from "../support/vector-order.ts";


const randomBytes = (n: number) => crypto.getRandomValues(new Uint8Array(n));
const randomUint = (bytes: number) => BigInt(bytesToHex(randomBytes(bytes))).toString();
const randomInt = (max: number) => Math.floor(Math.random() * max);

function randomMessage(): OrderMessage {
  const maker = getAddress(bytesToHex(randomBytes(20)));
  const lower = Math.random() < 0.3;
  return {
    salt: randomSalt(),
    maker: lower ? (maker.toLowerCase() as `0x${string}`) : maker,
    signer: Math.random() < 0.5 ? maker : getAddress(bytesToHex(randomBytes(20))),
    tokenId: randomUint(1 + randomInt(32)),
    makerAmount: randomUint(1 + randomInt(8)),
    takerAmount: randomUint(1 + randomInt(8)),
    side: (randomInt(2) as 0 | 1),
    signatureType: randomInt(3),
    timestamp: String(1_700_000_000_000 + randomInt(1e11)),
    metadata: Math.random() < 0.5 ? ZERO_BYTES32 : bytesToHex(randomBytes(32)),
    builder: bytesToHex(randomBytes(32)),
  };
}

describe("orderHash", () => {
  test("contract vector", () => {
    expect(orderHash({ chainId: 137, negRisk: false, message: VECTOR_ORDER })).toBe(VECTOR_ORDER_HASH);
    expect(hashTypedData(buildUnsignedOrder({ chainId: 137, negRisk: false, message: VECTOR_ORDER }))).toBe(VECTOR_ORDER_HASH);
  });

  test("depends on the exchange and the chain", () => {
    const negRisk = orderHash({ chainId: 137, negRisk: true, message: VECTOR_ORDER });
    const amoy = orderHash({ chainId: 80002, negRisk: false, message: VECTOR_ORDER });
    expect(negRisk).not.toBe(VECTOR_ORDER_HASH);
    expect(amoy).not.toBe(VECTOR_ORDER_HASH);
    expect(amoy).not.toBe(negRisk);
    // The cache keeps answers per chain and exchange, in any order of calls.
    expect(orderHash({ chainId: 137, negRisk: false, message: VECTOR_ORDER })).toBe(VECTOR_ORDER_HASH);
  });

  test("equals viem's hashTypedData on random orders (chains 137 and 80002, both exchanges)", () => {
    for (let i = 0; i < 400; i++) {
      const chainId = [137, 80002, 1 + randomInt(1_000_000)][i % 3];
      const negRisk = i % 2 === 1;
      const message = randomMessage();
      const unsigned = buildUnsignedOrder({ chainId, negRisk, message });
      expect(unsigned.domain.verifyingContract).toBe(negRisk ? NEG_RISK_EXCHANGE_V2 : EXCHANGE_V2);
      expect(orderHash({ chainId, negRisk, message })).toBe(hashTypedData(unsigned));
    }
  });

  test("extreme field values equal viem's", () => {
    const max = ((1n << 256n) - 1n).toString();
    const message: OrderMessage = {
      ...VECTOR_ORDER,
      salt: "0",
      tokenId: max,
      makerAmount: max,
      takerAmount: "0",
      side: 1,
      signatureType: 255,
      timestamp: max,
      metadata: `0x${"ff".repeat(32)}`,
      builder: `0x${"AB".repeat(32)}`,
    };
    const unsigned = buildUnsignedOrder({ chainId: 80002, negRisk: true, message });
    expect(orderHash({ chainId: 80002, negRisk: true, message })).toBe(hashTypedData(unsigned));
  });

  test("uint256 texts around 2^32 and 2^53, and texts seen before, equal viem's", () => {
    const values = ["0", "1", "255", "256", "4294967295", "4294967296", "9007199254740991", "9007199254740992", "9007199254740993", "9999999999999999", "10000000000000000", "18446744073709551616"];
    for (let round = 0; round < 2; round++) {
      for (const v of values) {
        const message: OrderMessage = { ...VECTOR_ORDER, salt: v, makerAmount: v, takerAmount: values[(values.indexOf(v) + 3) % values.length], timestamp: v, tokenId: v };
        expect(orderHash({ chainId: 137, negRisk: false, message })).toBe(hashTypedData(buildUnsignedOrder({ chainId: 137, negRisk: false, message })));
      }
    }
  });

  test("a hex text accepted for one type is still checked as another", () => {
    const builder = `0x${"12".repeat(32)}` as `0x${string}`;
    expect(() => orderHash({ chainId: 137, negRisk: false, message: { ...VECTOR_ORDER, builder } })).not.toThrow();
    expect(() => orderHash({ chainId: 137, negRisk: false, message: { ...VECTOR_ORDER, maker: builder } })).toThrow(TypeError);
    expect(() => orderHash({ chainId: 137, negRisk: false, message: { ...VECTOR_ORDER, metadata: VECTOR_ORDER.maker } })).toThrow(TypeError);
    expect(() => orderHash({ chainId: 137, negRisk: false, message: { ...VECTOR_ORDER, salt: VECTOR_ORDER.maker } })).toThrow(TypeError);
  });

  test("parts equal viem's domain separator and struct hash", () => {
    const unsigned = buildUnsignedOrder({ chainId: 80002, negRisk: true, message: VECTOR_ORDER });
    expect(orderDomainSeparator(80002, true)).toBe(hashDomain({ domain: unsigned.domain, types: unsigned.types }));
    expect(orderStructHash(VECTOR_ORDER)).toBe(hashStruct({ data: unsigned.message, primaryType: "Order", types: unsigned.types }));
  });

  test("rejects malformed fields instead of hashing them", () => {
    const bad: Array<Partial<Record<keyof OrderMessage, unknown>>> = [
      { salt: "-1" },
      { salt: "1.5" },
      { salt: "0x10" },
      { tokenId: (1n << 256n).toString() },
      { maker: "0x1234" },
      { signer: "f39Fd6e51aad88F6F4ce6aB8827279cffFb92266" },
      { side: 256 },
      { side: -1 },
      { signatureType: 1.5 },
      { metadata: "0x00" },
      { builder: `0x${"zz".repeat(32)}` },
    ];
    for (const patch of bad) {
      const message = { ...VECTOR_ORDER, ...patch } as OrderMessage;
      expect(() => orderHash({ chainId: 137, negRisk: false, message })).toThrow();
    }
    expect(() => orderHash({ chainId: 0, negRisk: false, message: VECTOR_ORDER })).toThrow();
    // A failed call leaves no state behind.
    expect(orderHash({ chainId: 137, negRisk: false, message: VECTOR_ORDER })).toBe(VECTOR_ORDER_HASH);
  });
});

describe("buildUnsignedOrder and randomSalt", () => {
  test("the typed data has the contract's shape", () => {
    const unsigned = buildUnsignedOrder({ chainId: 137, negRisk: false, message: VECTOR_ORDER });
    expect(unsigned.primaryType).toBe("Order");
    expect(unsigned.domain).toEqual({
      name: "Polymarket CTF Exchange",
      version: "2",
      chainId: 137,
      verifyingContract: EXCHANGE_V2,
    });
    const typeString = `Order(${unsigned.types.Order.map((f) => `${f.type} ${f.name}`).join(",")})`;
    expect(typeString).toBe(
      "Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)",
    );
    expect(unsigned.types.EIP712Domain.map((f) => `${f.type} ${f.name}`)).toEqual([
      "string name",
      "string version",
      "uint256 chainId",
      "address verifyingContract",
    ]);
    // JSON round trip keeps it intact: strings for uint256, numbers for uint8.
    const json = JSON.parse(JSON.stringify(unsigned));
    expect(json).toEqual(unsigned);
    expect(typeof json.message.salt).toBe("string");
    expect(typeof json.message.side).toBe("number");
    expect(hashTypedData(json)).toBe(VECTOR_ORDER_HASH);
  });

  test("the types are ORDER_TYPES, fresh on every call", () => {
    const a = buildUnsignedOrder({ chainId: 137, negRisk: false, message: VECTOR_ORDER });
    const b = buildUnsignedOrder({ chainId: 137, negRisk: false, message: VECTOR_ORDER });
    expect(a.types).toEqual(ORDER_TYPES as unknown as typeof a.types);
    expect(a.types).not.toBe(b.types);
    expect(a.types.Order[0]).not.toBe(b.types.Order[0]);
  });

  test("randomSalt is a decimal integer in [1, 2^53 − 1] and varies", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const salt = randomSalt();
      expect(salt).toMatch(/^[1-9]\d*$/);
      const n = Number(salt);
      expect(Number.isSafeInteger(n)).toBe(true);
      expect(n >= 1 && n <= Number.MAX_SAFE_INTEGER).toBe(true);
      seen.add(salt);
    }
    expect(seen.size).toBeGreaterThan(1990);
  });
});
