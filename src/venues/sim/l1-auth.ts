/**
 * L1 authentication of the venue simulator, as Polymarket's CLOB answers it for the official client
 * (clob-client-v2 src/headers, src/signing/eip712.ts): headers POLY_ADDRESS, POLY_SIGNATURE,
 * POLY_TIMESTAMP, POLY_NONCE, where POLY_SIGNATURE is an EIP-712 signature by POLY_ADDRESS of
 *
 *   domain  {name: "ClobAuthDomain", version: "1", chainId}
 *   ClobAuth(address address, string timestamp, uint256 nonce, string message)
 *   message "This message attests that I control the given wallet"
 *
 * API credentials are derived deterministically from (address, nonce) and a per-simulator seed, so
 * `/auth/derive-api-key` answers the same key that `/auth/api-key` created.
 */
import { createHmac } from "node:crypto";
import { type Hex, recoverTypedDataAddress } from "viem";

export const CLOB_AUTH_MESSAGE = "This message attests that I control the given wallet";
/** How far POLY_TIMESTAMP may be from the simulator's clock, seconds. */
export const L1_TIMESTAMP_WINDOW_S = 600;

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const SIGNATURE_RE = /^0x[0-9a-fA-F]{130}$/;

export interface ApiCreds {
  apiKey: string;
  secret: string;
  passphrase: string;
}

/** The L1 caller's address and nonce, or a reason for refusing the headers. */
export async function verifyL1Headers(headers: Headers, chainId: number, nowS = Math.floor(Date.now() / 1000)): Promise<{ address: string; nonce: bigint } | string> {
  const address = headers.get("POLY_ADDRESS") ?? "";
  const signature = headers.get("POLY_SIGNATURE") ?? "";
  const timestamp = headers.get("POLY_TIMESTAMP") ?? "";
  const nonceText = headers.get("POLY_NONCE") ?? "0";
  if (!ADDRESS_RE.test(address) || !SIGNATURE_RE.test(signature) || !/^[0-9]{1,12}$/.test(timestamp) || !/^[0-9]{1,77}$/.test(nonceText)) {
    return "Invalid L1 Request headers";
  }
  if (Math.abs(nowS - Number(timestamp)) > L1_TIMESTAMP_WINDOW_S) return "Invalid L1 Request headers: timestamp out of range";
  const nonce = BigInt(nonceText);
  let recovered: string;
  try {
    recovered = await recoverTypedDataAddress({
      domain: { name: "ClobAuthDomain", version: "1", chainId },
      types: {
        ClobAuth: [
          { name: "address", type: "address" },
          { name: "timestamp", type: "string" },
          { name: "nonce", type: "uint256" },
          { name: "message", type: "string" },
        ],
      },
      primaryType: "ClobAuth",
      message: { address: address as Hex, timestamp, nonce, message: CLOB_AUTH_MESSAGE },
      signature: signature as Hex,
    });
  } catch {
    return "Invalid L1 Request headers: bad signature";
  }
  if (recovered.toLowerCase() !== address.toLowerCase()) return "Invalid L1 Request headers: signature is not by POLY_ADDRESS";
  return { address, nonce };
}

/** The API credentials of (address, nonce) under `seed`: a UUID key, a url-safe base64 secret, a hex passphrase. */
export function deriveApiCreds(seed: Uint8Array, address: string, nonce: bigint): ApiCreds {
  const part = (label: string) => createHmac("sha256", seed).update(`${label}:${address.toLowerCase()}:${nonce}`).digest();
  const k = part("key").toString("hex");
  return {
    apiKey: `${k.slice(0, 8)}-${k.slice(8, 12)}-4${k.slice(13, 16)}-a${k.slice(17, 20)}-${k.slice(20, 32)}`,
    secret: part("secret").toString("base64").replace(/\+/g, "-").replace(/\//g, "_"),
    passphrase: part("passphrase").toString("hex"),
  };
}
