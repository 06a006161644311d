/**
 * A fault-injecting HTTP proxy for the SDK suites: it forwards to the service and, as planned per
 * path, drops the answer after the service has handled the request, cuts the connection while it is
 * still working, or answers 503 itself.
 */
import { createServer, type Server } from "node:http";

export interface FaultProxy {
  url: string;
  /**
   * Faults for the next requests to a path: "drop" forwards and destroys the socket once the service
   * has answered; "cut" forwards and destroys it at once, while the service is still working; "503"
   * answers 503 without forwarding; "pass" forwards and answers as usual.
   */
  plan: Map<string, Fault[]>;
  seen: { method: string; path: string; key: string | undefined; forwarded: boolean; status?: number }[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"]);

export type Fault = "pass" | "drop" | "cut" | "503";

export function startProxy(upstream: string): Promise<FaultProxy> {
  const plan = new Map<string, Fault[]>();
  const seen: FaultProxy["seen"] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? "/").split("?")[0]!;
    const fault = plan.get(path)?.shift();
    const key = req.headers["idempotency-key"] as string | undefined;
    const record: FaultProxy["seen"][number] = { method: req.method!, path, key, forwarded: fault !== "503" };
    seen.push(record);
    if (fault === "503") {
      res.writeHead(503, { "content-type": "application/problem+json", "retry-after": "0" });
      res.end(JSON.stringify({ type: "about:blank", title: "Service unavailable", status: 503, code: "unavailable", detail: "proxy fault" }));
      return;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "connection") headers[k] = v;
    const pending = fetch(upstream + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    if (fault === "cut") {
      req.socket.destroy();
      await pending.then((a) => a.arrayBuffer()).catch(() => undefined);
      return;
    }
    const answer = await pending;
    const body = Buffer.from(await answer.arrayBuffer());
    record.status = answer.status;
    if (fault === "drop") {
      // The service has done the work; the caller never hears of it.
      req.socket.destroy();
      return;
    }
    // The service's headers go through (x402 clients read PAYMENT-REQUIRED and PAYMENT-RESPONSE), bar hop-by-hop ones.
    const out: Record<string, string> = { "content-type": "application/json" };
    for (const [k, v] of answer.headers) if (!HOP_BY_HOP.has(k)) out[k] = v;
    res.writeHead(answer.status, out);
    res.end(body);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      resolve({ url: `http://127.0.0.1:${port}`, plan, seen, close: () => new Promise<void>((r) => server.close(() => r())) });
    }),
  );
}
