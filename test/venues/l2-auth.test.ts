import { describe, expect, test } from "bun:test";
import { buildL2Signature, decodeSecret, l2Headers, verifyL2Signature } from "../../src/venues/clob/l2-auth.ts";

const VECTOR = {
  secret: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
  timestamp: "1000000",
  method: "test-sign",
  path: "/orders",
  body: '{"hash": "0x123"}',
};

describe("L2 HMAC signature", () => {
  test("matches the known vector (CONTRACT 11.2)", () => {
    expect(buildL2Signature(VECTOR)).toBe("ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=");
  });

  test("accepts a numeric timestamp", () => {
    expect(buildL2Signature({ ...VECTOR, timestamp: 1000000 })).toBe("ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=");
  });

  test("url-safe and unpadded secrets decode to the same key", () => {
    const std = "q+/Aq+/Aq+/Aq+/Aq+/Aq+/Aq+/Aq+/Aq+/Aq+/Aq+8=";
    const urlSafe = "q-_Aq-_Aq-_Aq-_Aq-_Aq-_Aq-_Aq-_Aq-_Aq-_Aq-8";
    expect(decodeSecret(urlSafe).equals(decodeSecret(std))).toBe(true);
    expect(buildL2Signature({ ...VECTOR, secret: urlSafe })).toBe(buildL2Signature({ ...VECTOR, secret: std }));
  });

  test("output is url-safe base64 with padding", () => {
    for (let i = 0; i < 20; i++) {
      const sig = buildL2Signature({ ...VECTOR, timestamp: String(i) });
      expect(sig).toMatch(/^[A-Za-z0-9_-]{43}=$/);
    }
  });

  test("no body and an empty body sign the same message", () => {
    const a = buildL2Signature({ secret: VECTOR.secret, timestamp: 1, method: "GET", path: "/auth/api-keys" });
    const b = buildL2Signature({ secret: VECTOR.secret, timestamp: 1, method: "GET", path: "/auth/api-keys", body: "" });
    expect(a).toBe(b);
    expect(a).not.toBe(buildL2Signature({ secret: VECTOR.secret, timestamp: 1, method: "GET", path: "/auth/api-key" }));
  });

  test("verifyL2Signature accepts the right signature and rejects a changed body", () => {
    const signature = buildL2Signature(VECTOR);
    expect(verifyL2Signature({ ...VECTOR, signature })).toBe(true);
    expect(verifyL2Signature({ ...VECTOR, signature: signature.replace(/-/g, "+").replace(/_/g, "/") })).toBe(true);
    expect(verifyL2Signature({ ...VECTOR, body: '{"hash": "0x124"}', signature })).toBe(false);
    expect(verifyL2Signature({ ...VECTOR, signature: "short" })).toBe(false);
  });

  test("l2Headers carries the five POLY_ headers", () => {
    const creds = { api_key: "key-1", api_secret: VECTOR.secret, passphrase: "pp", address: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" };
    const h = l2Headers(creds, { method: "test-sign", path: "/orders", body: VECTOR.body, timestamp: 1000000 });
    expect(h).toEqual({
      POLY_ADDRESS: creds.address,
      POLY_SIGNATURE: "ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=",
      POLY_TIMESTAMP: "1000000",
      POLY_API_KEY: "key-1",
      POLY_PASSPHRASE: "pp",
    });
    const now = Math.floor(Date.now() / 1000);
    const live = l2Headers(creds, { method: "GET", path: "/ok" });
    expect(Math.abs(Number(live.POLY_TIMESTAMP) - now)).toBeLessThanOrEqual(1);
  });
});
