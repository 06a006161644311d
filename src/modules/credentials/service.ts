/**
 * Delegated-mode credentials (docs/api.md#credentials).
 *
 * Submission, in this order, so that nothing is stored and nothing leaves the process unless every
 * earlier step passed:
 *   1. the agent is one the caller may act on (404 other organizations and unknown ids, 403 a key
 *      scoped to another agent);
 *   2. the scope rules (400 forbidden_scope, then 400 invalid_scope);
 *   3. the agent is not halted by its kill switch (409 agent_halted), so a halted agent's
 *      credentials are never sent to the venue;
 *   4. the venue confirms the credentials with an authenticated read, under a timeout (400
 *      invalid_credentials on a refusal, 503 venue_unavailable when it cannot be reached);
 *   5. the credentials are sealed to the service's public key and handed to the agent's actor, which
 *      stores the ciphertext and moves to delegated mode, unless a kill halted it meanwhile (409).
 *
 * The plaintext is never logged, returned, stored or put in an error: logs carry the agent id, the
 * scopes and the key hint only. `withAgentCredentials` is the one way back to the plaintext, for
 * the duration of one venue call.
 */
import type { BreakerState } from "../../../actors/ports.ts";
import type { CredentialVault } from "../../crypto/credential-vault.ts";
import { AgentHaltedError, InvalidCredentialsError, InvalidScopeError, ForbiddenScopeError } from "../../errors/errors.ts";
import { VenueUnavailableProblem } from "../../errors/venue-unavailable.ts";
import type { Caller } from "../../http/caller.ts";
import type { Logger } from "../../observability/logger.ts";
import type { Venue, VenueCredentials } from "../../venues/venue.ts";
import type { AgentModel } from "../agents/model.ts";
import { type AgentService, toAgentModel } from "../agents/service.ts";
import { ALLOWED_SCOPES, type CredentialScope, type CredentialsBody, FORBIDDEN_SCOPES } from "./model.ts";
import { HALT_REASONS } from "../../domain/order-status.ts";

export interface CredentialsServiceDeps {
  agents: AgentService;
  venue: Venue;
  vault: CredentialVault;
  logger: Logger;
  /** Bound on the venue's confirmation of submitted credentials, milliseconds. */
  confirmTimeoutMs: number;
  /**
   * Reads of the sealed credentials gathered into the order writes' statements (OrderRepository.readSealed);
   * without it each read is a statement of its own (AgentStore.sealedCredentials).
   */
  sealedReads?: { read(agentId: string): Promise<Uint8Array | null> };
}

const ALLOWED: ReadonlySet<string> = new Set(ALLOWED_SCOPES);
const FORBIDDEN: ReadonlySet<string> = new Set(FORBIDDEN_SCOPES);

/** `Withdraw`, ` transfer `, `balance-modify` are the forbidden scopes too, whatever their spelling. */
const normalizeScope = (s: string) => s.trim().toLowerCase().replace(/[\s-]+/g, "_");

/**
 * Applies the scope rules and answers the scopes in canonical order. Throws 400 forbidden_scope
 * (listing the forbidden values as given) when any forbidden scope is present, even next to allowed
 * ones or unknown ones; otherwise 400 invalid_scope for an empty list, unknown values (listed), or
 * duplicates (listed).
 */
export function validateScopes(scopes: readonly string[]): CredentialScope[] {
  const forbidden = [...new Set(scopes.filter((s) => FORBIDDEN.has(normalizeScope(s))))];
  if (forbidden.length) throw new ForbiddenScopeError(forbidden);
  if (scopes.length === 0) throw new InvalidScopeError("scopes must not be empty: give order:place, order:cancel or both");
  const unknown = [...new Set(scopes.filter((s) => !ALLOWED.has(s)))];
  if (unknown.length) {
    throw new InvalidScopeError(`unknown scopes: ${unknown.map((s) => JSON.stringify(s)).join(", ")}; only order:place and order:cancel are accepted`, unknown);
  }
  const duplicated = [...new Set(scopes.filter((s, i) => scopes.indexOf(s) !== i))];
  if (duplicated.length) throw new InvalidScopeError(`duplicate scopes: ${duplicated.join(", ")}`, duplicated);
  return ALLOWED_SCOPES.filter((s) => scopes.includes(s));
}

/** Halted by the kill switch or by a missed heartbeat (which kills the same way). */
const haltedByKill = (b: BreakerState) => b.state === "tripped" && b.reason !== null && HALT_REASONS.has(b.reason);

export class CredentialsService {
  constructor(private readonly deps: CredentialsServiceDeps) {}

  /** POST /v1/agents/{id}/creds: confirms, seals and stores the credentials; 200 Agent in delegated mode. */
  async submit(caller: Caller, agentId: string, body: CredentialsBody): Promise<AgentModel> {
    const { agents, vault, logger } = this.deps;
    const actor = await agents.actorFor(caller, agentId);
    const scopes = validateScopes(body.scopes);
    const before = actor.view();
    if (haltedByKill(before.breaker)) throw new AgentHaltedError(agentId);

    const plain: VenueCredentials = { api_key: body.api_key, api_secret: body.api_secret, address: before.profile.signerAddress };
    if (body.passphrase !== undefined) plain.passphrase = body.passphrase;
    await this.confirm(plain, agentId);

    const sealed = vault.seal({ api_key: plain.api_key, api_secret: plain.api_secret, ...(plain.passphrase !== undefined ? { passphrase: plain.passphrase } : {}) });
    const info = { scopes: [...scopes], keyHint: vault.keyHint(body.api_key), createdAt: new Date() };
    // The actor refuses while halted by a kill: a kill may have started while the venue answered.
    const result = await actor.setCredentials(sealed, info);
    if (!result.ok) throw new AgentHaltedError(agentId);
    logger.info("credentials stored", { agent_id: agentId, scopes: info.scopes, key_hint: info.keyHint });
    return toAgentModel(result.view);
  }

