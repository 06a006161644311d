import { ProblemError } from "./problem-error.ts";

/**
 * 503 `agent_busy`: the agent's actor already holds as many requests as its mailbox admits
 * (ACTOR_MAILBOX_MAX), or another instance holds the agent (`detail` says which). Retry after
 * `Retry-After` seconds.
 */
export class AgentBusyError extends ProblemError {
  constructor(retryAfterS = 1, detail = "the agent has too many requests in progress; nothing was done, retry later") {
    super(503, "agent_busy", "Agent busy", detail, {
      headers: { "retry-after": String(retryAfterS) },
    });
  }
}
