/**
 * One HTTP call to the service with the SDK's guarantees: an `Idempotency-Key` on every POST, kept
 * across retries, so a retried POST replays the first answer instead of placing a second order;
 * network failures, 503 and 429 retried with exponential backoff and jitter (Retry-After honoured);
 * error answers turned into typed errors.
 */
import { errorFromResponse, NetworkError, retryAfterSeconds, type RequestInfo } from "./errors.js";

export interface RetryOptions {
  /** Attempts after the first (default 4). */
  retries?: number;
  /** First backoff, milliseconds (default 200); doubles each time, with full jitter. */
  baseDelayMs?: number;
  /** Longest single wait, milliseconds (default 5000). */
  maxDelayMs?: number;
}

export interface TransportOptions {
  baseUrl: string;
  apiKey?: string;
  /** fetch to use: the global one by default; pass the x402 one from `@agent-brokerage/sdk/x402` to pay. */
  fetch?: typeof globalThis.fetch;
  /** Per-attempt timeout, milliseconds (default 30000). */
  timeoutMs?: number;
  retry?: RetryOptions;
  headers?: Record<string, string>;
  userAgent?: string;
}

export interface CallOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Idempotency key for a POST; a fresh UUID when not given. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Answer the raw text instead of parsed JSON. */
  text?: boolean;
}

const RETRY_STATUSES = new Set([429, 503]);

export class Transport {
  readonly baseUrl: string;
  private readonly fetchImpl: typeof globalThis.fetch;

