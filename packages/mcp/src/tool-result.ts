/**
 * Tool answers: structured content with a readable text copy; service errors and risk rejections as
 * `isError: true` results a model can act on, never a thrown error that could end the session.
 * An error result carries no structuredContent (clients validate it against the tool's output
 * schema, which describes success): its details travel as a second text block of JSON, {"error": {...}}.
 */
import { BrokerError, NetworkError, RiskRejectedError, type RiskFailure } from "@agent-brokerage/sdk";
import type { CallToolResult } from "@modelcontextprotocol/server";

export function ok(structured: Record<string, unknown>, summary?: string): CallToolResult {
  const text = summary ? `${summary}\n${JSON.stringify(structured, null, 2)}` : JSON.stringify(structured, null, 2);
  return { content: [{ type: "text", text }], structuredContent: structured };
}

/** One line per failed check: what failed, the limit and the value seen. */
export function describeFailures(failures: RiskFailure[]): string {
  return failures.map((f, i) => `${i + 1}. ${f.check}/${f.code}: ${f.message} (limit ${f.limit ?? "n/a"}, actual ${f.actual ?? "n/a"})`).join("\n");
}

/** A success whose text is a short summary only (the structured data travels once, in structuredContent). */
export function okCompact(structured: Record<string, unknown>, text: string): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: structured };
}

/**
 * What a model can do about each failure code (docs/api.md#risk-checks): change the intent, wait, pick
 * another market, or nothing at all because a person must act. `person: true` marks the last kind.
 */
export const FAILURE_HINTS: Record<string, { hint: string; person?: boolean }> = {
  breaker_tripped: {
    hint: "The agent's breaker is tripped (see get_agent: breaker.reason). After a kill, a heartbeat miss or a manual trip a person must resume the agent; after venue errors it closes by itself after the cool-down. Do not retry until then.",
    person: true,
  },
  order_rate_exceeded: { hint: "Too many intents in the last minute: wait a minute before placing another." },
  open_orders_exceeded: { hint: "Too many open orders: cancel some (cancel_order, cancel_all) or wait for fills before placing more." },
  duplicate_order: { hint: "The same intent was just placed: check list_orders before placing it again; wait out the duplicate window if you really want a second one." },
  market_not_found: { hint: "No such market: pick a market_id from list_markets." },
  market_closed: { hint: "The market is closed: choose another market (list_markets lists tradable ones)." },
  market_not_accepting_orders: { hint: "The market does not accept orders now: choose another market." },
  market_ends_soon: { hint: "The market ends too soon for this agent's limits: choose another market." },
  market_denied: { hint: "This market is on the agent's deny list: choose another market (a person sets the list)." },
  category_denied: { hint: "This market's category is not allowed for the agent: choose a market of another category (a person sets the lists)." },
  order_too_small: { hint: "Raise size_usdc to at least the limit." },
  order_too_large: { hint: "Lower size_usdc to at most the limit." },
  daily_volume_exceeded: { hint: "The daily volume is used up: lower size_usdc to what remains (see get_agent daily_volume) or wait for the next UTC day." },
  concentration_exceeded: { hint: "Too much exposure in this market: lower size_usdc, or trade another market." },
  no_edge: { hint: "With this probability the trade has no edge at this price: change the price or your probability estimate, or do not trade." },
  kelly_cap_exceeded: { hint: "Lower size_usdc to at most the Kelly limit (or pass probability, if you have an estimate, to get the Kelly cap instead of the 2 % fallback)." },
  price_out_of_bounds: { hint: "The price must be strictly between 0 and 1." },
  price_off_tick: { hint: "Round the price to a multiple of the market's tick_size (get_market)." },
  price_far_from_mid: { hint: "Move the price closer to the market's mid (get_market; within price_band)." },
  no_reference_price: { hint: "The market has no mid price to compare with: choose another market or try later." },
  slippage_exceeded: { hint: "The price crosses too far into the book: move it closer to the best price (get_book)." },
  depth_share_exceeded: { hint: "The order would take too large a share of the book's depth: lower size_usdc (get_book shows the depth)." },
  book_stale: { hint: "The order book is stale: try again shortly." },
  book_unavailable: { hint: "The order book could not be read: try again shortly." },
  check_error: { hint: "A check failed internally: try again shortly; if it persists a person must look at the service." },
};

export function riskRejection(failures: RiskFailure[], extra: Record<string, unknown>): CallToolResult {
  const needsPerson = failures.some((f) => FAILURE_HINTS[f.code]?.person);
  const lines = failures.map((f, i) => {
    const base = `${i + 1}. ${f.check}/${f.code}: ${f.message} (limit ${f.limit ?? "n/a"}, actual ${f.actual ?? "n/a"})`;
    const h = FAILURE_HINTS[f.code]?.hint;
    return h ? `${base}\n   What to do: ${h}` : base;
  });
  const head = needsPerson
    ? `Risk check failed: ${failures.length} check(s) refused this intent. A person must act before this agent can trade again; changing the intent will not help:`
    : `Risk check failed: ${failures.length} check(s) refused this intent. What to do for each:`;
  return failed(`${head}\n${lines.join("\n")}`, { code: "risk_rejected", failures, needs_person: needsPerson, ...extra });
}

export function errorResult(err: unknown): CallToolResult {
  if (err instanceof RiskRejectedError) {
    return riskRejection(err.failures, { status: 422, decision_id: err.decisionId, checks: err.checks });
  }
  if (err instanceof BrokerError) {
    const { type: _type, title: _title, ...rest } = err.problem;
    const text = `The brokerage refused the request: ${err.status} ${err.code}: ${err.detail ?? err.title}` + hint(err);
    return failed(text, { ...rest, code: err.code, status: err.status });
  }
  if (err instanceof NetworkError) {
    return errorText("network_error", `The brokerage could not be reached (${err.message}). Nothing is known to have changed; check the order list before retrying a placement.`);
  }
  return errorText("tool_error", err instanceof Error ? err.message : String(err));
}

export function errorText(code: string, message: string): CallToolResult {
  return failed(message, { code, message });
}

function failed(text: string, error: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: "text", text }, { type: "text", text: JSON.stringify({ error }) }] };
}

function hint(err: BrokerError): string {
  const errors = err.problem.errors as { path: string; message: string }[] | undefined;
  if (errors?.length) return `\n${errors.map((e) => `- ${e.path || "(body)"}: ${e.message}`).join("\n")}`;
  if (err.code === "invalid_state" && err.problem.order_status) return ` (the order is ${err.problem.order_status})`;
  if (err.code === "venue_rejected" && err.problem.venue_error) return ` (venue: ${err.problem.venue_error})`;
  const next: Record<string, string> = {
    agent_halted: "The agent is halted (kill switch or missed heartbeat): a person must resume it; do not retry.",
    forbidden: "This API key may not do this: a person of the organization must.",
    unauthenticated: "The server's API key is missing or revoked: a person must configure BROKER_API_KEY.",
    order_expired: "The order expired: place a new intent if you still want the trade.",
    rate_limited: "Too many requests: wait a few seconds and retry.",
    venue_timeout: "The venue did not answer in time: the order's outcome is unknown; read it with get_order before placing anything again.",
    unavailable: "The service or venue is unavailable: retry in a few seconds.",
    venue_unavailable: "The venue is unavailable: retry in a few seconds.",
  };
  return next[err.code] ? ` ${next[err.code]}` : "";
}
