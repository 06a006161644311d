/**
 * The one error base class of the service. Every error a client can see is a
 * ProblemError and is answered as RFC 9457 problem details. `message` is short
 * and safe to show; `extra` members are added to the problem body; `cause` is
 * kept for logs only and never serialized.
 */
/**
 * The problem `type` of a code: a URI reference to the code's section of the API reference, which
 * the service serves at `GET /docs/api` (docs/api.md, one heading per code), so it resolves against
 * the service that answered (docs/decisions.md, problem type URIs).
 */
export function problemType(code: string): string {
  return `/docs/api#${code}`;
}

export class ProblemError extends Error {
  override name = "ProblemError";
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    title: string,
    detail: string,
    options: { extra?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.code = code;
    this.title = title;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }

  toProblem(instance?: string): Record<string, unknown> {
    return {
      type: problemType(this.code),
      title: this.title,
      status: this.status,
      detail: this.message,
      code: this.code,
      ...(instance ? { instance } : {}),
      ...this.extra,
    };
  }
}
