/** Per-request facts the outer layer learns and the routes read (request id, start time). */
export interface RequestMeta {
  id: string;
  startedAt: number;
  /** Set when no route matched the path (metrics then use one label for all such paths). */
  unmatched?: boolean;
}

const metas = new WeakMap<Request, RequestMeta>();

export function setRequestMeta(request: Request, meta: RequestMeta): void {
  metas.set(request, meta);
}

export function requestMeta(request: Request): RequestMeta | undefined {
  return metas.get(request);
}
