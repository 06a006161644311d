import { describe, expect, test } from "bun:test";
import { createLogger, type LogLevel } from "../../src/observability/logger.ts";
import { REDACTED, redactFields, scrubString } from "../../src/observability/redaction.ts";

function capture(level: LogLevel = "debug") {
  const lines: string[] = [];
  const logger = createLogger({ level, sink: (l) => lines.push(l) });
  return { logger, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const API_KEY = "bk_Q2h3bm9wcXJzdHV2d3h5ejAxMjM0NTY3ODlhYmNk";
const SIG65 = `0x${"ab".repeat(65)}`;
const PRIV32 = `0x${"4f".repeat(32)}`;
const ORDER_HASH = `0x${"9c".repeat(32)}`;
const VENUE_SECRET = "dmVudWUtc2VjcmV0LXZhbHVlLTEyMzQ1Njc4OTA=";
const PASSPHRASE = "pass-phrase-do-not-log";
const UUID_KEY = "0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3abcd";
const ADMIN = "admin-token-value-0123456789";

describe("logger", () => {
  test("a line is one JSON object with time, level, msg and fields", () => {
    const { logger, lines, parsed } = capture("info");
    logger.info("order placed", { order_id: "ord_1", size_usdc: 5 });
    expect(lines).toHaveLength(1);
    expect(lines[0].includes("\n")).toBe(false);
    const rec = parsed()[0];
    expect(Object.keys(rec)).toEqual(expect.arrayContaining(["time", "level", "msg"]));
    expect(rec.level).toBe("info");
    expect(rec.msg).toBe("order placed");
    expect(new Date(rec.time as string).toISOString()).toBe(rec.time as string);
    expect(rec.order_id).toBe("ord_1");
    expect(rec.size_usdc).toBe(5);
  });

  test("planted secrets at several depths never appear in the output", () => {
    const { logger, lines, parsed } = capture("debug");
    const planted = {
      api_key: UUID_KEY,
      headers: {
        "X-API-Key": API_KEY,
        Authorization: `Bearer ${ADMIN}`,
        POLY_SIGNATURE: "c2lnbmF0dXJlLWhtYWM=",
        POLY_PASSPHRASE: PASSPHRASE,
        POLY_API_KEY: UUID_KEY,
        "PAYMENT-SIGNATURE": "eyJwYXlsb2FkIjp7fX0=",
        "x-payment": "eyJ4NDAyIjoxfQ==",
        "X-PAYMENT": "eyJ2MSI6InVwcGVyIn0=",
        "Payment-Signature": "eyJtaXhlZCI6MX0=",
        cookie: "session=abc123456",
        "content-type": "application/json",
      },
      body: {
        creds: { api_secret: VENUE_SECRET, passphrase: PASSPHRASE, scopes: ["order:place"] },
        nested: [{ deeper: { password: "hunter2-hunter2", list: [{ privateKey: PRIV32 }] } }],
        signed_order: { signature: SIG65, signatureType: 0, maker: "0x1111111111111111111111111111111111111111" },
      },
      seal_secret_key: "c2VhbC1zZWNyZXQta2V5LWJhc2U2NC0zMi1ieXRlcyE=",
      sealed_credentials: "c2VhbGVk",
      credentials: { scopes: ["order:place"], key_hint: "…abcd" },
      api_key_record: { id: "key_1", key: API_KEY, created_at: "2026-01-01" },
      admin_token: ADMIN,
      free_text: `client sent ${API_KEY} and signed ${SIG65} with Bearer ${ADMIN}`,
      signer_key: PRIV32,
      token: "tok-abcdefghijkl",
      order_signatures: [SIG65],
      map: new Map<string, unknown>([["secret", VENUE_SECRET], ["ok", 1]]),
      fetchHeaders: new Headers({ authorization: `Bearer ${ADMIN}`, "x-api-key": API_KEY, accept: "json" }),
      url: new URL(`https://u:${PASSPHRASE}@venue.example/x?token=${ADMIN}&market=1`),
      raw: new TextEncoder().encode(VENUE_SECRET),
    };
    logger.info(`request from ${API_KEY}`, planted);
    logger.child({ api_secret: VENUE_SECRET, request_id: "req_1" }).warn("child", { deep: { a: { b: { c: { passphrase: PASSPHRASE } } } } });
    logger.error("failed", { err: new Error(`venue rejected key ${API_KEY} sig ${SIG65}`) });

    const out = lines.join("\n");
    for (const secret of [
      API_KEY,
      SIG65,
      PRIV32,
      VENUE_SECRET,
      PASSPHRASE,
      UUID_KEY,
      ADMIN,
      "hunter2-hunter2",
      "c2lnbmF0dXJlLWhtYWM=",
      "eyJwYXlsb2FkIjp7fX0=",
      "eyJ4NDAyIjoxfQ==",
      "eyJ2MSI6InVwcGVyIn0=",
      "eyJtaXhlZCI6MX0=",
      "session=abc123456",
      "c2VhbC1zZWNyZXQta2V5LWJhc2U2NC0zMi1ieXRlcyE=",
      "c2VhbGVk",
      "tok-abcdefghijkl",
      "bk_Q2h3bm9w", // not even a prefix of the key survives
    ]) {
      expect(out).not.toContain(secret);
    }

    const [first, child, err] = parsed();
    expect(first.msg).toBe(`request from ${REDACTED}`);
    const h = first.headers as Record<string, unknown>;
    expect(h["X-API-Key"]).toBe(REDACTED);
    expect(h.Authorization).toBe(REDACTED);
    expect(h["content-type"]).toBe("application/json");
    const body = first.body as any;
    expect(body.creds.api_secret).toBe(REDACTED);
    expect(body.creds.scopes).toEqual(["order:place"]);
    expect(body.nested[0].deeper.password).toBe(REDACTED);
    expect(body.nested[0].deeper.list[0].privateKey).toBe(REDACTED);
    expect(body.signed_order.signature).toBe(REDACTED);
    expect(body.signed_order.signatureType).toBe(0);
    expect(body.signed_order.maker).toBe("0x1111111111111111111111111111111111111111");
    expect(first.credentials).toBe(REDACTED);
    expect((first.api_key_record as any).id).toBe("key_1");
    expect((first.api_key_record as any).key).toBe(REDACTED);
    expect(first.free_text).toBe(`client sent ${REDACTED} and signed ${REDACTED} with Bearer ${REDACTED}`);
    expect(first.signer_key).toBe(REDACTED);
    expect(first.order_signatures).toBe(REDACTED);
    expect(first.map).toEqual({ secret: REDACTED, ok: 1 });
    expect(first.fetchHeaders).toEqual({ authorization: REDACTED, "x-api-key": REDACTED, accept: "json" });
    expect(first.url as string).toContain("market=1");
    expect(first.raw).toBe(`[binary ${VENUE_SECRET.length} bytes]`);

    expect(child.request_id).toBe("req_1");
    expect(child.api_secret).toBe(REDACTED);
    expect((child.deep as any).a.b.c.passphrase).toBe(REDACTED);

    expect((err.err as any).name).toBe("Error");
    expect((err.err as any).message).toBe(`venue rejected key ${REDACTED} sig ${REDACTED}`);
  });

  test("32-byte hex ids stay readable outside key-ish names", () => {
    const { logger, parsed } = capture();
    const tokenId = "71321045679252212594626385532706912750332728571942532289631379312455583992563";
    logger.info("intent", {
      order_hash: ORDER_HASH,
      condition_id: ORDER_HASH,
      builder_code: ORDER_HASH,
      token_id: tokenId,
      tokens: [{ token_id: tokenId, outcome: "Yes" }],
      market_id: tokenId,
      signature_type: 1,
      key_hint: "…abcd",
      idempotency_key: "7d9f3c1e-0000-4000-8000-000000000000",
      wallet_key: ORDER_HASH,
      pk: "4f".repeat(32),
    });
    const rec = parsed()[0] as any;
    expect(rec.order_hash).toBe(ORDER_HASH);
    expect(rec.condition_id).toBe(ORDER_HASH);
    expect(rec.builder_code).toBe(ORDER_HASH);
    expect(rec.token_id).toBe(tokenId);
    expect(rec.tokens).toEqual([{ token_id: tokenId, outcome: "Yes" }]);
    expect(rec.signature_type).toBe(1);
    expect(rec.key_hint).toBe("…abcd");
    expect(rec.idempotency_key).toBe("7d9f3c1e-0000-4000-8000-000000000000");
    expect(rec.wallet_key).toBe(REDACTED);
    expect(rec.pk).toBe(REDACTED);
  });

  test("levels filter", () => {
    const { logger, parsed } = capture("warn");
    logger.debug("d");
    logger.info("i");
    logger.warn("w");
    logger.error("e");
    expect(parsed().map((r) => r.level)).toEqual(["warn", "error"]);
    expect(logger.isEnabled("info")).toBe(false);
    expect(logger.isEnabled("error")).toBe(true);

    const all = capture("debug");
    all.logger.debug("d");
    all.logger.info("i");
    expect(all.parsed().map((r) => r.msg)).toEqual(["d", "i"]);

    const errorsOnly = capture("error");
    errorsOnly.logger.child({ a: 1 }).warn("w");
    errorsOnly.logger.child({ a: 1 }).error("e");
    expect(errorsOnly.parsed().map((r) => r.msg)).toEqual(["e"]);
  });

  test("errors are logged as name and message, never with a stack, at every level", () => {
    const info = capture("info");
    info.logger.error("boom", { err: new TypeError("bad thing") });
    const e1 = info.parsed()[0].err as Record<string, unknown>;
    expect(e1).toEqual({ name: "TypeError", message: "bad thing" });
    expect(info.lines[0]).not.toContain("at ");

    info.logger.error("direct", new RangeError(`with ${API_KEY}`) as unknown as Record<string, unknown>);
    expect(info.parsed()[1].err).toEqual({ name: "RangeError", message: `with ${REDACTED}` });

    const debug = capture("debug");
    debug.logger.error("boom", { err: new TypeError("bad thing") });
    expect(debug.parsed()[0].err).toEqual({ name: "TypeError", message: "bad thing" });
    expect(debug.lines[0]).not.toContain("at ");
  });

  test("bigint, circular structures, throwing getters and odd values are safe", () => {
    const { logger, parsed } = capture();
    const circular: Record<string, unknown> = { name: "a" };
    circular.self = circular;
    circular.list = [circular, { back: circular }];
    const shared = { v: 1 };
    const throwing = {
      get boom(): string {
        throw new Error("getter exploded");
      },
      fine: 2,
    };
    const badJson = {
      toJSON() {
        throw new Error("nope");
      },
    };
    expect(() =>
      logger.info("odd", {
        amount: 123456789012345678901234567890n,
        circular,
        twice: [shared, shared],
        throwing,
        badJson,
        nan: Number.NaN,
        inf: Number.POSITIVE_INFINITY,
        sym: Symbol("s"),
        fn: () => 1,
        date: new Date("2026-01-02T03:04:05.000Z"),
        undef: undefined,
        nul: null,
        set: new Set([1n, 2n]),
      }),
    ).not.toThrow();
    const rec = parsed()[0] as any;
    expect(rec.amount).toBe("123456789012345678901234567890");
    expect(rec.circular.name).toBe("a");
    expect(rec.circular.self).toBe("[circular]");
    expect(rec.circular.list[0]).toBe("[circular]");
    expect(rec.circular.list[1].back).toBe("[circular]");
    expect(rec.twice).toEqual([{ v: 1 }, { v: 1 }]);
    expect(rec.throwing).toEqual({ boom: "[unreadable]", fine: 2 });
    expect(rec.badJson).toBe("[unreadable]");
    expect(rec.nan).toBe("NaN");
    expect(rec.inf).toBe("Infinity");
    expect(rec.sym).toBe("Symbol(s)");
    expect(rec.fn).toBe("[function]");
    expect(rec.date).toBe("2026-01-02T03:04:05.000Z");
    expect("undef" in rec).toBe(false);
    expect(rec.nul).toBeNull();
    expect(rec.set).toEqual(["1", "2"]);
  });

  test("never throws: hostile proxies, non-object fields, a throwing sink", () => {
    const { logger, lines } = capture();
    const hostile = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error("no keys");
        },
      },
    );
    expect(() => logger.info("proxy", { hostile })).not.toThrow();
    expect(() => logger.info("top-level proxy", hostile as Record<string, unknown>)).not.toThrow();
    expect(() => logger.info("null fields", null as unknown as Record<string, unknown>)).not.toThrow();
    expect(() => logger.info(12 as unknown as string)).not.toThrow();
    expect(lines.length).toBe(4);
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();

    const broken = createLogger({
      level: "info",
      sink: () => {
        throw new Error("disk full");
      },
    });
    expect(() => broken.info("x")).not.toThrow();
  });

  test("child fields merge; call fields win; reserved names are kept aside", () => {
    const { logger, parsed } = capture();
    const req = logger.child({ request_id: "req_1", route: "/v1/orders/intent" });
    const agent = req.child({ agent_id: "agt_1", route: "/v1/agents/:id/kill" });
    agent.info("kill", { order_count: 3, agent_id: "agt_2", level: "custom", msg: "m" });
    req.info("plain");
    const [a, b] = parsed() as any[];
    expect(a.request_id).toBe("req_1");
    expect(a.route).toBe("/v1/agents/:id/kill");
    expect(a.agent_id).toBe("agt_2");
    expect(a.order_count).toBe(3);
    expect(a.level).toBe("info");
    expect(a.msg).toBe("kill");
    expect(a._level).toBe("custom");
    expect(a._msg).toBe("m");
    expect(b.request_id).toBe("req_1");
    expect(b.agent_id).toBeUndefined();
    expect(b.route).toBe("/v1/orders/intent");
  });

  test("scrubString and redactFields helpers", () => {
    expect(scrubString("short")).toBe("short");
    expect(scrubString(`x ${API_KEY} y`)).toBe(`x ${REDACTED} y`);
    expect(scrubString("bk_short")).toBe("bk_short");
    expect(scrubString(`authorization: bearer ${ADMIN}`)).toBe(`authorization: Bearer ${REDACTED}`);
    expect(scrubString(ORDER_HASH)).toBe(ORDER_HASH);
    expect(redactFields({ Api_Key: "x", nested: { SECRET: 1 } })).toEqual({ Api_Key: REDACTED, nested: { SECRET: REDACTED } });
  });
});
