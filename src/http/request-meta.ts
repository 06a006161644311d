/** Per-request facts the outer layer learns and the routes read (request id, start time). */
export interface RequestMeta {
  id: string;
  startedAt: number;
  /** Set when no route matched the path (metrics then use one label for all such paths). */
  unmatched?: boolean;
  /**
   * With an Idempotency-Key: the id body (after the prefix) the request's new resource takes
   * (`ord_<reservedId>`, `agt_<reservedId>`), recorded with the key before the request runs, so
   * a retry after a crash can tell whether it was created (idempotency-recovery.ts).
   */
  reservedId?: string;
}

const metas = new WeakMap<Request, RequestMeta>();

export function setRequestMeta(request: Request, meta: RequestMeta): void {
  metas.set(request, meta);
}

export function requestMeta(request: Request): RequestMeta | undefined {
  return metas.get(request);
}
