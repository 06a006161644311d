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

export function riskRejection(failures: RiskFailure[], extra: Record<string, unknown>): CallToolResult {
  const text =
    `Risk check failed: ${failures.length} check(s) refused this intent. Change the intent to satisfy every one and try again:\n` + describeFailures(failures);
  return failed(text, { code: "risk_rejected", failures, ...extra });
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
  return "";
}