  constructor(readonly options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  url(path: string, query?: CallOptions["query"]): string {
    const u = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  /** Headers every request carries (API key, user agent, extra headers). */
  baseHeaders(): Record<string, string> {
    const h: Record<string, string> = { accept: "application/json", ...(this.options.headers ?? {}) };
    if (this.options.apiKey) h["x-api-key"] = this.options.apiKey;
    if (this.options.userAgent) h["user-agent"] = this.options.userAgent;
    return h;
  }

  /**
   * The agent a request is about, for the X-Agent-Id header (a proxy in front of several service
   * instances routes on it, so each agent's requests reach one instance): the path's
   * /v1/agents/{id}, the body's or query's agent_id, else the agent of an order this client saw.
   */
  agentOf(path: string, o: CallOptions): string | null {
    const inPath = /^\/v1\/agents\/([^/?]+)/.exec(path);
    if (inPath) return decodeURIComponent(inPath[1]);
    const body = o.body as { agent_id?: unknown; order_id?: unknown } | undefined;
    if (body && typeof body.agent_id === "string") return body.agent_id;
    if (typeof o.query?.agent_id === "string") return o.query.agent_id;
    const order = /^\/v1\/orders\/([^/?]+)/.exec(path)?.[1] ?? (body && typeof body.order_id === "string" ? body.order_id : null);
    return order ? (this.orderAgents.get(decodeURIComponent(order)) ?? null) : null;
  }

  /** Order id → agent id, of the orders this client saw (bounded: the oldest are forgotten). */
  private readonly orderAgents = new Map<string, string>();

  private remember(answer: unknown): void {
    const a = answer as { order_id?: unknown; id?: unknown; agent_id?: unknown; order?: { id?: unknown; agent_id?: unknown } } | null;
    if (!a || typeof a !== "object") return;
    const id = typeof a.order_id === "string" ? a.order_id : typeof a.id === "string" && a.id.startsWith("ord_") ? a.id : typeof a.order?.id === "string" ? a.order.id : null;
    const agent = typeof a.agent_id === "string" ? a.agent_id : typeof a.order?.agent_id === "string" ? a.order.agent_id : null;
    if (!id || !agent) return;
    this.orderAgents.set(id, agent);
    if (this.orderAgents.size > 10_000) this.orderAgents.delete(this.orderAgents.keys().next().value as string);
  }

  async call<T>(method: string, path: string, o: CallOptions = {}): Promise<T> {
    const headers: Record<string, string> = { ...this.baseHeaders(), ...(o.headers ?? {}) };
    const agentId = this.agentOf(path, o);
    if (agentId && !headers["x-agent-id"]) headers["x-agent-id"] = agentId;
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    if (body !== undefined) headers["content-type"] = "application/json";
    const info: RequestInfo = { method, path, attempts: 0 };
    if (method === "POST") {
      info.idempotencyKey = o.idempotencyKey ?? crypto.randomUUID();
      headers["idempotency-key"] = info.idempotencyKey;
    }
    const retries = this.options.retry?.retries ?? 4;
    const url = this.url(path, o.query);
    for (;;) {
      info.attempts++;
      let res: Response;
      try {
        const signal = anySignal(o.signal, AbortSignal.timeout(this.options.timeoutMs ?? 30_000));
        res = await this.fetchImpl(url, { method, headers, body, signal });
      } catch (err) {
        if (o.signal?.aborted) throw err;
        if (info.attempts > retries) throw new NetworkError(`${method} ${path} failed after ${info.attempts} attempt(s): ${describe(err)}`, info, err);
        await sleep(this.backoff(info.attempts, null), o.signal);
        continue;
      }
      const text = await res.text().catch(() => null);
      if (text === null) {
        // The answer was cut off: as good as no answer.
        if (info.attempts > retries) throw new NetworkError(`${method} ${path}: the answer was cut off`, info, null);
        await sleep(this.backoff(info.attempts, null), o.signal);
        continue;
      }
      if (res.ok) {
        if (o.text) return text as T;
        const answer = (text ? JSON.parse(text) : undefined) as T;
        this.remember(answer);
        return answer;
      }
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: described from the status
      }
      if ((RETRY_STATUSES.has(res.status) || this.stillInProgress(res.status, parsed, info)) && info.attempts <= retries) {
        await sleep(this.backoff(info.attempts, retryAfterSeconds(res.headers)), o.signal);
        continue;
      }
      throw errorFromResponse(res.status, parsed, res.headers, info);
    }
  }

  /** Streaming GET (events): no timeout, no retries here; the caller reconnects. */
  async stream(path: string, o: { query?: CallOptions["query"]; headers?: Record<string, string>; signal?: AbortSignal }): Promise<Response> {
    const info: RequestInfo = { method: "GET", path, attempts: 1 };
    const headers: Record<string, string> = { ...this.baseHeaders(), accept: "text/event-stream", ...(o.headers ?? {}) };
    const agentId = this.agentOf(path, { query: o.query });
    if (agentId && !headers["x-agent-id"]) headers["x-agent-id"] = agentId;
    let res: Response;
    try {
      res = await this.fetchImpl(this.url(path, o.query), { method: "GET", headers, signal: o.signal });
    } catch (err) {
      if (o.signal?.aborted) throw err;
      throw new NetworkError(`GET ${path} failed: ${describe(err)}`, info, err);
    }
    if (!res.ok) {
      const text = await res.text().catch(() => "");
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON
      }
      throw errorFromResponse(res.status, parsed, res.headers, info);
    }
    return res;
  }

  /**
   * A retried POST (same key, same body) answered idempotency_conflict: the first attempt, whose answer
   * was lost, is still running at the service. Waiting and retrying gets its answer replayed. (On a
   * first attempt the conflict is real: the key was used with another body.)
   */
  private stillInProgress(status: number, body: unknown, info: RequestInfo): boolean {
    return status === 409 && info.attempts > 1 && info.idempotencyKey !== undefined && (body as { code?: unknown } | null)?.code === "idempotency_conflict";
  }

  backoff(attempt: number, retryAfterS: number | null): number {
    const max = this.options.retry?.maxDelayMs ?? 5_000;
    if (retryAfterS !== null) return Math.min(retryAfterS * 1000, Math.max(max, 60_000));
    const base = this.options.retry?.baseDelayMs ?? 200;
    return Math.random() * Math.min(max, base * 2 ** (attempt - 1));
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function anySignal(a: AbortSignal | undefined, b: AbortSignal): AbortSignal {
  return a ? AbortSignal.any([a, b]) : b;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
