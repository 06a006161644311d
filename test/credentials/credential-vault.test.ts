import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import sodium from "libsodium-wrappers";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CredentialVault, VaultError, keyHint } from "../../src/crypto/credential-vault.ts";
import type { SealedCredentialFields as VenueCredentials } from "../../src/domain/venue-credentials.ts";
import { SealKeyError, loadOrCreateSealKeyPair } from "../../src/crypto/seal-key-pair.ts";

const CREDS: VenueCredentials = {
  api_key: "0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3abcd",
  api_secret: "c2VjcmV0LXNlY3JldC1zZWNyZXQtU0VDUkVUISE=",
  passphrase: "correct-horse-battery-staple",
};

let root: string;
beforeAll(async () => {
  await sodium.ready;
  root = await mkdtemp(join(tmpdir(), "vault-test-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

let n = 0;
const freshDir = () => join(root, `d${++n}`, "data");

function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

describe("CredentialVault", () => {
  test("round trip with and without passphrase", async () => {
    const vault = new CredentialVault(await loadOrCreateSealKeyPair({ dataDir: freshDir() }));
    const ct = vault.seal(CREDS);
    expect(await vault.withOpened(ct, async (c) => c)).toEqual(CREDS);

    const noPass = { api_key: CREDS.api_key, api_secret: CREDS.api_secret };
    const ct2 = vault.seal(noPass);
    const opened = await vault.withOpened(ct2, async (c) => c);
    expect(opened).toEqual(noPass);
    expect("passphrase" in opened).toBe(false);
  });

  test("opens what crypto_box_seal made, as crypto_box_seal_open does, the first time and with the kept key", async () => {
    const kp = sodium.crypto_box_keypair();
    const vault = new CredentialVault({ publicKey: kp.publicKey, secretKey: kp.privateKey.slice() });
    const sealed = (doc: unknown) => sodium.crypto_box_seal(new TextEncoder().encode(JSON.stringify(doc)), kp.publicKey);
    const boxes = [sealed({ v: 1, k: "key-one", s: "secret-one" }), sealed({ v: 1, k: "key-two", s: "secret-two", p: "pass-two" })];
    const beforenm = spyOn(sodium, "crypto_box_beforenm");
    try {
      for (let round = 0; round < 3; round++) {
        for (const box of boxes) {
          const expected = JSON.parse(new TextDecoder().decode(sodium.crypto_box_seal_open(box, kp.publicKey, kp.privateKey)));
          const opened = await vault.withOpened(box, async (c) => ({ ...c }));
          expect(opened).toEqual({ api_key: expected.k, api_secret: expected.s, ...(expected.p ? { passphrase: expected.p } : {}) });
        }
      }
      // One X25519 per box, not per opening.
      expect(beforenm).toHaveBeenCalledTimes(2);
      // A box changed after its key was kept is refused as before (the MAC), and one with another
      // ephemeral key is a box of its own.
      const tampered = boxes[0].slice();
      tampered[40] ^= 1;
      await expect(vault.withOpened(tampered, async () => 1)).rejects.toBeInstanceOf(VaultError);
      const otherKey = boxes[0].slice();
      otherKey[0] ^= 1;
      await expect(vault.withOpened(otherKey, async () => 1)).rejects.toBeInstanceOf(VaultError);
      // After dispose nothing opens, kept key or not.
      vault.dispose();
      await expect(vault.withOpened(boxes[0], async () => 1)).rejects.toBeInstanceOf(VaultError);
    } finally {
      beforenm.mockRestore();
    }
  });

  test("withOpened returns the callback's value and propagates its error", async () => {
    const vault = new CredentialVault(await loadOrCreateSealKeyPair({ dataDir: freshDir() }));
    const ct = vault.seal(CREDS);
    expect(await vault.withOpened(ct, async (c) => c.api_key.length)).toBe(CREDS.api_key.length);
    await expect(
      vault.withOpened(ct, async () => {
        throw new Error("venue down");
      }),
    ).rejects.toThrow("venue down");
  });

  test("ciphertext differs per seal and does not contain the plaintext secrets", async () => {
    const vault = new CredentialVault(await loadOrCreateSealKeyPair({ dataDir: freshDir() }));
    const a = vault.seal(CREDS);
    const b = vault.seal(CREDS);
    expect(sodium.memcmp(a, b)).toBe(false);
    expect(a.length).toBe(b.length);
    const enc = new TextEncoder();
    for (const ct of [a, b]) {
      for (const secret of [CREDS.api_key, CREDS.api_secret, CREDS.passphrase!]) {
        expect(contains(ct, enc.encode(secret))).toBe(false);
        expect(contains(ct, enc.encode(secret.slice(0, 8)))).toBe(false);
      }
      const text = Buffer.from(ct).toString("latin1");
      expect(text.includes("api_secret")).toBe(false);
    }
    // Sanity check of the helper itself.
    expect(contains(enc.encode(`xx${CREDS.api_secret}yy`), enc.encode(CREDS.api_secret))).toBe(true);
  });

  test("a different key pair cannot open, and the error is generic", async () => {
    const v1 = new CredentialVault(await loadOrCreateSealKeyPair({ dataDir: freshDir() }));
    const v2 = new CredentialVault(await loadOrCreateSealKeyPair({ dataDir: freshDir() }));
    const ct = v1.seal(CREDS);
    let called = false;
    const err = await v2
      .withOpened(ct, async () => {
        called = true;
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(called).toBe(false);
    expect(err).toBeInstanceOf(VaultError);
    const msg = String((err as Error).message);
    for (const secret of [CREDS.api_key, CREDS.api_secret, CREDS.passphrase!]) expect(msg).not.toContain(secret);

    // Tampering is detected too.
    const tampered = ct.slice();
    tampered[tampered.length - 1] ^= 1;
    await expect(v1.withOpened(tampered, async () => 1)).rejects.toBeInstanceOf(VaultError);
    await expect(v1.withOpened(new Uint8Array(10), async () => 1)).rejects.toBeInstanceOf(VaultError);
  });

  test("the plaintext buffer is zeroed after withOpened, on success and on failure", async () => {
    const vault = new CredentialVault(await loadOrCreateSealKeyPair({ dataDir: freshDir() }));
    const ct = vault.seal(CREDS);

    const captured: Uint8Array[] = [];
    // The plaintext comes from crypto_box_open_easy_afternm (the box's precomputed key, kept per box).
    const original = sodium.crypto_box_open_easy_afternm;
    const openSpy = spyOn(sodium, "crypto_box_open_easy_afternm").mockImplementation(((...args: unknown[]) => {
      const out = (original as (...a: unknown[]) => Uint8Array)(...args);
      captured.push(out);
      return out;
    }) as typeof sodium.crypto_box_open_easy_afternm);
    const wipeSpy = spyOn(sodium, "memzero");
    try {
      let seenDuringCall = "";
      await vault.withOpened(ct, async () => {
        // During the call the buffer holds the real plaintext.
        seenDuringCall = new TextDecoder().decode(captured[0]);
      });
      expect(seenDuringCall).toContain(CREDS.api_secret);
      expect(captured).toHaveLength(1);
      expect(captured[0].length).toBeGreaterThan(0);
      expect(captured[0].every((b) => b === 0)).toBe(true);
      expect(wipeSpy).toHaveBeenCalledWith(captured[0]);

      await expect(
        vault.withOpened(ct, async () => {
          expect(captured[1].every((b) => b === 0)).toBe(false);
          throw new Error("venue rejected");
        }),
      ).rejects.toThrow("venue rejected");
      expect(captured).toHaveLength(2);
      expect(captured[1].every((b) => b === 0)).toBe(true);
    } finally {
      openSpy.mockRestore();
      wipeSpy.mockRestore();
    }
  });

  test("seal wipes its own plaintext buffer", async () => {
    const vault = new CredentialVault(await loadOrCreateSealKeyPair({ dataDir: freshDir() }));
    const wiped: Uint8Array[] = [];
    const original = sodium.memzero;
    const wipeSpy = spyOn(sodium, "memzero").mockImplementation((b: Uint8Array) => {
      wiped.push(b);
      original(b);
    });
    try {
      vault.seal(CREDS);
      expect(wiped).toHaveLength(1);
      expect(wiped[0].length).toBeGreaterThan(CREDS.api_secret.length);
      expect(wiped[0].every((b) => b === 0)).toBe(true);
    } finally {
      wipeSpy.mockRestore();
    }
  });

  test("seal rejects malformed credentials without echoing them", () => {
    const kp = sodium.crypto_box_keypair();
    const vault = new CredentialVault({ publicKey: kp.publicKey, secretKey: kp.privateKey });
    expect(() => vault.seal({ api_key: "", api_secret: "s3cr3t-value" })).toThrow(VaultError);
    expect(() => vault.seal({ api_key: "k", api_secret: 5 as unknown as string })).toThrow(VaultError);
    let err: unknown = null;
    try {
      vault.seal({ api_key: "visible-key", api_secret: "" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(VaultError);
    expect((err as Error).message).not.toContain("visible-key");
  });

  test("keyHint masks all but the last 4 characters", () => {
    expect(keyHint("0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3abcd")).toBe("…abcd");
    const kp = sodium.crypto_box_keypair();
    expect(new CredentialVault({ publicKey: kp.publicKey, secretKey: kp.privateKey }).keyHint("xxxxxxxxwxyz")).toBe(
      "…wxyz",
    );
    expect(keyHint("short")).toBe("…");
    expect(keyHint("")).toBe("…");
  });
});

describe("loadOrCreateSealKeyPair", () => {
  test("generates a 0600 key file in a 0700 directory and reloads it identically", async () => {
    const dataDir = freshDir();
    const first = await loadOrCreateSealKeyPair({ dataDir });
    expect(first.source).toBe("generated");
    expect(first.publicKey.length).toBe(32);
    expect(first.secretKey.length).toBe(32);
    const path = join(dataDir, "seal-key.json");
    expect(first.path).toBe(path);

    if (process.platform !== "win32") {
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    }
    const doc = JSON.parse(await readFile(path, "utf8"));
    expect(Object.keys(doc).sort()).toEqual(["public_key", "secret_key"]);
    expect(Buffer.from(doc.public_key, "base64").equals(Buffer.from(first.publicKey))).toBe(true);
    expect(Buffer.from(doc.secret_key, "base64").equals(Buffer.from(first.secretKey))).toBe(true);

    const second = await loadOrCreateSealKeyPair({ dataDir });
    expect(second.source).toBe("file");
    expect(second.warnings).toEqual([]);
    expect(sodium.memcmp(second.publicKey, first.publicKey)).toBe(true);
    expect(sodium.memcmp(second.secretKey, first.secretKey)).toBe(true);

    // Ciphertext sealed before a restart opens after it.
    const ct = new CredentialVault(first).seal(CREDS);
    expect(await new CredentialVault(second).withOpened(ct, async (c) => c)).toEqual(CREDS);
  });

  test("concurrent first starts agree on one key", async () => {
    const dataDir = freshDir();
    const pairs = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateSealKeyPair({ dataDir })));
    expect(pairs.filter((p) => p.source === "generated").length).toBeLessThanOrEqual(1);
    for (const p of pairs) expect(sodium.memcmp(p.publicKey, pairs[0].publicKey)).toBe(true);
    const onDisk = await loadOrCreateSealKeyPair({ dataDir });
    expect(sodium.memcmp(onDisk.secretKey, pairs[0].secretKey)).toBe(true);
  });

  test("SEAL_SECRET_KEY derives the same public key", async () => {
    const generated = await loadOrCreateSealKeyPair({ dataDir: freshDir() });
    const b64 = Buffer.from(generated.secretKey).toString("base64");
    const fromConfig = await loadOrCreateSealKeyPair({ dataDir: freshDir(), secretKeyB64: b64 });
    expect(fromConfig.source).toBe("config");
    expect(sodium.memcmp(fromConfig.publicKey, generated.publicKey)).toBe(true);
    expect(sodium.memcmp(fromConfig.secretKey, generated.secretKey)).toBe(true);

    // URL-safe, unpadded base64 works too.
    const urlSafe = Buffer.from(generated.secretKey).toString("base64url");
    const fromUrlSafe = await loadOrCreateSealKeyPair({ dataDir: freshDir(), secretKeyB64: urlSafe });
    expect(sodium.memcmp(fromUrlSafe.publicKey, generated.publicKey)).toBe(true);

    // The configured key wins over files and nothing is written.
    const dataDir = freshDir();
    await loadOrCreateSealKeyPair({ dataDir, secretKeyB64: b64 });
    expect(await stat(join(dataDir, "seal-key.json")).catch(() => null)).toBeNull();
  });

  test("a bad SEAL_SECRET_KEY is a clear error without key material", async () => {
    const short = Buffer.alloc(16, 7).toString("base64");
    const err = await loadOrCreateSealKeyPair({ dataDir: freshDir(), secretKeyB64: short }).catch((e) => e);
    expect(err).toBeInstanceOf(SealKeyError);
    expect(err.message).toContain("SEAL_SECRET_KEY");
    expect(err.message).toContain("32 bytes");
    expect(err.message).not.toContain(short);

    const junk = "not base64 at all!!";
    const err2 = await loadOrCreateSealKeyPair({ dataDir: freshDir(), secretKeyB64: junk }).catch((e) => e);
    expect(err2).toBeInstanceOf(SealKeyError);
    expect(err2.message).not.toContain(junk);
  });

  test("SEAL_KEY_FILE is read, and a missing one is an error rather than a new key", async () => {
    const generated = await loadOrCreateSealKeyPair({ dataDir: freshDir() });
    const keyFile = join(root, `custom-${++n}.json`);
    await writeFile(keyFile, JSON.stringify({ secret_key: Buffer.from(generated.secretKey).toString("base64") }), {
      mode: 0o600,
    });
    const loaded = await loadOrCreateSealKeyPair({ dataDir: freshDir(), keyFile });
    expect(loaded.source).toBe("file");
    expect(sodium.memcmp(loaded.publicKey, generated.publicKey)).toBe(true);

    const missing = join(root, "nope", "seal.json");
    const err = await loadOrCreateSealKeyPair({ dataDir: freshDir(), keyFile: missing }).catch((e) => e);
    expect(err).toBeInstanceOf(SealKeyError);
    expect(err.message).toContain("SEAL_KEY_FILE");
    expect(err.message).toContain("does not exist");
    expect(await stat(missing).catch(() => null)).toBeNull();
  });

  test("a key file readable by others loads with a warning", async () => {
    if (process.platform === "win32") return;
    const dataDir = freshDir();
    await loadOrCreateSealKeyPair({ dataDir });
    await chmod(join(dataDir, "seal-key.json"), 0o644);
    const loaded = await loadOrCreateSealKeyPair({ dataDir });
    expect(loaded.warnings.length).toBe(1);
    expect(loaded.warnings[0]).toContain("0600");
  });

  test("bad key files give clear errors that contain no key material", async () => {
    const good = await loadOrCreateSealKeyPair({ dataDir: freshDir() });
    const other = await loadOrCreateSealKeyPair({ dataDir: freshDir() });
    const sk = Buffer.from(good.secretKey).toString("base64");
    const pk = Buffer.from(good.publicKey).toString("base64");
    const otherPk = Buffer.from(other.publicKey).toString("base64");
    const cases: Array<[string, string]> = [
      [`{"public_key":"${pk}","secret_key":"${sk}"`, "not valid JSON"], // truncated JSON
      [`["${sk}"]`, "JSON object"],
      [`{"public_key":"${pk}"}`, `"secret_key"`],
      [`{"public_key":"${pk}","secret_key":"${sk.slice(0, 20)}"}`, "32 bytes"],
      [`{"public_key":"${pk}","secret_key":"${sk}!!"}`, "base64"],
      [`{"public_key":"${otherPk}","secret_key":"${sk}"}`, "does not belong"],
      [`{"public_key":"${pk}","secret_key":12345}`, "base64 string"],
    ];
    for (const [body, expected] of cases) {
      const dataDir = freshDir();
      await mkdir(dataDir, { recursive: true, mode: 0o700 });
      await writeFile(join(dataDir, "seal-key.json"), body, { mode: 0o600 });
      const err = await loadOrCreateSealKeyPair({ dataDir }).catch((e) => e);
      expect(err).toBeInstanceOf(SealKeyError);
      expect(err.message).toContain(expected);
      expect(err.message).toContain(join(dataDir, "seal-key.json"));
      for (const material of [sk, pk, otherPk, sk.slice(0, 20), "12345"]) expect(err.message).not.toContain(material);
    }
  });
});
