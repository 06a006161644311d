/**
 * Payload mode for every signature type (CONTRACT sections 4, 6 and 7) through app.handle: agents
 * declare how they sign (EOA, proxy, Safe, deposit wallet with its owner EOA); intents on v1 and v2
 * markets return the unsigned order for the right exchange domain; signatures made by the official
 * Polymarket client for types 0-3 are accepted and forwarded unchanged; a signature over another
 * order, by another key, a tampered ERC-7739 wrapper, or a signature of the wrong form is 400
 * invalid_signature and changes nothing. On PGlite and, when TEST_DATABASE_URL is set, PostgreSQL.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { getAddress, hashTypedData, type LocalAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { PostSignedOrder } from "../../src/venues/venue.ts";
import { createTestApp, type TestApp } from "../support/app.ts";
import { describeEachDatabase } from "../support/databases.ts";
import { hookedVenue } from "../support/hooked-venue.ts";
import { officialSignature } from "../support/official-client.ts";
import { BTC_YES, DEM_YES, EXCHANGE_V2, expectInvalid, expectProblem, NEG_RISK_EXCHANGE_V2, NEWSOM_YES, submitSigned } from "../support/payload.ts";

const EXCHANGE_V3_POLYGON = "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa";
const randomAddress = () => privateKeyToAccount(generatePrivateKey()).address;

/** Markets the test reads: DEM (v1), NEWSOM (v1, neg risk), BTC (reported as a v2 market), each with a resting price. */
const MARKETS = [
  { token: DEM_YES, price: 0.4, domain: { version: "2", verifyingContract: EXCHANGE_V2 } },
  { token: NEWSOM_YES, price: 0.2, domain: { version: "3", verifyingContract: EXCHANGE_V3_POLYGON }, v2: true },
  { token: NEWSOM_YES, price: 0.2, domain: { version: "2", verifyingContract: NEG_RISK_EXCHANGE_V2 } },
  { token: BTC_YES, price: 0.3, domain: { version: "3", verifyingContract: EXCHANGE_V3_POLYGON }, v2: true },
] as const;

