import { Elysia, t } from "elysia";
import type { authPlugin } from "../../http/auth.ts";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "../../errors/errors.ts";
import { problemResponses } from "../../errors/problem-model.ts";
import { AgentIdParam } from "../agents/model.ts";
import { type FirmKillService, ORG_KEY_NEEDED } from "./firm-kill-service.ts";
import { CancelAllBody, CancelAllResult, FirmKillBody, FirmKillResult, FirmResumeBody, FirmResumeResult, FirmState, KillBody, KillResult } from "./model.ts";
import type { KillService } from "./service.ts";

export function killModule(deps: { kill: KillService; auth: ReturnType<typeof authPlugin> }) {
  return new Elysia({ name: "kill", prefix: "/v1/agents" }).use(deps.auth).post(
    "/:id/kill",
    async ({ caller, params, body }) => {
      // The body is optional: none, an empty body (both parsed to null by the body-limit parser), or
      // {reason}. An object is checked against KillBody by the schema; anything else is refused here.
      if (body !== null && body !== undefined && (typeof body !== "object" || Array.isArray(body))) {
        throw new InvalidRequestError("the body must be a JSON object {reason?, venue_auth?}, or empty", [{ path: "/", message: "must be an object" }]);
      }
      const reason = body?.reason ?? null;
      return deps.kill.kill(caller, params.id, reason, body?.venue_auth ? { venueAuth: body.venue_auth } : {});
    },
    {
      auth: true,
      params: AgentIdParam,
      body: t.Optional(KillBody),
      response: { 200: KillResult },
      detail: {
        summary: "Kill switch: trip the breaker, cancel every open order within the deadline, delete delegated credentials",
        description:
          "The body is optional: none, an empty body, or `{reason?, venue_auth?}`. `venue_auth`: for a payload-mode agent at a venue that cancels only with the owner's own L2 keys, the headers over `DELETE /cancel-all`; the kill then cancels the account's orders in one call (docs/api.md#post-v1agentsidkill).",
        tags: ["agents"],
        // Documented by hand: an optional body is not required, and the example is the one to show.
        requestBody: { required: false, content: { "application/json": { schema: KillBody, example: { reason: "strategy misbehaving" } } } },
        responses: problemResponses(new NotFoundError("agent")),
      },
    },
  );
}

// ---------------------------------------------------------------- cancel-all (no kill)

export function cancelAllModule(deps: { kill: KillService; auth: ReturnType<typeof authPlugin> }) {
  return new Elysia({ name: "cancel-all", prefix: "/v1/agents" }).use(deps.auth).post(
    "/:id/cancel-all",
    async ({ caller, params, body }) => {
      if (body !== null && body !== undefined && (typeof body !== "object" || Array.isArray(body))) {
        throw new InvalidRequestError("the body must be a JSON object {market_id?, venue_auth?, venue_auths?}, or empty", [{ path: "/", message: "must be an object" }]);
      }
      if (body?.market_id !== undefined && body.venue_auth) {
        throw new InvalidRequestError("venue_auth (over DELETE /cancel-all) cancels every order of the account: with market_id, send venue_auths per order", [
          { path: "/venue_auth", message: "not allowed with market_id" },
        ]);
      }
      const marketId = body?.market_id === undefined ? undefined : canonicalTokenId(body.market_id);
      return deps.kill.cancelAll(caller, params.id, { marketId, venueAuth: body?.venue_auth, venueAuths: body?.venue_auths });
    },
    {
      auth: true,
      params: AgentIdParam,
      body: t.Optional(CancelAllBody),
      response: { 200: CancelAllResult },
      detail: {
        summary: "Cancel the agent's open orders (all, or one market's) without halting it",
        description:
          "The kill's fan-out (same deadline, retries and failed-and-flagged rule) over the agent's active orders, but the breaker stays closed and the credentials stay: the agent keeps trading (docs/api.md#post-v1agentsidcancel-all).",
        tags: ["agents"],
        requestBody: { required: false, content: { "application/json": { schema: CancelAllBody, example: {} } } },
        responses: problemResponses(new NotFoundError("agent")),
      },
    },
  );
}

/** A decimal token id without leading zeros (as orders store it); refuses one above 2^256 − 1. */
function canonicalTokenId(id: string): string {
  const n = BigInt(id);
  if (n >= 1n << 256n) throw new InvalidRequestError("market_id is not a uint256", [{ path: "/market_id", message: "must be at most 2^256 - 1" }]);
  return n.toString();
}

// ---------------------------------------------------------------- the firm-wide kill

export function firmKillModule(deps: { firmKill: FirmKillService; auth: ReturnType<typeof authPlugin> }) {
  const forbidden = new ForbiddenError(ORG_KEY_NEEDED);
  return new Elysia({ name: "firm-kill", prefix: "/v1" })
    .use(deps.auth)
    .post(
      "/kill",
      ({ caller, body }) => deps.firmKill.killAll(caller, body.org_id, body.reason ?? null, { venueAuths: body.venue_auths }),
      {
        auth: true,
        body: FirmKillBody,
        response: { 200: FirmKillResult },
        detail: {
          summary: "Firm-wide kill: kill every agent of the organization; new agents start halted until POST /v1/resume",
          tags: ["agents"],
          responses: problemResponses(forbidden),
        },
      },
    )
    .post("/resume", ({ caller, body }) => deps.firmKill.resumeAll(caller, body.org_id), {
      auth: true,
      body: FirmResumeBody,
      response: { 200: FirmResumeResult },
      detail: {
        summary: "Undo the firm-wide kill: resume the agents it halted and clear the organization's halt",
        tags: ["agents"],
        responses: problemResponses(forbidden),
      },
    })
    .get("/kill", ({ caller }) => deps.firmKill.firmState(caller), {
      auth: true,
      response: { 200: FirmState },
      detail: { summary: "Whether the organization is halted by the firm-wide kill", tags: ["agents"], responses: problemResponses(forbidden) },
    });
}
