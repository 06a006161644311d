import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.ts";

/** The ConfigError thrown for `env`, failing the test when none is thrown. */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

describe("loadConfig", () => {
  test("defaults on an empty environment", () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.host).toBe("0.0.0.0");
    expect(c.databaseUrl).toBeNull();
    expect(c.dataDir).toBe(resolve("./data"));
    expect(c.venue).toBe("paper");
    expect(c.venueUrl).toBeNull();
    expect(c.paperMarkets).toBeNull(); // the embedded fixtures/markets.json
    expect(c.builderCode).toBe(`0x${"0".repeat(64)}`);
    expect(c.builderCodeDefaulted).toBe(true);
    expect(c.chainId).toBe(137);
    expect(c.sealKeyFile).toBeNull();
    expect(c.sealSecretKey).toBeNull();
    expect(c.adminToken).toBeNull();
    expect(c.x402).toEqual({ enabled: false, payTo: null, network: "eip155:84532", priceUsdc: "0.001", facilitatorUrl: null });
    expect(c.killDeadlineMs).toBe(5000);
    expect(c.killConcurrency).toBe(64);
    expect(c.logLevel).toBe("info");
    expect(c.maxBodyBytes).toBeGreaterThan(0);
    expect(c.rateLimitPerS).toBe(0);
  });

  test("empty strings count as unset", () => {
    const c = loadConfig({ PORT: "", VENUE: "", LOG_LEVEL: "", DATABASE_URL: "" });
    expect(c.port).toBe(8080);
    expect(c.venue).toBe("paper");
    expect(c.logLevel).toBe("info");
    expect(c.databaseUrl).toBeNull();
  });

  test("valid values are read", () => {
    const builder = `0x${"Ab".repeat(32)}`;
    const c = loadConfig({
      PORT: "9090",
      HOST: "127.0.0.1",
      DATABASE_URL: "postgres://u@localhost:5432/db",
      DATA_DIR: "/tmp/brokerage-data",
      VENUE: "clob",
      VENUE_URL: "http://localhost:7777",
      BUILDER_CODE: builder,
      CHAIN_ID: "80002",
      ADMIN_TOKEN: "0123456789abcdef-admin",
      X402_ENABLED: "true",
      X402_PAY_TO: "0x000000000000000000000000000000000000dEaD",
      KILL_DEADLINE_MS: "2500",
      KILL_CONCURRENCY: "8",
      LOG_LEVEL: "debug",
    });
    expect(c.port).toBe(9090);
    expect(c.host).toBe("127.0.0.1");
    expect(c.databaseUrl).toBe("postgres://u@localhost:5432/db");
    expect(c.dataDir).toBe("/tmp/brokerage-data");
    expect(c.venue).toBe("clob");
    expect(c.venueUrl).toBe("http://localhost:7777");
    expect(c.builderCode).toBe(builder.toLowerCase() as `0x${string}`);
    expect(c.builderCodeDefaulted).toBe(false);
    expect(c.chainId).toBe(80002);
    expect(c.adminToken).toBe("0123456789abcdef-admin");
    expect(c.x402.enabled).toBe(true);
    expect(c.x402.payTo).toBe("0x000000000000000000000000000000000000dEaD");
    expect(c.killDeadlineMs).toBe(2500);
    expect(c.killConcurrency).toBe(8);
    expect(c.logLevel).toBe("debug");
    expect(loadConfig({ DATABASE_URL: "postgresql://h/db" }).databaseUrl).toBe("postgresql://h/db");
  });

  const bad: [string, Record<string, string>][] = [
    ["PORT", { PORT: "abc" }],
    ["PORT", { PORT: "70000" }],
    ["PORT", { PORT: "-1" }],
    ["VENUE", { VENUE: "x" }],
    ["VENUE_URL", { VENUE: "clob" }],
    ["VENUE_URL", { VENUE: "clob", VENUE_URL: "not a url" }],
    ["BUILDER_CODE", { BUILDER_CODE: `0x${"00".repeat(31)}` }],
    ["BUILDER_CODE", { BUILDER_CODE: `0x${"00".repeat(33)}` }],
    ["CHAIN_ID", { CHAIN_ID: "1" }],
    ["LOG_LEVEL", { LOG_LEVEL: "loud" }],
    ["DATABASE_URL", { DATABASE_URL: "mysql://root@localhost/db" }],
    ["KILL_DEADLINE_MS", { KILL_DEADLINE_MS: "10" }],
    ["X402_ENABLED", { X402_ENABLED: "yes" }],
    ["X402_PAY_TO", { X402_ENABLED: "true" }],
  ];
  for (const [name, env] of bad) {
    test(`${JSON.stringify(env)} fails naming ${name}`, () => {
      const e = configError(env);
      expect(e.name).toBe("ConfigError");
      expect(e.message).toContain(name);
      // The message names the bad variable, not some other one.
      for (const other of ["PORT", "VENUE", "BUILDER_CODE", "CHAIN_ID", "LOG_LEVEL", "DATABASE_URL"]) {
        if (!name.startsWith(other) && !other.startsWith(name)) expect(e.message).not.toMatch(new RegExp(`\\b${other}\\b`));
      }
    });
  }

  test("with several bad variables, the error names one of them", () => {
    const e = configError({ PORT: "abc", LOG_LEVEL: "loud" });
    expect(e.message).toMatch(/\b(PORT|LOG_LEVEL)\b/);
  });

  test("secret values are not echoed in the error message", () => {
    const e = configError({ SEAL_SECRET_KEY: "short-secret-value!" });
    expect(e.message).toContain("SEAL_SECRET_KEY");
    expect(e.message).not.toContain("short-secret-value!");
  });
});
