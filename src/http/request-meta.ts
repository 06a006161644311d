/** Per-request facts the HTTP plugins learn and share (request id, start time, raw body, idempotency finisher). */
export interface RequestMeta {
  id: string;
  startedAt: number;
  /** Set when no route matched the path (metrics then use one label for all such paths). */
  unmatched?: boolean;
  /** The body as read by the body-limit parser (the idempotency hash needs the exact bytes). */
  rawBody?: string;
  /** The body was declared JSON but did not parse. */
  invalidJson?: boolean;
  /** Set by the idempotency plugin once it claimed a key: stores (or releases) the final answer. */
  finish?: (response: Response) => Promise<Response>;
  /**
   * Set when the request was let through only to be answered from its Idempotency-Key record (x402:
   * a payment whose nonce is used, on a replay of the request it paid for): the idempotency plugin
   * throws this error instead of running the request when there is nothing to replay.
   */
  replayOnly?: Error;
  /** Set by the access log: records the answer's status (the error handler calls it for problems). */
  answered?: (status: number, route: string | undefined) => void;
  recorded?: boolean;
}

const metas = new WeakMap<Request, RequestMeta>();

export function setRequestMeta(request: Request, meta: RequestMeta): void {
  metas.set(request, meta);
}

export function requestMeta(request: Request): RequestMeta | undefined {
  return metas.get(request);
}
