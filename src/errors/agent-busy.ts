import { ProblemError } from "./problem-error.ts";

/**
 * 503 `agent_busy`: the agent's actor already holds as many requests as its mailbox admits
 * (ACTOR_MAILBOX_MAX). Nothing was done; retry after `Retry-After` seconds.
 */
export class AgentBusyError extends ProblemError {
  constructor(retryAfterS = 1) {
    super(503, "agent_busy", "Agent busy", "the agent has too many requests in progress; nothing was done, retry later", {
      headers: { "retry-after": String(retryAfterS) },
    });
  }
}
