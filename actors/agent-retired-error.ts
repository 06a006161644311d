/** An intent sent to an agent whose rows were removed (an unpaid x402 request's agent): the agent no longer exists. */
export class AgentRetiredError extends Error {
  override name = "AgentRetiredError";
  constructor(readonly agentId: string) {
    super(`agent ${agentId} was removed`);
  }
}