describeEachDatabase("signature types 0-3 in payload mode", (_kind, database) => {
  let t: TestApp;
  const posted: PostSignedOrder[] = [];
  const v2Tokens = new Set<string>();

  beforeAll(async () => {
    const h = hookedVenue();
    // The venue branch adds `version` to markets; until then the test reports chosen tokens as v2.
    h.overrides.getMarketByToken = async (token: string, opts?: unknown) => {
      const m = await h.paper.getMarketByToken(token, opts as any);
      return m && v2Tokens.has(token) ? { ...m, version: "v2" } : m;
    };
    h.overrides.postSignedOrder = async (req: PostSignedOrder, opts?: unknown) => {
      posted.push(req);
      return h.paper.postSignedOrder(req, opts as any);
    };
    t = await createTestApp(await database(), { venue: h.venue });
  });
  afterAll(async () => {
    await t?.app.stop();
  });

  /** An agent of `type` whose EOA is `eoa`: the maker is the EOA (0), a proxy/Safe (1, 2) or a deposit wallet (3). */
  async function agentOf(type: 0 | 1 | 2 | 3, key?: string) {
    const eoa = privateKeyToAccount(generatePrivateKey());
    const wallet = type === 0 ? eoa.address : randomAddress();
    const body: Record<string, unknown> = { wallet_address: wallet, signature_type: type };
    if (type === 1 || type === 2) body.signer_address = eoa.address;
    if (type === 3) body.owner_address = eoa.address;
    const { key: k, agent } = await t.newAgent({ key, body });
    return { key: k, agent, eoa, wallet };
  }

  async function intent(tr: { key: string; agent: any }, token: string, price: number) {
    const res = await t.call("POST", "/v1/orders/intent", { key: tr.key, body: { agent_id: tr.agent.id, market_id: token, side: "buy", size_usdc: 5, price } });
    if (res.status !== 201) throw new Error(`intent: ${res.status} ${res.text}`);
    return res.body;
  }

  test("agents: owner_address is required for type 3 and refused otherwise; the zero address never", async () => {
    const { key } = await t.newOrg();
    const eoa = randomAddress();
    const wallet = randomAddress();
    const zero = `0x${"0".repeat(40)}`;
    const post = (body: Record<string, unknown>) => t.call("POST", "/v1/agents", { key, body });
    expectInvalid(await post({ wallet_address: wallet, signature_type: 3 }), "/owner_address");
    expectInvalid(await post({ wallet_address: wallet, signature_type: 0, owner_address: eoa }), "/owner_address");
    expectInvalid(await post({ wallet_address: wallet, signer_address: eoa, signature_type: 2, owner_address: eoa }), "/owner_address");
    expectInvalid(await post({ wallet_address: wallet, signature_type: 3, owner_address: zero }), "/owner_address");
    expectInvalid(await post({ wallet_address: wallet, signature_type: 3, owner_address: wallet }), "/owner_address");
    expectInvalid(await post({ wallet_address: wallet, signer_address: eoa, signature_type: 3, owner_address: eoa }), "/signer_address");
    expectInvalid(await post({ wallet_address: zero }), "/wallet_address");
    expectInvalid(await post({ wallet_address: wallet, signer_address: zero, signature_type: 1 }), "/signer_address");
    expect((await t.call("GET", "/v1/agents", { key })).body.data).toEqual([]); // nothing was created

    const ok = await post({ wallet_address: wallet, signature_type: 3, owner_address: eoa });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ wallet_address: wallet.toLowerCase(), signer_address: wallet.toLowerCase(), signature_type: 3, owner_address: eoa.toLowerCase() });
    const read = await t.call("GET", `/v1/agents/${ok.body.id}`, { key });
    expect(read.body.owner_address).toBe(eoa.toLowerCase());
    const plain = await post({ wallet_address: eoa });
    expect(plain.status).toBe(201);
    expect(plain.body.owner_address).toBeNull();
  });

  for (const type of [0, 1, 2, 3] as const) {
    test(`type ${type}: the official client's signatures are accepted on v1, neg-risk and v2 markets and forwarded unchanged`, async () => {
      const tr = await agentOf(type);
      for (const m of MARKETS) {
        if ("v2" in m) v2Tokens.add(m.token);
        else v2Tokens.delete(m.token);
        const body = await intent(tr, m.token, m.price);
        const unsigned = body.unsigned_order;
        expect(unsigned.domain).toEqual({ name: "Polymarket CTF Exchange", chainId: 137, ...m.domain });
        expect(unsigned.message.signatureType).toBe(type);
        // EIP-55 checksummed, as the official client writes them (issue #22, item 11).
        expect(unsigned.message.maker).toBe(getAddress(tr.wallet));
        expect(unsigned.message.signer).toBe(getAddress(type === 3 ? tr.wallet : tr.eoa.address));
        expect(body.order_hash).toBe(hashTypedData(unsigned));

        const signature = await officialSignature(tr.eoa, unsigned);
        expect(signature.length).toBe(type === 3 ? 636 : 132);
        const res = await submitSigned(t, tr.key, body.order_id, signature);
        expect(res.status).toBe(200);
        expect(res.body.status).toBe("open");
        const sent = posted.find((p) => p.order.salt === unsigned.message.salt);
        expect(sent?.signature).toBe(signature);
      }
      v2Tokens.clear();
    });
  }

  for (const type of [0, 1, 2, 3] as const) {
    test(`type ${type}: a signature over another order, by another key, or of the wrong form is 400 invalid_signature and changes nothing`, async () => {
      const tr = await agentOf(type);
      const a = await intent(tr, DEM_YES, 0.4);
      const b = await intent(tr, DEM_YES, 0.41);
      const stranger: LocalAccount = privateKeyToAccount(generatePrivateKey());
      const refusals: string[] = [
        await officialSignature(tr.eoa, b.unsigned_order), // another order
        await officialSignature(stranger, a.unsigned_order), // another key
      ];
      const good = await officialSignature(tr.eoa, a.unsigned_order);
      if (type === 3) {
        refusals.push(good.slice(0, 132)); // the inner 65 bytes alone
        refusals.push(`${good.slice(0, 132)}${"00".repeat(32)}${good.slice(196)}`); // zeroed domain separator
        refusals.push(`${good.slice(0, 196)}${"11".repeat(32)}${good.slice(260)}`); // foreign contents hash
        refusals.push(`${good.slice(0, -4)}00bb`); // wrong type string length
      } else {
        // The ERC-7739 wrapped form is for deposit wallets only.
        refusals.push(`${good}${"00".repeat(317 - 65)}`);
      }
      for (const signature of refusals) {
        const res = await submitSigned(t, tr.key, a.order_id, signature);
        const p = expectProblem(res, 400, "invalid_signature");
        expect(res.text).not.toContain(signature.slice(2, 42));
        expect(p.detail.length).toBeGreaterThan(0);
      }
      // Longer than the largest signature (the 317-byte wrapper): a schema error.
      expectInvalid(await submitSigned(t, tr.key, a.order_id, `0x${"ab".repeat(318)}`), "/signature");
      const still = await t.call("GET", `/v1/orders/${a.order_id}`, { key: tr.key });
      expect(still.body.status).toBe("awaiting_signature");
      expect(posted.some((p) => p.order.salt === a.unsigned_order.message.salt)).toBe(false);
      // The right signature still goes through afterwards.
      const res = await submitSigned(t, tr.key, a.order_id, good);
      expect(res.status).toBe(200);
    });
  }
});
