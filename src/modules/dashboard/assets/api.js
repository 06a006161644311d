// The public REST API, with the key from session storage in the X-API-Key header. Nothing else:
// the dashboard shows only what an API user can get.

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem ?? {};
  }
}

const STORAGE = "brokerage.api_key";
export const session = {
  get: () => sessionStorage.getItem(STORAGE),
  set: (key) => sessionStorage.setItem(STORAGE, key),
  clear: () => sessionStorage.removeItem(STORAGE),
};

/** Calls the API; `onUnauthorized` runs on a 401 (the key was revoked or is wrong). */
export function createApi({ onUnauthorized } = {}) {
  async function request(method, path, body, { key = session.get(), signal } = {}) {
    // Signed out (a refresh still under way when the key was cleared): nothing is sent without a key,
    // and it is not the server's 401 (onUnauthorized would tell a key that was never refused).
    if (!key) throw new ApiError(401, { title: "Signed out", detail: "signed out: no API key" });
    const headers = { accept: "application/json", "x-api-key": key };
    if (body !== undefined) headers["content-type"] = "application/json";
    // Every POST carries an Idempotency-Key, so a retried click can never act twice.
    if (method === "POST") headers["idempotency-key"] = crypto.randomUUID();
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal, cache: "no-store" });
    const text = await res.text();
    let parsed = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (!res.ok) {
      if (res.status === 401 && onUnauthorized) onUnauthorized();
      throw new ApiError(res.status, parsed);
    }
    return parsed;
  }
  const get = (path, opts) => request("GET", path, undefined, opts);
  const qs = (params) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
    const s = q.toString();
    return s ? `?${s}` : "";
  };
  return {
    request,
    agents: () => get("/v1/agents?limit=200"),
    exposure: (id) => get(`/v1/agents/${encodeURIComponent(id)}/exposure`),
    positions: (id) => get(`/v1/agents/${encodeURIComponent(id)}/positions`),
    kill: (id) => request("POST", `/v1/agents/${encodeURIComponent(id)}/kill`, { reason: "dashboard" }),
    resume: (id) => request("POST", `/v1/agents/${encodeURIComponent(id)}/resume`),
    cancelAll: (id) => request("POST", `/v1/agents/${encodeURIComponent(id)}/cancel-all`),
    firmState: () => get("/v1/kill"),
    killAll: (orgId) => request("POST", "/v1/kill", { org_id: orgId, reason: "dashboard: kill all" }),
    resumeAll: (orgId) => request("POST", "/v1/resume", { org_id: orgId }),
    patchLimits: (id, patch) => request("PATCH", `/v1/agents/${encodeURIComponent(id)}/limits`, patch),
    markets: () => get("/v1/markets?limit=200"),
    orders: (filter) => get(`/v1/orders${qs({ limit: 200, ...filter })}`),
    order: (id) => get(`/v1/orders/${encodeURIComponent(id)}`),
    approve: (id) => request("POST", `/v1/orders/${encodeURIComponent(id)}/approve`),
    reject: (id) => request("POST", `/v1/orders/${encodeURIComponent(id)}/reject`),
    rejections: () => get("/v1/risk/decisions?approved=false&limit=50"),
    summary: () => get("/v1/risk/summary?hours=24&days=7"),
    keys: () => get("/v1/api-keys?limit=200"),
    issueKey: (body) => request("POST", "/v1/api-keys", body),
    revokeKey: (id) => request("DELETE", `/v1/api-keys/${encodeURIComponent(id)}`),
  };
}
