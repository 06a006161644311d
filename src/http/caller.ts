/** Who is calling: an organization's API key (maybe scoped to one agent), or an x402 payer. */
export type Caller =
  | { kind: "api_key"; orgId: string; keyId: string; agentId: string | null }
  | { kind: "x402"; orgId: string; payer: string; agentId: string | null };
