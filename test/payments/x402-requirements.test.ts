/** The payment option per network (USDC contract and its EIP-712 name differ between Base and Base Sepolia) and the configuration's guards. */
import { expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { requirementsV1, requirementsV2, termsFrom } from "../../src/modules/payments/requirements.ts";
import { PAY_TO, USDC_BASE, USDC_BASE_SEPOLIA } from "./x402-support.ts";

const env = (extra: Record<string, string>) => loadConfig({ X402_ENABLED: "true", X402_PAY_TO: PAY_TO.toLowerCase(), ...extra });

test("Base: USDC 0x8335…2913, EIP-712 name \"USD Coin\"; the price in 6-decimal units", () => {
  const terms = termsFrom(env({ X402_NETWORK: "eip155:8453", X402_PRICE_USDC: "0.25" }).x402);
  expect(requirementsV2(terms)).toEqual({
    scheme: "exact",
    network: "eip155:8453",
    amount: "250000",
    asset: USDC_BASE,
    payTo: PAY_TO,
    maxTimeoutSeconds: 300,
    extra: { name: "USD Coin", version: "2" },
  });
  expect(requirementsV1(terms, "http://x/v1/agents")).toMatchObject({ network: "base", maxAmountRequired: "250000", asset: USDC_BASE, resource: "http://x/v1/agents" });
});

test("Base Sepolia (the default): USDC 0x036C…CF7e, EIP-712 name \"USDC\"; default price 0.001", () => {
  const terms = termsFrom(env({}).x402);
  expect(requirementsV2(terms)).toMatchObject({ network: "eip155:84532", amount: "1000", asset: USDC_BASE_SEPOLIA, extra: { name: "USDC", version: "2" } });
  expect(String(requirementsV1(terms, "r").network)).toBe("base-sepolia");
});

test("the configuration refuses another network, a price of zero or with more than 6 decimals, and a missing payee", () => {
  expect(() => env({ X402_NETWORK: "eip155:1" })).toThrow(/X402_NETWORK/);
  expect(() => env({ X402_PRICE_USDC: "0.0000001" })).toThrow(/X402_PRICE_USDC/);
  expect(() => termsFrom(env({ X402_PRICE_USDC: "0" }).x402)).toThrow(/X402_PRICE_USDC/);
  expect(() => loadConfig({ X402_ENABLED: "true" })).toThrow(/X402_PAY_TO/);
});
