/** Scoped venue credentials of a delegated agent (docs/api.md#credentials): opened only for one call, never logged or stored in clear. */
export interface VenueCredentials {
  api_key: string;
  api_secret: string;
  passphrase?: string;
  /** The address the credentials belong to (the agent's signer); not part of what the vault seals. */
  address: string;
}

/** The part of the credentials the vault seals. */
export type SealedCredentialFields = Omit<VenueCredentials, "address">;