  /**
   * DELETE /v1/agents/{id}/creds: deletes the ciphertext and returns the agent to payload mode.
   * Idempotent by choice: an agent without credentials answers 200 with the agent (already in
   * payload mode) rather than 404, so a client (or a retry after a lost answer) can always make
   * sure the credentials are gone with one call, and 404 keeps meaning "no such agent". Allowed
   * while the agent is halted: deleting credentials is always safe.
   */
  async remove(caller: Caller, agentId: string): Promise<AgentModel> {
    const actor = await this.deps.agents.actorFor(caller, agentId);
    const had = actor.view().credentials !== null || actor.view().profile.mode === "delegated";
    const view = await actor.clearCredentials();
    if (had) this.deps.logger.info("credentials deleted", { agent_id: agentId });
    return toAgentModel(view);
  }

  /**
   * Runs `fn` with the agent's decrypted credentials (and its signer address), for one venue call:
   * the sealed bytes are read from the database (now, or by readSealed just before: `sealedRead`) and
   * opened only for the duration of `fn`; the
   * plaintext buffer is wiped when `fn` settles (see CredentialVault for what a JS runtime cannot
   * wipe), and the fields of the object handed to `fn` are blanked, so `fn` must not keep it.
   * Answers null, without calling `fn`, when the agent has no stored credentials (or does not exist).
   * Throws VaultError when the ciphertext cannot be opened with this service's key.
   */
  async withAgentCredentials<T>(agentId: string, fn: (creds: VenueCredentials) => Promise<T>, sealedRead?: Promise<Uint8Array | null>): Promise<T | null> {
    const { agents, vault } = this.deps;
    // The address without taking the agent's lease (a hand-over under way would wait for the caller).
    const [sealed, address] = await Promise.all([sealedRead ?? this.readSealed(agentId), agents.signerAddressOf(agentId)]);
    if (!sealed || !address) return null;
    return vault.withOpened(sealed, async (opened) => {
      const creds: VenueCredentials = { api_key: opened.api_key, api_secret: opened.api_secret, address };
      if (opened.passphrase !== undefined) creds.passphrase = opened.passphrase;
      try {
        return await fn(creds);
      } finally {
        for (const c of [creds, opened] as { api_key: string; api_secret: string; passphrase?: string }[]) {
          c.api_key = "";
          c.api_secret = "";
          if (c.passphrase !== undefined) c.passphrase = "";
        }
      }
    });
  }

  /**
   * The agent's sealed credentials as stored now (null: none), for one withAgentCredentials call about
   * to be made: a delegated placement starts the read while its order is being written, so the venue
   * call, which must wait for that write, does not wait for the read as well.
   */
  readSealed(agentId: string): Promise<Uint8Array | null> {
    return this.deps.sealedReads ? this.deps.sealedReads.read(agentId) : this.deps.agents.store.sealedCredentials(agentId);
  }

  /**
   * Runs `fn` exactly once: with the agent's opened credentials when it has
   * some, else with none (the paper venue, or a payload-mode agent).
   */
  async withAgentCredentialsOrNone<T>(agentId: string, fn: (creds: VenueCredentials | undefined) => Promise<T>): Promise<T> {
    let ran = false;
    const result = await this.withAgentCredentials(agentId, (creds) => {
      ran = true;
      return fn(creds);
    });
    return ran ? (result as T) : fn(undefined);
  }

  /** Asks the venue to confirm the credentials, bounded by the timeout. */
  private async confirm(creds: VenueCredentials, agentId: string): Promise<void> {
    const { venue, logger, confirmTimeoutMs } = this.deps;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new Error(`no answer within ${confirmTimeoutMs} ms`));
      }, confirmTimeoutMs);
    });
    let accepted: boolean;
    try {
      // The race also bounds a venue that ignores the abort signal.
      accepted = await Promise.race([venue.confirmCredentials(creds, { signal: controller.signal }), timedOut]);
    } catch (error) {
      // Whatever went wrong, the venue did not confirm: answer 503 and log what (never the credentials:
      // venue errors name the method, path and status only, and the logger scrubs them as well).
      logger.warn("venue could not confirm credentials", {
        agent_id: agentId,
        venue: venue.name,
        error: error instanceof Error ? { name: error.name, message: error.message } : String(error),
      });
      throw new VenueUnavailableProblem("the venue could not be reached to confirm the credentials; nothing was stored, try again later");
    } finally {
      clearTimeout(timer);
    }
    if (accepted !== true) {
      logger.info("venue refused credentials", { agent_id: agentId, venue: venue.name });
      throw new InvalidCredentialsError();
    }
  }
}
