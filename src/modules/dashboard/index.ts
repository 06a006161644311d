/**
 * GET /dashboard: the operator's web page, served by the service itself (also from the compiled
 * binary). The page signs in with an API key kept in session storage and talks to the public REST
 * API only. Every file goes out with a strict Content-Security-Policy: scripts, styles and
 * connections from this origin only, no inline code, no framing.
 */
import { Elysia, t } from "elysia";
import { NotFoundError } from "../../errors/errors.ts";
import { ASSETS, type Asset, PAGE } from "./assets.ts";

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()",
  // Always revalidated, so a new service version never runs with an old page's scripts.
  "cache-control": "no-cache",
};

function serve(asset: Asset): Response {
  return new Response(asset.body, { headers: { ...SECURITY_HEADERS, "content-type": asset.type } });
}

export function dashboardModule() {
  return new Elysia({ name: "dashboard" })
    .get("/dashboard", () => serve(PAGE), { detail: { hide: true } })
    .get("/dashboard/", () => serve(PAGE), { detail: { hide: true } })
    .get(
      "/dashboard/*",
      ({ params }) => {
        const asset = ASSETS.get(params["*"]);
        if (!asset) throw new NotFoundError("file");
        return serve(asset);
      },
      { params: t.Object({ "*": t.String({ maxLength: 200 }) }), detail: { hide: true } },
    );
}
