/**
 * The MCP server's configuration: the one place it reads the environment. BROKER_PRIVATE_KEY is
 * turned into a viem account at once and removed from the environment, so it is never logged, never
 * inherited by a child process, and never sent anywhere: it is only used to sign in this process.
 */
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import type { VenueCredentials } from "@agent-brokerage/sdk";

export interface McpConfig {
  brokerUrl: string;
  apiKey: string;
  /** Default agent of every tool; optional when the API key is scoped to one agent. */
  agentId: string | undefined;
  /** Local signer for sign_and_submit, from BROKER_PRIVATE_KEY. */
  signer: PrivateKeyAccount | undefined;
  /** The signer's own venue L2 credentials, for venue_auth (BROKER_VENUE_API_KEY, _SECRET, _PASSPHRASE). */
  venueCredentials: VenueCredentials | undefined;
  /** Streamable HTTP: bearer token required from clients (MCP_HTTP_TOKEN), when set. */
  httpToken: string | undefined;
}

export class ConfigError extends Error {}

export function loadMcpConfig(env: Record<string, string | undefined> = process.env): McpConfig {
  const brokerUrl = env.BROKER_URL?.trim();
  if (!brokerUrl) throw new ConfigError("BROKER_URL is required (the brokerage service's base address, e.g. http://localhost:8080)");
  try {
    new URL(brokerUrl);
  } catch {
    throw new ConfigError("BROKER_URL is not a valid URL");
  }
  const apiKey = env.BROKER_API_KEY?.trim();
  if (!apiKey) throw new ConfigError("BROKER_API_KEY is required (an API key of your organization, bk_...)");
  const agentId = env.BROKER_AGENT_ID?.trim() || undefined;
  if (agentId && !/^agt_[A-Za-z0-9_-]+$/.test(agentId)) throw new ConfigError("BROKER_AGENT_ID must be an agent id (agt_...)");

  let signer: PrivateKeyAccount | undefined;
  const pk = env.BROKER_PRIVATE_KEY?.trim();
  if (pk) {
    const hex = (pk.startsWith("0x") ? pk : `0x${pk}`) as `0x${string}`;
    if (!/^0x[0-9a-fA-F]{64}$/.test(hex)) throw new ConfigError("BROKER_PRIVATE_KEY must be 32 bytes of hex");
    try {
      signer = privateKeyToAccount(hex);
    } catch {
      throw new ConfigError("BROKER_PRIVATE_KEY is not a valid secp256k1 private key");
    }
    if (env === process.env) delete process.env.BROKER_PRIVATE_KEY;
  }

  let venueCredentials: VenueCredentials | undefined;
  const vk = env.BROKER_VENUE_API_KEY?.trim();
  if (vk) {
    const secret = env.BROKER_VENUE_API_SECRET?.trim();
    const passphrase = env.BROKER_VENUE_PASSPHRASE?.trim();
    if (!secret || !passphrase) throw new ConfigError("BROKER_VENUE_API_KEY needs BROKER_VENUE_API_SECRET and BROKER_VENUE_PASSPHRASE");
    venueCredentials = { api_key: vk, api_secret: secret, passphrase };
    if (env === process.env) delete process.env.BROKER_VENUE_API_SECRET;
  }
  return { brokerUrl, apiKey, agentId, signer, venueCredentials, httpToken: env.MCP_HTTP_TOKEN?.trim() || undefined };
}
